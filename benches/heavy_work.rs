//! Latencies of light requests (`/healthz` and duels of a small experiment) beside three
//! concurrent heavy requests on a 10,000-ranker experiment, on a server with two async workers as
//! on a 2-core machine: `cargo bench --bench heavy_work`.

#[path = "../tests/helpers/mod.rs"]
#[allow(dead_code)]
mod helpers;

use helpers::heavy_load::{large_experiment, latencies_beside, p99};
use helpers::http_server::spawn_app;
use std::sync::Arc;

/// Figures for 10,000 rankers: reads of a `uniform` experiment and duels of a `merge_dts` one
/// (a 10,000-ranker `dts` is over the default memory budget,
/// see `tests/operations/memory_budget.rs`).
#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let app = Arc::new(spawn_app().await);
    let uniform = large_experiment(&app, 10_000, "uniform").await;
    let merge_dts = large_experiment(&app, 10_000, "merge_dts").await;
    for (what, path) in [
        (
            "GET of a 10,000-ranker uniform experiment",
            format!("GET /v1/experiments/{uniform}"),
        ),
        (
            "duels of a 10,000-ranker merge_dts experiment",
            format!("POST /v1/experiments/{merge_dts}/duels"),
        ),
    ] {
        let (lat, heavy_done) = latencies_beside(app.clone(), path.leak(), 400).await;
        let mut sorted = lat.clone();
        sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "beside 3 concurrent {what} ({heavy_done} done): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            sorted[sorted.len() / 2],
            p99(lat),
            sorted[sorted.len() - 1]
        );
    }
}
