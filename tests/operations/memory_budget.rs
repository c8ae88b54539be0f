//! The per-experiment memory budget over HTTP: what would exceed it is refused with a 422 that
//! names the policy, the number of rankers and the limit, and changes nothing. (How each policy's
//! estimate compares with its real memory: `tests/policies/memory_estimate.rs`.)

use crate::helpers::postgres;
use crate::helpers::process::{Server, get_json};
use serde_json::{Value, json};

/// An experiment over the memory budget is refused when it is created and when a ranker would
/// take it over: 422 naming the policy, K and the limit, and nothing changes.
#[tokio::test]
async fn experiments_over_the_memory_budget_are_refused() {
    let db = postgres::fresh_database().await;
    // 1 MiB: `dts` fits 118 rankers (64 KiB + 118 * (1 KiB + 61 bytes * 118 + 12 * 8) <= 1 MiB:
    // 8 bytes per pair of win matrix, 12 of the decision's kept bounds, their transposed copy and
    // the evidence, 41 of DTS, and 12 bytes per block of 16 pairs of a row for the three tables'
    // minimums), not 119.
    let server = Server::start_with(&["--database-url", &db, "--max-experiment-memory-mb", "1"]);
    let client = reqwest::Client::new();
    server.wait_ready(&client).await;
    let create = |k: usize| {
        let rankers: Vec<String> = (0..k).map(|i| format!("r{i}")).collect();
        client
            .post(format!("{}/v1/experiments", server.base))
            .json(&json!({"name": "big", "rankers": rankers, "policy": {"name": "dts"}}))
            .send()
    };
    let r = create(119).await.unwrap();
    assert_eq!(r.status(), 422);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "memory_budget_exceeded", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    for part in ["`dts`", "119 rankers", "O(K^2)", "limit of 1 MiB"] {
        assert!(message.contains(part), "`{part}` missing from: {message}");
    }

    let r = create(118).await.unwrap();
    assert_eq!(r.status(), 201);
    let id = r.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    let r = client
        .post(format!("{}/v1/experiments/{id}/rankers", server.base))
        .json(&json!({"name": "one-too-many"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "memory_budget_exceeded", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("119 rankers"),
        "{body}"
    );
    let e = get_json(&client, &format!("{}/v1/experiments/{id}", server.base)).await;
    assert_eq!(e["rankers"].as_array().unwrap().len(), 118);
}

/// Parameters large enough to wrap a naive estimate (a `merge_dts` batch of 2^59 rankers makes
/// 16·B = 2^63 bytes per ranker; 2^62 wraps it with only two rankers) are refused as over the
/// default budget, not accepted because the product wrapped to a small number. And the policy
/// suggested instead is never the one refused.
#[tokio::test]
async fn huge_parameters_do_not_wrap_the_memory_estimate() {
    let app = crate::helpers::http_server::spawn_app().await;
    let create = |k: usize, batch_size: u64| {
        let rankers: Vec<String> = (0..k).map(|i| format!("r{i}")).collect();
        app.post(
            "/v1/experiments",
            json!({"name": "huge", "rankers": rankers,
                   "policy": {"name": "merge_dts", "params": {"batch_size": batch_size}}}),
        )
    };
    for (k, batch_size) in [(10_000, 1u64 << 59), (2, 1u64 << 62), (2, u64::MAX)] {
        let (status, body) = create(k, batch_size).await;
        assert_eq!(status, 422, "K {k}, batch_size {batch_size}: {body}");
        assert_eq!(body["error"]["code"], "memory_budget_exceeded", "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("`merge_dts`"), "{message}");
        assert!(!message.contains("such as merge_dts"), "{message}");
    }
    // Over the budget by its batch size alone: the suggestion is another policy.
    let (status, body) = create(10_000, 10_000).await;
    assert_eq!(status, 422, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(!message.contains("such as merge_dts"), "{message}");
    assert!(message.ends_with("such as merge_rucb"), "{message}");
    let (_, list) = app.get("/v1/experiments").await;
    assert_eq!(list["experiments"].as_array().unwrap().len(), 0, "{list}");
}
