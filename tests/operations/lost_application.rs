//! The owner writes each application of outcomes without waiting for its WAL flush, so a crash of
//! Postgres can lose the last applications: the stored state is then older than the cached one,
//! and every replica's cache must follow the database back. A read waiting meanwhile for this
//! replica's outcomes to be applied must go on waiting, not answer with the state the crash lost.
//!
//! Here the crash is played by hand: the state row, its win counts and its application log go
//! back to what they were before the last application, as Postgres leaves them when that
//! application's commit never reached the WAL on disk.

use std::time::Duration;

use serde_json::json;

use crate::helpers::eventually::eventually;
use crate::helpers::http_server::{TestApp, spawn_app_with, test_options};
use crate::helpers::postgres::fresh_database;

/// The two tests count the process's reloads of lost states: one at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Cached states this process found lost and reloaded (`joust_cache_reloads_total{why="lost"}`).
async fn lost_reloads(app: &TestApp) -> u64 {
    let text = app.get_response("/metrics").await.text().await.unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("joust_cache_reloads_total{why=\"lost\"} "))
        .map_or(0, |v| v.trim().parse().unwrap())
}

/// The state row's columns an application writes, as stored.
type StateRow = (i64, serde_json::Value, i64, i64, i64, uuid::Uuid);

async fn state_row(pool: &sqlx::PgPool, id: i64) -> StateRow {
    sqlx::query_as(
        "SELECT version, policy_state, outcomes_applied, ties_applied, applied_xid, applied_duel
         FROM experiment_state WHERE experiment_id = $1",
    )
    .bind(id)
    .fetch_one(pool)
    .await
    .unwrap()
}

/// Puts the experiment back to `before`, as a crash that lost every application after it does.
async fn lose_applications_after(pool: &sqlx::PgPool, id: i64, before: &StateRow) {
    let mut tx = pool.begin().await.unwrap();
    sqlx::query(
        "UPDATE experiment_state SET version = $2, policy_state = $3, outcomes_applied = $4,
                ties_applied = $5, applied_xid = $6, applied_duel = $7
         WHERE experiment_id = $1",
    )
    .bind(id)
    .bind(before.0)
    .bind(&before.1)
    .bind(before.2)
    .bind(before.3)
    .bind(before.4)
    .bind(before.5)
    .execute(&mut *tx)
    .await
    .unwrap();
    for table in ["win_counts", "tie_counts"] {
        sqlx::query(&format!("DELETE FROM {table} WHERE experiment_id = $1"))
            .bind(id)
            .execute(&mut *tx)
            .await
            .unwrap();
    }
    for table in ["outcome_applies", "history_points"] {
        sqlx::query(&format!(
            "DELETE FROM {table} WHERE experiment_id = $1 AND version > $2"
        ))
        .bind(id)
        .bind(before.0)
        .execute(&mut *tx)
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
}

/// A server on a fresh database, a pool on that database, and an experiment of three rankers.
async fn app_with_experiment() -> (TestApp, sqlx::PgPool, i64) {
    let db = fresh_database().await;
    let app = spawn_app_with(&db, "", test_options()).await;
    let pool = joust::store::pool_options().connect(&db).await.unwrap();
    let id = app
        .create_experiment(&["a", "b", "c"], json!({"name": "rucb"}))
        .await;
    (app, pool, id)
}

#[tokio::test]
async fn a_read_waiting_for_its_outcomes_does_not_answer_with_a_lost_state() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (app, pool, id) = app_with_experiment().await;
    let created = state_row(&pool, id).await;
    assert_eq!(created.2, 0);

    let (token, pair) = app.duel(id).await;
    app.outcome(&token, &pair[0]).await;
    assert_eq!(app.experiment(id).await["outcomes_applied"], 1);

    // A transaction older than the next outcome holds it back (its rows are not final while an
    // older transaction runs), so the read below has to wait.
    let mut older = pool.begin().await.unwrap();
    sqlx::query("SELECT pg_current_xact_id()")
        .execute(&mut *older)
        .await
        .unwrap();
    let (token, pair) = app.duel(id).await;
    let (status, _) = app.outcome(&token, &pair[0]).await;
    assert_eq!(status, reqwest::StatusCode::OK);
    let read = {
        let (client, url) = (
            app.client.clone(),
            format!("{}/v1/experiments/{id}", app.base),
        );
        tokio::spawn(async move {
            let r = client.get(url).send().await.unwrap();
            r.json::<serde_json::Value>().await.unwrap()
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;

    // The crash loses the first application while the read waits; the refresh loop (every
    // 200 ms) finds the database behind the cache.
    let reloads = lost_reloads(&app).await;
    lose_applications_after(&pool, id, &created).await;
    // The read waits up to 5 s: the refresh must come before that.
    eventually(
        "the refresh notices the loss",
        Duration::from_secs(3),
        || {
            let app = &app;
            async move { lost_reloads(app).await > reloads }
        },
    )
    .await;
    assert!(
        !read.is_finished(),
        "the read answered before its outcome was applied"
    );

    // The outcome becomes final: both outcomes are applied again, once each.
    older.commit().await.unwrap();
    let view = read.await.unwrap();
    assert_eq!(view["outcomes_applied"], 2, "{view}");
    // The owner writes what it applied by its next checkpoint.
    eventually("both outcomes written", Duration::from_secs(5), || async {
        state_row(&pool, id).await.2 == 2
    })
    .await;
    let wins: i64 = sqlx::query_scalar(
        "SELECT COALESCE(SUM(wins), 0)::BIGINT FROM win_counts WHERE experiment_id = $1",
    )
    .bind(id)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(wins, 2);
    app.stop().await;
}

/// After a crash lost an application, the owner's next one writes the same version number again
/// with other contents. Every replica's cache follows it, and the answers' tags change, so a
/// dashboard holding the lost contents is not told they are current.
#[tokio::test]
async fn the_same_version_written_again_is_followed_and_tagged_anew() {
    let _one = ONE_AT_A_TIME.lock().await;
    let (app, pool, id) = app_with_experiment().await;
    let (token, pair) = app.duel(id).await;
    app.outcome(&token, &pair[0]).await;
    let first = app.get_response(&format!("/v1/experiments/{id}")).await;
    let tag = first.headers()["etag"].to_str().unwrap().to_string();
    let view: serde_json::Value = first.json().await.unwrap();
    assert_eq!(view["outcomes_applied"], 1);
    let history_tag = app
        .get_response(&format!("/v1/experiments/{id}/history"))
        .await
        .headers()["etag"]
        .to_str()
        .unwrap()
        .to_string();

    // The cache holds what the database has: the refresh leaves it alone (five refreshes).
    let reloads = lost_reloads(&app).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(
        lost_reloads(&app).await,
        reloads,
        "a current state was reloaded"
    );

    // The version written again, by a write the cache has not seen: here two ties applied
    // instead of the outcome.
    let version = state_row(&pool, id).await.0;
    sqlx::query(
        "UPDATE experiment_state SET outcomes_applied = 0, ties_applied = 2,
                updated_at = updated_at + interval '1 millisecond'
         WHERE experiment_id = $1 AND version = $2",
    )
    .bind(id)
    .bind(version)
    .execute(&pool)
    .await
    .unwrap();

    eventually(
        "the cache follows the write",
        Duration::from_secs(5),
        || {
            let app = &app;
            async move { app.experiment(id).await["ties_recorded"] == 2 }
        },
    )
    .await;
    let again = app.get_response(&format!("/v1/experiments/{id}")).await;
    assert_eq!(again.status(), reqwest::StatusCode::OK);
    assert_ne!(again.headers()["etag"].to_str().unwrap(), tag);
    let view: serde_json::Value = again.json().await.unwrap();
    assert_eq!(view["version"], version, "{view}");
    assert_eq!(view["outcomes_applied"], 0, "{view}");
    // Followed once, then left alone.
    let followed = lost_reloads(&app).await;
    assert!(followed > reloads);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(
        lost_reloads(&app).await,
        followed,
        "a current state was reloaded"
    );
    // A client holding the old tag gets the new contents, not 304.
    let conditional = app
        .client
        .get(format!("{}/v1/experiments/{id}/history", app.base))
        .header("if-none-match", &history_tag)
        .send()
        .await
        .unwrap();
    assert_eq!(conditional.status(), reqwest::StatusCode::OK);
    app.stop().await;
}
