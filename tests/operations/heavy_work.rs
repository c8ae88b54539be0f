//! One large experiment must not stall the others: its selection, champion report and
//! serialisation run off the async workers, so while three heavy requests on a large experiment
//! run, `/healthz` and duels of a small experiment keep being served.
//!
//! The server runs on two async workers, as on a 2-core machine. Were the heavy work on them,
//! three concurrent heavy requests would occupy both and every other request would wait for one to
//! finish. Latencies depend on the machine, so they are not asserted here: `cargo bench --bench
//! heavy_work` measures them, with 10,000 rankers.

use crate::helpers::heavy_load::{large_experiment, latencies_beside};
use crate::helpers::http_server::spawn_app;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heavy_requests_on_a_large_experiment_leave_the_others_served() {
    let app = Arc::new(spawn_app().await);
    let big = large_experiment(&app, 3000, "uniform").await;
    let path: &'static str = format!("GET /v1/experiments/{big}").leak();
    let (light, heavy_done) = latencies_beside(app.clone(), path, 200).await;
    assert_eq!(light.len(), 200, "the light client was not served");
    assert!(heavy_done >= 3, "the heavy requests did not run");
}
