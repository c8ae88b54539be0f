//! Raw outcome rows are pruned once their duel's attribution window and the retention have
//! passed, in the background and under load, while every count the API shows stays exact.

use crate::helpers::eventually::eventually;
use crate::helpers::http_server::{error_code, spawn_app, win_total};
use joust::engine::{Retention, spawn_retention};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};

const WINDOW_SECS: u64 = 1;
const PASS_INTERVAL: Duration = Duration::from_millis(200);

/// What the API should show for a ranker: (wins, losses, ties).
type Tally = HashMap<String, (u64, u64, u64)>;

fn count(tally: &mut Tally, pair: &[String; 2], winner: &str) {
    assert_ne!(pair[0], pair[1], "uniform duels two different rankers");
    if winner == "tie" {
        for r in pair {
            tally.entry(r.clone()).or_default().2 += 1;
        }
    } else {
        let loser = if pair[0] == winner {
            &pair[1]
        } else {
            &pair[0]
        };
        tally.entry(winner.to_string()).or_default().0 += 1;
        tally.entry(loser.clone()).or_default().1 += 1;
    }
}

#[tokio::test]
async fn outcome_rows_stay_bounded_under_load_and_counts_stay_exact() {
    let app = spawn_app().await;
    let pool = joust::store::pool_options()
        .connect(&app.db_url)
        .await
        .unwrap();
    let (s, b) = app
        .post(
            "/v1/experiments",
            json!({"name": "retained", "rankers": ["a", "b", "c"], "policy": {"name": "uniform"},
                   "attribution_window_secs": WINDOW_SECS, "seed": 5}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    let id = b["id"].as_i64().unwrap();
    // A long-window experiment: its rows must outlive every pass.
    let long = app
        .create_experiment(&["x", "y"], json!({"name": "uniform"}))
        .await;
    let (long_token, long_pair) = app.duel(long).await;
    assert_eq!(
        app.outcome(&long_token, &long_pair[0]).await.0,
        StatusCode::OK
    );

    let pruner = spawn_retention(
        pool.clone(),
        Retention {
            keep: Duration::ZERO,
            batch: 50,
            interval: PASS_INTERVAL,
        },
    );
    // Steady load for 4 s: rounds of 20 duels posted as one batch, a fifth of them ties.
    let mut tally = Tally::new();
    let mut posted: Vec<(Instant, u64)> = Vec::new();
    let mut first_tokens: Vec<(String, String)> = Vec::new();
    let mut samples = Vec::new();
    let start = Instant::now();
    let mut round = 0;
    while start.elapsed() < Duration::from_secs(4) {
        let mut items = Vec::new();
        for i in 0..20 {
            let (token, pair) = app.duel(id).await;
            let winner = if (round + i) % 5 == 0 {
                "tie".to_string()
            } else {
                pair[(round + i) % 2].clone()
            };
            count(&mut tally, &pair, &winner);
            if round == 0 {
                first_tokens.push((token.clone(), winner.clone()));
            }
            items.push(json!({"duel_token": token, "winner": winner}));
        }
        let (s, b) = app
            .post("/v1/outcomes/batch", json!({ "outcomes": items }))
            .await;
        assert_eq!(
            (s, b["recorded"].as_u64()),
            (StatusCode::OK, Some(20)),
            "{b}"
        );
        posted.push((Instant::now(), 20));
        round += 1;
        let rows = joust::store::outcome_rows(&pool).await.unwrap() as u64;
        samples.push((Instant::now(), rows));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Bound: a row is due WINDOW_SECS after its duel was issued (issued just before it was
    // posted), and a pass every PASS_INTERVAL deletes everything due. So at any moment the table
    // holds at most the long-window row and the rows posted in the last
    // WINDOW_SECS + PASS_INTERVAL + the length of a pass; 2 s more than the window and the
    // interval leaves a pass (a few 50-row batches, each followed by a pause as long as it took)
    // ample time on a busy machine, while a pruner that did nothing would be over it after about
    // 3.2 s of this 4 s load.
    let horizon = Duration::from_secs(WINDOW_SECS) + PASS_INTERVAL + Duration::from_secs(2);
    let total: u64 = posted.iter().map(|(_, n)| n).sum();
    for (at, rows) in &samples {
        let recent: u64 = posted
            .iter()
            .filter(|(t, _)| *t <= *at && at.duration_since(*t) <= horizon)
            .map(|(_, n)| n)
            .sum();
        assert!(
            *rows <= recent + 1,
            "{rows} outcome rows {:?} into the load, but only {recent} were posted in the last {horizon:?}",
            at.duration_since(start)
        );
    }
    // Once the load stops, every due row goes and only the long-window one stays.
    let rows_left = || async { joust::store::outcome_rows(&pool).await.unwrap() };
    let what = format!("one row left after the load (of {total} posted)");
    let deadline = Duration::from_secs(WINDOW_SECS) + 23 * PASS_INTERVAL;
    eventually(&what, deadline, || async { rows_left().await == 1 }).await;
    pruner.abort();

    // Counts, the win matrix and per-ranker tallies are exactly what was posted.
    let e = app.experiment(id).await;
    let ties: u64 = tally.values().map(|t| t.2).sum::<u64>() / 2;
    assert_eq!(e["outcomes_applied"].as_u64(), Some(total - ties), "{e}");
    assert_eq!(e["ties_recorded"].as_u64(), Some(ties), "{e}");
    assert_eq!(win_total(&app, id).await, total - ties);
    for r in e["rankers"].as_array().unwrap() {
        let want = tally
            .get(r["name"].as_str().unwrap())
            .copied()
            .unwrap_or_default();
        let got = (
            r["wins"].as_u64().unwrap(),
            r["losses"].as_u64().unwrap(),
            r["ties"].as_u64().unwrap(),
        );
        assert_eq!(got, want, "{r}");
    }
    // A pruned duel cannot be counted again: its token has expired.
    for (token, winner) in first_tokens.iter().take(3) {
        let (s, b) = app.outcome(token, winner).await;
        assert_eq!((s, error_code(&b)), (StatusCode::GONE, "duel_expired"));
    }
    assert_eq!(
        app.experiment(id).await["outcomes_applied"],
        e["outcomes_applied"]
    );
    // The duel still inside its window kept its row: a retry is a duplicate, not a second count.
    let (s, b): (StatusCode, Value) = app.outcome(&long_token, &long_pair[0]).await;
    assert_eq!(
        (s, b["status"].as_str()),
        (StatusCode::OK, Some("duplicate")),
        "{b}"
    );
    assert_eq!(app.experiment(long).await["outcomes_applied"], 1);
    app.stop().await;
}
