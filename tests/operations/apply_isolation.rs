//! One experiment's slow application never holds up another's acknowledgement: outcomes are
//! acknowledged once inserted, and each experiment is applied by its own task.
//!
//! A 10,000-ranker MergeDTS experiment's first outcome takes seconds to apply (its state and
//! its champion report grow with the square of the rankers). Small-experiment outcomes posted
//! meanwhile must be acknowledged, and applied, while that application is still running. The order of events is asserted, not
//! latencies (they depend on the machine); the test prints the small outcomes' acknowledgement
//! latencies, and docs/benchmarks.md gives them.

use crate::helpers::eventually::eventually;
use crate::helpers::heavy_load::large_experiment;
use crate::helpers::http_server::spawn_app;
use reqwest::StatusCode;
use serde_json::json;
use std::time::{Duration, Instant};

/// Outcomes applied to an experiment, as stored (not through a replica's cache).
async fn stored_applied(pool: &sqlx::PgPool, id: i64) -> i64 {
    sqlx::query_scalar(
        "SELECT outcomes_applied + ties_applied FROM experiment_state WHERE experiment_id = $1",
    )
    .bind(id)
    .fetch_one(pool)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_experiment_does_not_delay_another_experiments_outcomes() {
    let app = spawn_app().await;
    let pool = sqlx::PgPool::connect(&app.db_url).await.unwrap();
    let big = large_experiment(&app, 10_000, "merge_dts").await;
    let small = app
        .create_experiment(&["a", "b", "c"], json!({"name": "rucb"}))
        .await;
    let (token, pair) = app.duel(big).await;
    // The small experiment's duels first, so that only outcomes are posted beside the large
    // experiment's application.
    const SMALL: usize = 5;
    let mut duels = Vec::with_capacity(SMALL);
    for _ in 0..SMALL {
        duels.push(app.duel(small).await);
    }

    let started = Instant::now();
    let (s, b) = app.outcome(&token, &pair[0]).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let big_ack = started.elapsed();

    let mut latencies = Vec::with_capacity(SMALL);
    for (i, (token, pair)) in duels.iter().enumerate() {
        let sent = Instant::now();
        let (s, b) = app.outcome(token, &pair[i % 2]).await;
        latencies.push(sent.elapsed().as_secs_f64() * 1e3);
        assert_eq!(s, StatusCode::OK, "{b}");
    }
    // Every small outcome was acknowledged while the large one's first application still ran.
    assert_eq!(
        stored_applied(&pool, big).await,
        0,
        "the large experiment's first application finished before the small outcomes were \
         acknowledged: this run shows nothing (is applying 10,000 rankers that fast here?)"
    );
    let acked_all = started.elapsed();
    // Both are applied in the end, each exactly once.
    eventually(
        "the small outcomes applied",
        Duration::from_secs(120),
        || async { stored_applied(&pool, small).await == SMALL as i64 },
    )
    .await;
    let small_applied = started.elapsed();
    // ...and their application did not wait for the large one either.
    assert_eq!(
        stored_applied(&pool, big).await,
        0,
        "the small outcomes were applied only once the large experiment's application finished"
    );
    eventually(
        "the large experiment's outcome applied",
        Duration::from_secs(120),
        || async { stored_applied(&pool, big).await == 1 },
    )
    .await;
    let big_applied = started.elapsed();
    let view = app.experiment(small).await;
    assert_eq!(view["outcomes_applied"], SMALL, "{view}");
    latencies.sort_by(f64::total_cmp);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "large outcome acknowledged in {:.1} ms, applied after {:.0} ms; {SMALL} small outcomes \
         beside it acknowledged in median {:.1} ms, max {:.1} ms (all by {:.0} ms), applied by \
         {:.0} ms",
        ms(big_ack),
        ms(big_applied),
        latencies[SMALL / 2],
        latencies[SMALL - 1],
        ms(acked_all),
        ms(small_applied),
    );
    pool.close().await;
    app.stop().await;
}
