//! Heavy requests on a large experiment, three at a time, beside a light client: what the
//! heavy-work test checks and its benchmark measures.

use super::http_server::TestApp;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// An experiment of `k` rankers `r0`, `r1`, ... under `policy`.
pub async fn large_experiment(app: &TestApp, k: usize, policy: &str) -> i64 {
    let rankers: Vec<String> = (0..k).map(|i| format!("r{i}")).collect();
    let names: Vec<&str> = rankers.iter().map(String::as_str).collect();
    app.create_experiment(&names, json!({ "name": policy }))
        .await
}

/// Runs `heavy` (`"METHOD /path"`, three at a time, over and over) while a light client
/// alternates `/healthz` and a duel of a small experiment, `samples` times; returns the light
/// client's latencies (ms) and how many heavy requests completed meanwhile.
pub async fn latencies_beside(
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
    // The light client starts once the heavy requests are under way.
    super::eventually::eventually("a heavy request completes", Duration::from_secs(60), || {
        let done = done.clone();
        async move { done.load(Ordering::Relaxed) > 0 }
    })
    .await;
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
        // Pacing, as a real client's requests are spread out (not waiting for anything).
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.unwrap();
    }
    (out, done.load(Ordering::Relaxed))
}

/// The 99th percentile of `v`.
pub fn p99(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[(v.len() * 99).div_ceil(100) - 1]
}
