//! One large experiment must not stall the others: its selection, champion report and
//! serialisation run off the async workers, so while three heavy requests on a large experiment
//! run, `/healthz` and duels of a small experiment keep a p99 under 50 ms.
//!
//! The server runs on two async workers, as on a 2-core machine. Were the heavy work on them,
//! three concurrent heavy requests would occupy both and every other request would wait for one to
//! finish (hundreds of milliseconds here). The 10,000-ranker figures are measured by
//! `cargo test --release --test heavy_work -- --ignored --nocapture`.

mod common;

use common::{TestApp, spawn_app};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn p99(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[(v.len() * 99).div_ceil(100) - 1]
}

async fn large_experiment(app: &TestApp, k: usize, policy: &str) -> i64 {
    let rankers: Vec<String> = (0..k).map(|i| format!("r{i}")).collect();
    let names: Vec<&str> = rankers.iter().map(String::as_str).collect();
    app.create_experiment(&names, json!({ "name": policy }))
        .await
}

/// Runs `heavy` (three at a time, over and over) while a normal client alternates `/healthz` and
/// a duel of a small experiment; returns the normal client's latencies (ms) and how many heavy
/// requests completed.
async fn latencies_beside(
    app: Arc<TestApp>,
    heavy: &'static str,
    samples: usize,
) -> (Vec<f64>, usize) {
    let small = app
        .create_experiment(&["a", "b", "c"], json!({"name": "rucb"}))
        .await;
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..3 {
        let (app, stop, done) = (app.clone(), stop.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let (method, path) = heavy.split_once(' ').unwrap();
                let (s, b) = app
                    .send(
                        method.parse().unwrap(),
                        path,
                        (method == "POST").then(|| json!({})),
                    )
                    .await;
                assert!(s.is_success(), "{s} {b}");
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    // Let the heavy requests get going.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut out = Vec::with_capacity(samples);
    for i in 0..samples {
        let start = Instant::now();
        if i % 2 == 0 {
            let (s, _) = app.get("/healthz").await;
            assert!(s.is_success());
        } else {
            app.duel(small).await;
        }
        out.push(start.elapsed().as_secs_f64() * 1000.0);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.unwrap();
    }
    (out, done.load(Ordering::Relaxed))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heavy_requests_on_a_large_experiment_leave_the_others_fast() {
    let app = Arc::new(spawn_app().await);
    let big = large_experiment(&app, 3000, "uniform").await;
    let path: &'static str = format!("GET /v1/experiments/{big}").leak();
    let (lat, heavy_done) = latencies_beside(app.clone(), path, 200).await;
    let p99 = p99(lat);
    println!("p99 {p99:.1} ms beside {heavy_done} heavy requests");
    assert!(heavy_done >= 3, "the heavy requests did not run");
    assert!(p99 < 50.0, "p99 {p99:.1} ms beside heavy requests");
}

/// Figures for 10,000 rankers: reads of a `uniform` experiment and duels of a `merge_dts` one
/// (a 10,000-ranker `dts` is over the default memory budget, see `tests/memory_budget.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run with --ignored --nocapture"]
async fn figures_for_ten_thousand_rankers() {
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
