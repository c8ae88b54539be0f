//! Ownership moves when the owner dies: kill -9 of the replica that applies an experiment's
//! outcomes, while clients post to both replicas and retry what the dead one did not answer on
//! the other. The survivor takes the experiment over and applies every acknowledged outcome
//! exactly once: nothing lost, nothing counted twice.

use crate::helpers::eventually::eventually;
use crate::helpers::postgres;
use crate::helpers::process::{Server, get_json};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Sessions holding the experiment's ownership (joust's advisory lock on it). Advisory locks are
/// per database and `pg_locks` lists the whole server's: the test server holds other tests'
/// databases, whose experiments have the same ids, so only this database's locks count.
async fn owners(pool: &sqlx::PgPool, id: i64) -> Vec<i32> {
    sqlx::query_scalar(
        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND classid = x'6a6f7573'::int::oid AND objid = $1::int::oid AND objsubid = 2",
    )
    .bind(id as i32)
    .fetch_all(pool)
    .await
    .unwrap()
}

/// Posts `body`; `None` when the server did not answer (it is dead).
async fn try_post(
    client: &reqwest::Client,
    url: &str,
    body: &Value,
) -> Option<(StatusCode, Value)> {
    let r = client.post(url).json(body).send().await.ok()?;
    let s = r.status();
    Some((s, r.json().await.unwrap_or(Value::Null)))
}

#[tokio::test]
async fn ownership_moves_when_the_owner_is_killed_and_nothing_is_lost_or_counted_twice() {
    let db = postgres::fresh_database().await;
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut first = Server::start(&db);
    first.wait_ready(&client).await;
    let (s, b) = try_post(
        &client,
        &format!("{}/v1/experiments", first.base),
        &json!({"name": "owned", "rankers": ["a", "b", "c", "d", "e", "f"],
                "policy": {"name": "merge_dts", "params": {"batch_size": 4}}, "seed": 3}),
    )
    .await
    .unwrap();
    assert_eq!(s, StatusCode::CREATED, "{b}");
    let id = b["id"].as_i64().unwrap();

    // The only replica acknowledges the first outcomes, so it becomes the owner.
    let decided = Arc::new(AtomicU64::new(0));
    let ties = Arc::new(AtomicU64::new(0));
    let counted = (client.clone(), decided.clone(), ties.clone());
    let duel_and_outcome = move |duel_base: String, outcome_bases: Vec<String>, i: usize| {
        let (client, decided, ties) = (counted.0.clone(), counted.1.clone(), counted.2.clone());
        async move {
            let (s, d) = try_post(
                &client,
                &format!("{duel_base}/v1/experiments/{id}/duels"),
                &json!({}),
            )
            .await
            .expect("the duel replica is alive");
            assert_eq!(s, StatusCode::OK, "{d}");
            let winner = if i % 5 == 0 {
                "tie".to_string()
            } else {
                d["rankers"][i % 2].as_str().unwrap().to_string()
            };
            let body = json!({"duel_token": d["duel_token"], "winner": winner});
            // The first replica that answers acknowledges it; a retry of one that may have been
            // recorded before the answer was lost is `duplicate` or `recorded`, never both.
            for base in outcome_bases {
                let Some((s, r)) = try_post(&client, &format!("{base}/v1/outcomes"), &body).await
                else {
                    continue;
                };
                assert_eq!(s, StatusCode::OK, "{r}");
                if winner == "tie" {
                    ties.fetch_add(1, Ordering::SeqCst);
                } else {
                    decided.fetch_add(1, Ordering::SeqCst);
                }
                return;
            }
            panic!("no replica acknowledged the outcome");
        }
    };
    for i in 0..30 {
        duel_and_outcome(first.base.clone(), vec![first.base.clone()], i).await;
    }
    eventually(
        "the first replica owns the experiment",
        Duration::from_secs(5),
        || async { owners(&pool, id).await.len() == 1 },
    )
    .await;
    let first_owner = owners(&pool, id).await;

    let second = Server::start(&db);
    second.wait_ready(&client).await;
    // Four workers take duels from the survivor-to-be and post outcomes to both replicas
    // (alternating which is tried first), retrying on the other when one does not answer.
    let stop = Arc::new(AtomicBool::new(false));
    let mut workers = Vec::new();
    for w in 0..4usize {
        let (stop, run) = (stop.clone(), duel_and_outcome.clone());
        let (a, b) = (first.base.clone(), second.base.clone());
        workers.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                let order = if (i + w) % 2 == 0 {
                    vec![a.clone(), b.clone()]
                } else {
                    vec![b.clone(), a.clone()]
                };
                run(b.clone(), order, i).await;
                i += 1;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.await.unwrap();
    }

    // The survivor owns the experiment now, and applies exactly what was acknowledged.
    let (decided, ties) = (decided.load(Ordering::SeqCst), ties.load(Ordering::SeqCst));
    let view = |client: reqwest::Client, base: String| async move {
        get_json(&client, &format!("{base}/v1/experiments/{id}")).await
    };
    eventually(
        "every acknowledged outcome applied",
        Duration::from_secs(15),
        || {
            let view = view(client.clone(), second.base.clone());
            async move {
                let e = view.await;
                e["outcomes_applied"] == decided && e["ties_recorded"] == ties
            }
        },
    )
    .await;
    let now_owner = owners(&pool, id).await;
    assert_eq!(now_owner.len(), 1);
    assert_ne!(now_owner, first_owner, "ownership did not move");
    // Nothing more arrives later: no outcome is applied twice.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let e = view(client.clone(), second.base.clone()).await;
    assert_eq!(
        (e["outcomes_applied"].clone(), e["ties_recorded"].clone()),
        (json!(decided), json!(ties)),
        "{e}"
    );
    let m = get_json(
        &client,
        &format!("{}/v1/experiments/{id}/matrix", second.base),
    )
    .await;
    let wins: u64 = m["wins"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap().iter().map(|v| v.as_u64().unwrap()))
        .sum();
    assert_eq!(wins, decided);
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM outcomes WHERE experiment_id = $1")
        .bind(id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(rows as u64, decided + ties);
    pool.close().await;
}
