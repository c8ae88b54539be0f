//! `--apply-pause-ms`: an experiment's outcomes are applied at most once per pause, but a read
//! that waits for this replica's acknowledged outcomes does not wait for the pause, nor does the
//! write of what was applied (`--checkpoint-ms`).

use std::time::Duration;

use crate::helpers::eventually::eventually;
use crate::helpers::http_server::{spawn_app_with, test_options};
use crate::helpers::postgres::fresh_database;
use serde_json::json;

/// Outcomes applied to the experiment as stored, not as a replica's cache has them.
async fn stored_applied(pool: &sqlx::PgPool, id: i64) -> i64 {
    sqlx::query_scalar("SELECT outcomes_applied FROM experiment_state WHERE experiment_id = $1")
        .bind(id)
        .fetch_one(pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_read_ends_the_application_pause_and_others_wait_for_it() {
    let db = fresh_database().await;
    // Longer than a read waits (5 s): a read that waited for the pause would answer the old
    // count, so the counts below say which happened, with no timing in the assertions.
    let options = joust::engine::EngineOptions {
        apply_pause: Duration::from_secs(10),
        ..test_options()
    };
    let app = spawn_app_with(&db, "", options).await;
    let pool = joust::store::pool_options().connect(&db).await.unwrap();
    let id = app
        .create_experiment(&["a", "b"], json!({"name": "uniform"}))
        .await;
    for n in 1..=3 {
        let (token, pair) = app.duel(id).await;
        app.outcome(&token, &pair[0]).await;
        // Each outcome comes within the pause after the last application: the read applies it.
        let view = app.experiment(id).await;
        assert_eq!(view["outcomes_applied"], n, "{view}");
    }
    // Without a read, an outcome posted now waits for the pause that followed the last
    // application (10 s from just now); what was applied is written within the checkpoint
    // interval (250 ms), pause or not.
    let (token, pair) = app.duel(id).await;
    app.outcome(&token, &pair[0]).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(stored_applied(&pool, id).await, 3);
    let view = app.experiment(id).await;
    assert_eq!(view["outcomes_applied"], 4, "{view}");
    eventually(
        "the fourth outcome written",
        Duration::from_secs(3),
        || async { stored_applied(&pool, id).await == 4 },
    )
    .await;
    app.stop().await;
}
