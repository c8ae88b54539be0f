//! Checkpoints (`--checkpoint-ms`): the owner holds applications in memory and writes the state
//! at most once per interval. Its own reads see every outcome at once; the database catches up
//! within the interval; an administrative change, a graceful stop and a kill -9 of the owner in
//! the middle of an interval each leave every acknowledged outcome applied exactly once.

use crate::helpers::eventually::eventually;
use crate::helpers::postgres;
use crate::helpers::process::{Server, get_json, post_json};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

/// A replica on `db` that holds applications for `checkpoint_ms`.
async fn replica(db: &str, checkpoint_ms: u64, client: &reqwest::Client) -> Server {
    let ms = checkpoint_ms.to_string();
    let server = Server::start_with(&["--database-url", db, "--checkpoint-ms", &ms]);
    server.wait_ready(client).await;
    server
}

async fn create(client: &reqwest::Client, base: &str) -> i64 {
    let r = client
        .post(format!("{base}/v1/experiments"))
        .json(&json!({"name": "held", "rankers": ["a", "b", "c", "d"],
                      "policy": {"name": "merge_dts", "params": {"batch_size": 4}}, "seed": 5}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    r.json::<Value>().await.unwrap()["id"].as_i64().unwrap()
}

/// Asks `base` for `n` duels and posts each one's outcome there (every fifth a tie); returns
/// the decided outcomes and the ties acknowledged.
async fn duels_and_outcomes(client: &reqwest::Client, base: &str, id: i64, n: usize) -> (i64, i64) {
    let (mut decided, mut ties) = (0, 0);
    for i in 0..n {
        let duels = format!("{base}/v1/experiments/{id}/duels");
        let d: Value = post_json(client, &duels, &json!({}))
            .await
            .json()
            .await
            .unwrap();
        let winner = if i % 5 == 0 {
            ties += 1;
            "tie".to_string()
        } else {
            decided += 1;
            d["rankers"][i % 2].as_str().unwrap().to_string()
        };
        let r = client
            .post(format!("{base}/v1/outcomes"))
            .json(&json!({"duel_token": d["duel_token"], "winner": winner}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK);
    }
    (decided, ties)
}

/// What the database holds of the experiment: outcomes and ties applied, and the sum of its
/// win counts.
async fn stored(pool: &sqlx::PgPool, id: i64) -> (i64, i64, i64) {
    sqlx::query_as(
        "SELECT s.outcomes_applied, s.ties_applied,
                (SELECT COALESCE(sum(wins), 0)::bigint FROM win_counts WHERE experiment_id = $1)
         FROM experiment_state s WHERE s.experiment_id = $1",
    )
    .bind(id)
    .fetch_one(pool)
    .await
    .unwrap()
}

async fn applied(client: &reqwest::Client, base: &str, id: i64) -> (i64, i64) {
    let e = get_json(client, &format!("{base}/v1/experiments/{id}")).await;
    (
        e["outcomes_applied"].as_i64().unwrap(),
        e["ties_recorded"].as_i64().unwrap(),
    )
}

/// Two batches of outcomes posted to `base`, each read back at once there: the first one's
/// application is written (it carries the experiment's first history point), those of the
/// second are held. Returns the decided outcomes and ties of both.
async fn two_batches(
    client: &reqwest::Client,
    base: &str,
    id: i64,
    second_batch: usize,
) -> (i64, i64) {
    let first = duels_and_outcomes(client, base, id, 10).await;
    assert_eq!(applied(client, base, id).await, first);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let second = duels_and_outcomes(client, base, id, second_batch).await;
    let all = (first.0 + second.0, first.1 + second.1);
    assert_eq!(applied(client, base, id).await, all);
    all
}

/// Asserts that the database holds fewer outcomes than `all`: some are held.
async fn some_held(pool: &sqlx::PgPool, id: i64, all: (i64, i64)) {
    let (outcomes, ties, _) = stored(pool, id).await;
    assert!(
        outcomes + ties < all.0 + all.1,
        "held outcomes are not written before the interval: stored {outcomes} + {ties}"
    );
}

#[tokio::test]
async fn the_owner_reads_held_outcomes_at_once_and_writes_them_within_the_interval() {
    let db = postgres::fresh_database().await;
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let client = client();
    let server = replica(&db, 3_000, &client).await;
    let id = create(&client, &server.base).await;
    let all = two_batches(&client, &server.base, id, 10).await;
    some_held(&pool, id, all).await;
    eventually(
        "the held outcomes written",
        Duration::from_secs(10),
        || async { stored(&pool, id).await == (all.0, all.1, all.0) },
    )
    .await;
    // Every version written is logged, the held ones included: versions are consecutive.
    let (versions, first_v, last_v): (i64, i64, i64) = sqlx::query_as(
        "SELECT count(*), min(version), max(version) FROM applied_versions WHERE experiment_id = $1",
    )
    .bind(id)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(versions, last_v - first_v + 1);
    pool.close().await;
}

#[tokio::test]
async fn a_ranker_added_over_held_outcomes_leaves_each_counted_once() {
    let db = postgres::fresh_database().await;
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let client = client();
    let server = replica(&db, 5_000, &client).await;
    let id = create(&client, &server.base).await;
    let first = duels_and_outcomes(&client, &server.base, id, 15).await;
    assert_eq!(applied(&client, &server.base, id).await, first);
    let r = client
        .post(format!("{}/v1/experiments/{id}/rankers", server.base))
        .json(&json!({"name": "e"}))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    let e = get_json(&client, &format!("{}/v1/experiments/{id}", server.base)).await;
    assert_eq!(e["rankers"].as_array().unwrap().len(), 5, "{e}");
    let second = duels_and_outcomes(&client, &server.base, id, 15).await;
    let all = (first.0 + second.0, first.1 + second.1);
    assert_eq!(applied(&client, &server.base, id).await, all);
    eventually(
        "every outcome written once",
        Duration::from_secs(15),
        || async { stored(&pool, id).await == (all.0, all.1, all.0) },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(stored(&pool, id).await, (all.0, all.1, all.0));
    assert_eq!(applied(&client, &server.base, id).await, all);
    pool.close().await;
}

#[tokio::test]
async fn a_graceful_stop_writes_what_the_owner_holds() {
    let db = postgres::fresh_database().await;
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let client = client();
    let mut server = replica(&db, 10_000, &client).await;
    let id = create(&client, &server.base).await;
    let all = two_batches(&client, &server.base, id, 10).await;
    server.terminate();
    assert_eq!(stored(&pool, id).await, (all.0, all.1, all.0));
    pool.close().await;
}

#[tokio::test]
async fn a_kill_of_the_owner_during_an_interval_loses_nothing_and_counts_nothing_twice() {
    let db = postgres::fresh_database().await;
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let client = client();
    let mut owner = replica(&db, 10_000, &client).await;
    let survivor = replica(&db, 1_000, &client).await;
    let id = create(&client, &owner.base).await;
    let all = two_batches(&client, &owner.base, id, 20).await;
    some_held(&pool, id, all).await;
    owner.child.kill().unwrap();
    owner.child.wait().unwrap();
    let killed = Instant::now();
    eventually(
        "the survivor applies every acknowledged outcome",
        Duration::from_secs(15),
        || async { applied(&client, &survivor.base, id).await == all },
    )
    .await;
    eprintln!(
        "the survivor read every outcome {:?} after the owner was killed",
        killed.elapsed()
    );
    eventually(
        "the survivor writes them",
        Duration::from_secs(15),
        || async { stored(&pool, id).await == (all.0, all.1, all.0) },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(stored(&pool, id).await, (all.0, all.1, all.0));
    assert_eq!(applied(&client, &survivor.base, id).await, all);
    pool.close().await;
}
