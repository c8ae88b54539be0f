//! End to end: a simulated search backend drives a running joust over HTTP, and the champion
//! converges to the Condorcet winner of the users' preferences.

mod common;

use joust::sim::PrefMatrix;
use rand::{Rng, SeedableRng};
use reqwest::StatusCode;
use serde_json::json;

/// Four rankers; "best" beats every other with probability at least 0.7.
fn users() -> PrefMatrix {
    let rows = vec![
        vec![0.5, 0.7, 0.75, 0.8],
        vec![0.3, 0.5, 0.6, 0.65],
        vec![0.25, 0.4, 0.5, 0.6],
        vec![0.2, 0.35, 0.4, 0.5],
    ];
    let names = ["best", "good", "fair", "poor"].map(String::from).to_vec();
    PrefMatrix::from_rows(rows, Some(names)).unwrap()
}

#[tokio::test]
async fn champion_converges_through_http_for_rucb_and_merge_dts() {
    let app = common::spawn_app().await;
    let m = users();
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
    for policy in [
        json!({"name": "rucb"}),
        json!({"name": "merge_dts", "params": {"c": 400.0}}),
    ] {
        let id = app
            .create_experiment(&["poor", "fair", "best", "good"], policy.clone())
            .await;
        // 1,500 queries, outcomes posted in batches of 50 as a backend would after a delay.
        let mut pending = Vec::new();
        for _ in 0..1500 {
            let (token, pair) = app.duel(id).await;
            let i = m.names().iter().position(|n| *n == pair[0]).unwrap();
            let j = m.names().iter().position(|n| *n == pair[1]).unwrap();
            let winner = if i == j {
                "tie".to_string()
            } else if rng.random::<f64>() < m.p(i, j) {
                pair[0].clone()
            } else {
                pair[1].clone()
            };
            pending.push(json!({"duel_token": token, "winner": winner}));
            if pending.len() == 50 {
                let (s, b) = app
                    .post("/v1/outcomes/batch", json!({"outcomes": pending}))
                    .await;
                assert_eq!(s, StatusCode::OK, "{b}");
                assert_eq!(b["rejected"], 0, "{b}");
                pending = Vec::new();
            }
        }
        let e = app.experiment(id).await;
        // With gaps of at least 0.2 against "best", 1,500 comparisons give RUCB's and MergeDTS's
        // confidence bounds (radius ~ sqrt(alpha ln t / n)) ample room to separate: "best" must
        // be the champion. A failure here means the service does not feed the bandit correctly.
        assert_eq!(
            e["champion"]["ranker"], "best",
            "{policy}: {}",
            e["champion"]
        );
    }
    app.stop().await;
}
