//! The HTTP API against a real Postgres: experiments, duels, outcomes, errors, keys, metrics.

use crate::helpers::http_server::{
    TestApp, error_code, spawn_app, spawn_app_on, wait_for_flushed_duels, win_total,
};
use crate::helpers::postgres;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// A creation body of two rankers with `extra`'s fields added.
fn create(extra: Value) -> Value {
    let mut body = json!({"name": "n", "rankers": ["a", "b"]});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    body
}

async fn experiment_count(app: &TestApp) -> usize {
    let (status, body) = app.get("/v1/experiments?limit=200").await;
    assert_eq!(status, StatusCode::OK);
    body["experiments"].as_array().unwrap().len()
}

#[tokio::test]
async fn experiment_lifecycle() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b", "c"], json!({"name": "uniform"}))
        .await;
    let e = app.experiment(id).await;
    assert_eq!(e["status"], "running");
    assert_eq!(e["policy"]["name"], "uniform");
    assert_eq!(e["rankers"].as_array().unwrap().len(), 3);
    assert_eq!(e["duels_issued"], 0);
    assert_eq!(e["outcomes_applied"], 0);
    assert!(e["champion"]["ranker"].is_null());

    // Pagination: three more experiments, pages of two.
    for _ in 0..3 {
        app.create_experiment(&["x", "y"], json!({"name": "uniform"}))
            .await;
    }
    let (_, page1) = app.get("/v1/experiments?limit=2").await;
    let after = page1["next_after"].as_i64().expect("a next page");
    let (_, page2) = app
        .get(&format!("/v1/experiments?limit=2&after={after}"))
        .await;
    let ids: Vec<i64> = [&page1, &page2]
        .iter()
        .flat_map(|p| {
            p["experiments"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["id"].as_i64().unwrap())
        })
        .collect();
    assert_eq!(ids.len(), 4);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    assert!(page2["next_after"].is_null(), "{page1} {page2}");

    // Paused: duels refused with their own code; resumed: served again.
    let (s, _) = app.patch_experiment(id, json!({"status": "paused"})).await;
    assert_eq!(s, StatusCode::OK);
    let (s, body) = app
        .post(&format!("/v1/experiments/{id}/duels"), json!({}))
        .await;
    assert_eq!(
        (s, error_code(&body)),
        (StatusCode::CONFLICT, "experiment_paused")
    );
    app.patch_experiment(id, json!({"status": "running"})).await;
    let (token, pair) = app.duel(id).await;
    assert_eq!(app.outcome(&token, &pair[0]).await.0, StatusCode::OK);

    // Concluded: the champion on both sides, no token; it cannot be resumed.
    app.patch_experiment(id, json!({"status": "concluded"}))
        .await;
    let (s, body) = app
        .post(&format!("/v1/experiments/{id}/duels"), json!({}))
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(body["concluded"], true);
    assert!(body["duel_token"].is_null());
    assert_eq!(body["rankers"][0], body["rankers"][1]);
    assert_eq!(body["rankers"][0], pair[0].as_str());
    let (s, body) = app.patch_experiment(id, json!({"status": "running"})).await;
    assert_eq!(
        (s, error_code(&body)),
        (StatusCode::CONFLICT, "experiment_concluded")
    );

    // Deleted: gone, and its outcomes are refused.
    let (token2, pair2) = {
        let other = app
            .create_experiment(&["p", "q"], json!({"name": "uniform"}))
            .await;
        let d = app.duel(other).await;
        let (s, _) = app.delete_experiment(other).await;
        assert_eq!(s, StatusCode::NO_CONTENT);
        let (s, body) = app.get(&format!("/v1/experiments/{other}")).await;
        assert_eq!(
            (s, error_code(&body)),
            (StatusCode::NOT_FOUND, "unknown_experiment")
        );
        d
    };
    let (s, body) = app.outcome(&token2, &pair2[0]).await;
    assert_eq!(
        (s, error_code(&body)),
        (StatusCode::NOT_FOUND, "unknown_experiment")
    );
    app.stop().await;
}

#[tokio::test]
async fn bad_input_is_a_clear_4xx_and_changes_nothing() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b"], json!({"name": "uniform"}))
        .await;
    let before = experiment_count(&app).await;
    let big = "x".repeat(5 * 1024 * 1024);
    let cases: Vec<(Value, StatusCode, &str)> = vec![
        (
            json!({"name": "n", "rankers": ["a", "a"], "policy": {"name": "uniform"}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "duplicate_ranker",
        ),
        (
            json!({"name": "n", "rankers": ["a"], "policy": {"name": "uniform"}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_rankers",
        ),
        (
            json!({"name": "n", "rankers": ["a", "b"], "policy": {"name": "nope"}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_policy",
        ),
        (
            json!({"name": "n", "rankers": ["a", "b"], "policy": {"name": "uniform", "params": {"speed": 3}}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_policy",
        ),
        (
            json!({"name": "n", "rankers": "a,b", "policy": {"name": "uniform"}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
        ),
        (
            // Omitted, the policy is the default; null is not a policy.
            json!({"name": "n", "rankers": ["a", "b"], "policy": null}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
        ),
        (
            json!({"name": "n", "rankers": ["a", "b"], "policy": {"name": "auto", "params": {"version": 9}}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_policy",
        ),
        (
            json!({"name": "", "rankers": ["a", "b"], "policy": {"name": "uniform"}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_name",
        ),
        (
            json!({"name": "n", "rankers": ["a", "b"], "policy": {"name": "uniform"}, "attribution_window_secs": 0}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_attribution_window",
        ),
        (
            json!({"name": "n", "rankers": ["a", "b"], "policy": {"name": "uniform"}, "colour": "red"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
        ),
        (
            json!({"name": big, "rankers": ["a", "b"], "policy": {"name": "uniform"}}),
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
        ),
    ];
    for (body, status, code) in cases {
        let (s, b) = app.post("/v1/experiments", body).await;
        assert_eq!((s, error_code(&b)), (status, code), "{b}");
    }
    let too_many: Vec<String> = (0..10_001).map(|i| format!("r{i}")).collect();
    let (s, b) = app
        .post(
            "/v1/experiments",
            json!({"name": "n", "rankers": too_many, "policy": {"name": "uniform"}}),
        )
        .await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::UNPROCESSABLE_ENTITY, "invalid_rankers")
    );

    // Malformed JSON, wrong content type, unknown paths and methods.
    let resp = app
        .client
        .post(format!("{}/v1/experiments", app.base))
        .header("content-type", "application/json")
        .body("{\"name\":")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(error_code(&resp.json().await.unwrap()), "invalid_json");
    let resp = app
        .client
        .post(format!("{}/v1/experiments", app.base))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    for (method, path, status) in [
        (
            Method::GET,
            "/v1/experiments/999999".to_string(),
            StatusCode::NOT_FOUND,
        ),
        (
            Method::GET,
            "/v1/experiments/abc".to_string(),
            StatusCode::NOT_FOUND,
        ),
        (
            Method::POST,
            "/v1/experiments/999999/duels".to_string(),
            StatusCode::NOT_FOUND,
        ),
        (
            Method::GET,
            "/v1/nothing".to_string(),
            StatusCode::NOT_FOUND,
        ),
        (
            Method::PUT,
            format!("/v1/experiments/{id}"),
            StatusCode::METHOD_NOT_ALLOWED,
        ),
        (
            Method::GET,
            "/v1/experiments?limit=0".to_string(),
            StatusCode::BAD_REQUEST,
        ),
        (
            Method::GET,
            "/v1/experiments?limit=ten".to_string(),
            StatusCode::BAD_REQUEST,
        ),
    ] {
        let (s, b) = app.send(method.clone(), &path, None).await;
        assert_eq!(s, status, "{method} {path}: {b}");
        error_code(&b);
    }
    let (s, b) = app
        .patch_experiment(id, json!({"status": "finished"}))
        .await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::UNPROCESSABLE_ENTITY, "invalid_body")
    );

    // Outcomes: bad tokens, bad winners.
    let (token, pair) = app.duel(id).await;
    let mut altered = token.clone().into_bytes();
    let last = altered.len() - 3;
    altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    for (tok, winner, status, code) in [
        ("garbage", "a", StatusCode::BAD_REQUEST, "invalid_token"),
        (
            altered.as_str(),
            pair[0].as_str(),
            StatusCode::BAD_REQUEST,
            "invalid_token",
        ),
        (
            token.as_str(),
            "zzz",
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown_ranker",
        ),
    ] {
        let (s, b) = app.outcome(tok, winner).await;
        assert_eq!((s, error_code(&b)), (status, code), "{b}");
    }
    let (s, b) = app
        .post("/v1/outcomes", json!({"duel_token": token, "winner": 3}))
        .await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::UNPROCESSABLE_ENTITY, "invalid_body")
    );

    assert_eq!(experiment_count(&app).await, before);
    let e = app.experiment(id).await;
    assert_eq!(e["outcomes_applied"], 0);
    assert_eq!(e["version"], 1);
    app.stop().await;
}

/// serde reads a struct from a JSON array too (its fields in order); every documented object is
/// refused as an array, at the top of a body and inside it, and nothing changes.
#[tokio::test]
async fn objects_sent_as_arrays_are_refused_and_change_nothing() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b"], json!({"name": "uniform"}))
        .await;
    let before = app.experiment(id).await;
    let count = experiment_count(&app).await;
    let path = format!("/v1/experiments/{id}");
    for field in ["decision", "stop_rule", "webhook", "browser_clicks"] {
        for value in [json!([]), json!([0.1, 0.0, true, 0.5])] {
            let (s, b) = app
                .send(Method::PATCH, &path, Some(json!({ field: value })))
                .await;
            assert_eq!(
                (s, error_code(&b)),
                (StatusCode::UNPROCESSABLE_ENTITY, "invalid_body"),
                "{field}: {b}"
            );
            assert!(
                b["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("expected an object"),
                "{b}"
            );
        }
    }
    let (s, b) = app.send(Method::PATCH, &path, Some(json!([]))).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{b}");
    let after = app.experiment(id).await;
    for key in [
        "decision_settings",
        "stop_rule",
        "webhook",
        "browser_clicks",
        "status",
    ] {
        assert_eq!(before[key], after[key], "{key}");
    }

    let nested = [
        json!({"policy": ["uniform"]}),
        json!({"decision": []}),
        json!({"stop_rule": [5]}),
        json!({"units": []}),
        json!({"segments": []}),
        json!({"interleaving": ["team_draft"]}),
        json!({"metrics": [["click"]]}),
    ];
    let mut bodies: Vec<Value> = nested.into_iter().map(create).collect();
    bodies.push(json!(["n", ["a", "b"]]));
    for body in bodies {
        let (s, b) = app.post("/v1/experiments", body.clone()).await;
        assert_eq!(
            (s, error_code(&b)),
            (StatusCode::UNPROCESSABLE_ENTITY, "invalid_body"),
            "{body}: {b}"
        );
    }
    assert_eq!(experiment_count(&app).await, count);

    // An outcome given as an array, alone or in a batch, is refused before it is looked at.
    let (token, [first, _]) = app.duel(id).await;
    let as_array = json!([token, first]);
    let (s, b) = app.post("/v1/outcomes", as_array.clone()).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{b}");
    let (s, b) = app
        .post("/v1/outcomes/batch", json!({"outcomes": [as_array]}))
        .await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::UNPROCESSABLE_ENTITY, "invalid_body"),
        "{b}"
    );
    let (s, b) = app
        .post(&format!("/v1/experiments/{id}/duels"), json!([]))
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{b}");
    assert_eq!(app.experiment(id).await["outcomes_applied"], 0);
    app.stop().await;
}

#[tokio::test]
async fn outcomes_are_exactly_once() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b", "c", "d"], json!({"name": "uniform"}))
        .await;
    let mut non_ties = 0;
    for i in 0..40 {
        let (token, pair) = app.duel(id).await;
        let winner = if i % 5 == 0 {
            "tie".to_string()
        } else {
            pair[i % 2].clone()
        };
        let (s, b) = app.outcome(&token, &winner).await;
        assert_eq!(s, StatusCode::OK, "{b}");
        assert_eq!(b["status"], "recorded");
        // A retry returns the recorded result and counts nothing.
        let (s, b) = app.outcome(&token, &winner).await;
        assert_eq!(
            (s, b["status"].as_str()),
            (StatusCode::OK, Some("duplicate"))
        );
        // A different outcome for the same duel is a conflict.
        let other = if winner == "tie" {
            pair[0].clone()
        } else {
            "tie".to_string()
        };
        let (s, b) = app.outcome(&token, &other).await;
        assert_eq!(
            (s, error_code(&b)),
            (StatusCode::CONFLICT, "outcome_conflict")
        );
        if winner != "tie" {
            non_ties += 1;
        }
    }
    let e = app.experiment(id).await;
    assert_eq!(e["outcomes_applied"], non_ties);
    assert_eq!(e["ties_recorded"], 40 - non_ties);
    assert_eq!(win_total(&app, id).await, non_ties as u64);
    // Duel counts are flushed in the background.
    wait_for_flushed_duels(&app, id, 40).await;
    assert_eq!(app.experiment(id).await["duels_issued"], 40);
    app.stop().await;
}

#[tokio::test]
async fn batch_outcomes_record_valid_items_and_report_each() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b", "c"], json!({"name": "uniform"}))
        .await;
    let mut items = Vec::new();
    for _ in 0..50 {
        let (token, pair) = app.duel(id).await;
        items.push(json!({"duel_token": token, "winner": pair[0]}));
    }
    // The same duel twice in one batch (a duplicate), then a conflicting copy and a forgery.
    items.push(items[0].clone());
    let mut conflicting = items[1].clone();
    conflicting["winner"] = json!("tie");
    items.push(conflicting);
    items.push(json!({"duel_token": "forged", "winner": "a"}));
    let (s, b) = app
        .post("/v1/outcomes/batch", json!({ "outcomes": items }))
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(
        (
            b["recorded"].as_u64(),
            b["duplicates"].as_u64(),
            b["rejected"].as_u64()
        ),
        (Some(50), Some(1), Some(2)),
        "{b}"
    );
    let results = b["results"].as_array().unwrap();
    assert_eq!(results.len(), 53);
    assert_eq!(results[50]["status"], "duplicate");
    assert_eq!(error_code(&results[51]), "outcome_conflict");
    assert_eq!(error_code(&results[52]), "invalid_token");
    assert_eq!(app.experiment(id).await["outcomes_applied"], 50);
    assert_eq!(win_total(&app, id).await, 50);

    let (s, b) = app
        .post("/v1/outcomes/batch", json!({ "outcomes": [] }))
        .await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::UNPROCESSABLE_ENTITY, "invalid_batch")
    );

    // An optional field sent as null breaks the documented schema: the whole body is refused,
    // including the valid item beside it.
    let (token, pair) = app.duel(id).await;
    let body = json!({ "outcomes": [
        {"duel_token": token, "winner": pair[0]},
        {"duel_token": token, "ordering": null},
    ]});
    let (s, b) = app.post("/v1/outcomes/batch", body).await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::UNPROCESSABLE_ENTITY, "invalid_body"),
        "{b}"
    );
    assert_eq!(app.experiment(id).await["outcomes_applied"], 50);

    // So does an item the schema's "exactly one of" refuses, or an empty tied group: the error
    // names the item, and the valid outcome beside it is not recorded.
    for (bad, code) in [
        (
            json!({"duel_token": token, "winner": pair[0], "ordering": [pair[0]]}),
            "invalid_outcome",
        ),
        (json!({"duel_token": token}), "invalid_outcome"),
        (
            json!({"duel_token": token, "ordering": [[], pair[0], pair[1]]}),
            "rankers_mismatch",
        ),
    ] {
        let body = json!({ "outcomes": [{"duel_token": token, "winner": pair[0]}, bad] });
        let (s, b) = app.post("/v1/outcomes/batch", body).await;
        assert_eq!(
            (s, error_code(&b)),
            (StatusCode::UNPROCESSABLE_ENTITY, code),
            "{b}"
        );
        let message = b["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("outcomes[1]: "), "{b}");
        assert_eq!(app.experiment(id).await["outcomes_applied"], 50);
    }
    app.stop().await;
}

/// The acknowledgement inserts a group as new duels and, when one of them was recorded before,
/// again skipping those: a batch of repeats, a conflicting copy and new duels records the new
/// ones, reports the others, and counts each duel once. Duels with a unit take the other form
/// of the statement (their rows carry the unit), so both are checked.
#[tokio::test]
async fn a_batch_of_recorded_and_new_duels_records_only_the_new_ones() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b", "c"], json!({"name": "uniform"}))
        .await;
    for round in 0..2 {
        let mut items = Vec::new();
        for i in 0..11 {
            // A unit is shown the same duel for a while, so each of these duels has its own.
            let body = if round == 0 {
                json!({})
            } else {
                json!({ "unit": format!("user-{i}") })
            };
            let duel = app.duel_for(id, body).await;
            items.push(json!({"duel_token": duel["duel_token"], "winner": duel["rankers"][0]}));
        }
        for item in &items[..6] {
            let (s, b) = app.post("/v1/outcomes", item.clone()).await;
            assert_eq!(
                (s, b["status"].as_str()),
                (StatusCode::OK, Some("recorded")),
                "round {round}: {b}"
            );
        }
        let mut batch = items[..5].to_vec();
        let mut conflicting = items[5].clone();
        conflicting["winner"] = json!("tie");
        batch.push(conflicting);
        batch.extend_from_slice(&items[6..]);
        let (s, b) = app
            .post("/v1/outcomes/batch", json!({ "outcomes": batch }))
            .await;
        assert_eq!(s, StatusCode::OK, "{b}");
        let statuses: Vec<&str> = b["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["status"].as_str().unwrap_or_else(|| error_code(r)))
            .collect();
        assert_eq!(
            statuses,
            [
                ["duplicate"; 5].as_slice(),
                &["outcome_conflict"],
                &["recorded"; 5]
            ]
            .concat(),
            "{b}"
        );
        // The same batch again: nothing new.
        let (s, again) = app
            .post("/v1/outcomes/batch", json!({ "outcomes": batch }))
            .await;
        assert_eq!(s, StatusCode::OK, "{again}");
        assert_eq!(
            (again["recorded"].as_u64(), again["duplicates"].as_u64()),
            (Some(0), Some(10)),
            "{again}"
        );
        let e = app.experiment(id).await;
        let counted =
            e["outcomes_applied"].as_u64().unwrap() + e["ties_recorded"].as_u64().unwrap();
        assert_eq!(counted, 11 * (round as u64 + 1), "{e}");
    }
    app.stop().await;
}

#[tokio::test]
async fn expired_duels_are_refused_with_their_own_code() {
    let app = spawn_app().await;
    let (s, b) = app
        .post("/v1/experiments", json!({"name": "n", "rankers": ["a", "b"], "policy": {"name": "uniform"}, "attribution_window_secs": 1}))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    let id = b["id"].as_i64().unwrap();
    let (token, pair) = app.duel(id).await;
    // The wait is the test: the duel outlives its attribution window (1 s, the shortest).
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let (s, b) = app.outcome(&token, &pair[0]).await;
    assert_eq!((s, error_code(&b)), (StatusCode::GONE, "duel_expired"));
    assert_eq!(app.experiment(id).await["outcomes_applied"], 0);
    app.stop().await;
}

#[tokio::test]
async fn rankers_can_be_added_and_retired() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b", "c"], json!({"name": "uniform"}))
        .await;
    let (s, b) = app.add_ranker(id, json!({"name": "d"})).await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    assert_eq!(b["index"], 3);
    let (s, b) = app.add_ranker(id, json!({"name": "d"})).await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::CONFLICT, "duplicate_ranker")
    );
    let (s, b) = app.remove_ranker(id, "a").await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let (s, b) = app.remove_ranker(id, "a").await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::CONFLICT, "ranker_retired")
    );
    let (s, b) = app.remove_ranker(id, "nobody").await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::UNPROCESSABLE_ENTITY, "unknown_ranker")
    );
    // A retired name is never reused.
    let (s, _) = app.add_ranker(id, json!({"name": "a"})).await;
    assert_eq!(s, StatusCode::CONFLICT);

    let mut seen = std::collections::HashSet::new();
    for _ in 0..200 {
        let (_, pair) = app.duel(id).await;
        seen.extend(pair);
    }
    assert!(!seen.contains("a"), "a retired ranker was selected");
    assert!(
        seen.contains("d"),
        "the added ranker was never selected in 200 uniform duels"
    );
    // Retiring down to one active ranker is refused.
    app.remove_ranker(id, "b").await;
    let (s, b) = app.remove_ranker(id, "c").await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::CONFLICT, "too_few_rankers")
    );
    // The API's word is ranker; the bandit's arms stay inside.
    let message = b["error"]["message"].as_str().unwrap();
    assert!(message.contains("2 active rankers"), "{message}");
    assert!(!message.contains("arm"), "{message}");
    let e = app.experiment(id).await;
    let active: Vec<&str> = e["rankers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["active"] == true)
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(active, vec!["c", "d"]);
    app.stop().await;
}

#[tokio::test]
async fn api_keys_are_scoped() {
    let db = postgres::fresh_database().await;
    let admin = "admin-key-0123456789-abcdefghij";
    let ingest = "ingest-key-0123456789-abcdefghij";
    let read = "read-key-0123456789-abcdefghij";
    let keys = format!("admin:{admin},ingest:{ingest},read:{read}");
    let app = spawn_app_on(&db, &keys).await;
    let (s, b) = app
        .post(
            "/v1/experiments",
            json!({"name": "n", "rankers": ["a", "b"], "policy": {"name": "uniform"}}),
        )
        .await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );
    let app = app.with_key("wrong-key-0123456789");
    assert_eq!(app.get("/v1/experiments").await.0, StatusCode::UNAUTHORIZED);
    let app = app.with_key(read);
    let (s, b) = app
        .post(
            "/v1/experiments",
            json!({"name": "n", "rankers": ["a", "b"], "policy": {"name": "uniform"}}),
        )
        .await;
    assert_eq!((s, error_code(&b)), (StatusCode::FORBIDDEN, "forbidden"));
    let app = app.with_key(admin);
    let id = app
        .create_experiment(&["a", "b"], json!({"name": "uniform"}))
        .await;
    let app = app.with_key(ingest);
    let (token, pair) = app.duel(id).await;
    assert_eq!(app.outcome(&token, &pair[0]).await.0, StatusCode::OK);
    assert_eq!(
        app.get(&format!("/v1/experiments/{id}")).await.0,
        StatusCode::FORBIDDEN
    );
    let app = app.with_key(read);
    assert_eq!(app.experiment(id).await["outcomes_applied"], 1);
    assert_eq!(
        app.post(&format!("/v1/experiments/{id}/duels"), json!({}))
            .await
            .0,
        StatusCode::FORBIDDEN
    );
    // Health endpoints need no key.
    let app = app.without_key();
    assert_eq!(app.get("/healthz").await.0, StatusCode::OK);
    app.stop().await;
}

#[tokio::test]
async fn health_readiness_and_metrics() {
    let app = spawn_app().await;
    assert_eq!(app.get("/healthz").await.0, StatusCode::OK);
    let (s, b) = app.get("/readyz").await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let id = app
        .create_experiment(&["a", "b"], json!({"name": "uniform"}))
        .await;
    let (token, pair) = app.duel(id).await;
    app.outcome(&token, &pair[0]).await;
    app.outcome("bad", "a").await;
    // Every response carries a request id, errors included, and ids differ between requests.
    let ids: Vec<String> = request_ids_of_two_requests(&app).await;
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
    // A read waits until this replica's acknowledged outcomes are applied, which is when
    // `joust_outcomes_applied_total` counts them.
    let (s, b) = app.get(&format!("/v1/experiments/{id}")).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let text = app.get_response("/metrics").await.text().await.unwrap();
    for name in [
        "joust_http_requests_total",
        "joust_http_request_duration_seconds_bucket",
        "joust_duels_issued_total",
        "joust_outcomes_acknowledged_total",
        "joust_outcomes_applied_total",
        "joust_outcomes_rejected_total{reason=\"invalid_token\"}",
        "joust_ingest_batch_size_bucket",
        "route=\"/v1/experiments/{id}/duels\"",
    ] {
        assert!(text.contains(name), "metrics lack {name}:\n{text}");
    }
    app.stop().await;
}

async fn request_ids_of_two_requests(app: &TestApp) -> Vec<String> {
    let mut ids = Vec::new();
    for path in ["/healthz", "/v1/nothing"] {
        let r = app.get_response(path).await;
        let id = r
            .headers()
            .get("x-request-id")
            .unwrap_or_else(|| panic!("{path}: no x-request-id"));
        ids.push(id.to_str().unwrap().to_string());
    }
    ids
}

#[tokio::test]
async fn reserved_names_seeds_and_integral_floats() {
    let app = spawn_app().await;
    let create = |extra: Value| {
        let mut body = json!({"name": "n", "rankers": ["a", "b"], "policy": {"name": "uniform"}});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        app.post("/v1/experiments", body)
    };
    let before = experiment_count(&app).await;
    // `tie` is the outcome's word for a tie: a ranker of that name could never win.
    for (extra, status, code) in [
        (
            json!({"rankers": ["a", "tie"]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "reserved_name",
        ),
        // Seeds are kept as a signed 64-bit integer: larger ones are refused, never changed.
        (
            json!({"seed": u64::MAX}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_seed",
        ),
        (
            json!({"seed": 1u64 << 63}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_seed",
        ),
        (
            json!({"attribution_window_secs": 55.5}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
        ),
        (
            json!({"name": "é".repeat(201)}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_name",
        ),
    ] {
        let (s, b) = create(extra.clone()).await;
        assert_eq!((s, error_code(&b)), (status, code), "{extra}: {b}");
    }
    assert_eq!(experiment_count(&app).await, before);

    // The largest seed comes back exactly; integral floats are integers; names are counted in
    // characters (as the schema's maxLength counts them); a null max_length is the default.
    let (s, b) = create(json!({
        "name": "é".repeat(200),
        "seed": i64::MAX,
        "attribution_window_secs": 55.0,
        "interleaving": {"method": "team_draft", "max_length": null},
    }))
    .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    assert_eq!(b["seed"], json!(i64::MAX));
    assert_eq!(b["attribution_window_secs"], 55);
    assert_eq!(b["interleaving"]["max_length"], 10);
    let id = b["id"].as_i64().unwrap();
    let (s, b) = app.add_ranker(id, json!({"name": "tie"})).await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::UNPROCESSABLE_ENTITY, "reserved_name")
    );
    assert_eq!(
        app.experiment(id).await["rankers"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // Cursors are 64-bit: the largest is an empty page, one past it a 400.
    let (s, b) = app
        .get(&format!("/v1/experiments?after={}", i64::MAX))
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["experiments"], json!([]));
    let (s, b) = app.get("/v1/experiments?after=9223372036854775808").await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::BAD_REQUEST, "invalid_query")
    );
    app.stop().await;
}

#[tokio::test]
async fn a_concluded_experiment_keeps_its_rankers() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b", "c"], json!({"name": "uniform"}))
        .await;
    let (s, b) = app
        .patch_experiment(id, json!({"status": "concluded"}))
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let version = b["version"].clone();
    let (s, b) = app.add_ranker(id, json!({"name": "d"})).await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::CONFLICT, "experiment_concluded")
    );
    let (s, b) = app.remove_ranker(id, "a").await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::CONFLICT, "experiment_concluded")
    );
    let e = app.experiment(id).await;
    assert_eq!(e["version"], version);
    assert_eq!(e["rankers"].as_array().unwrap().len(), 3);
    assert!(
        e["rankers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["active"] == true)
    );
    app.stop().await;
}

/// Every JSON body endpoint refuses other content types with 415, except that clicks also take
/// `text/plain` (docs/interleaving.md, "Clicks from the browser").
#[tokio::test]
async fn every_json_body_endpoint_wants_a_json_content_type() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b"], json!({"name": "uniform"}))
        .await;
    for (method, path) in [
        (Method::POST, "/v1/experiments".to_string()),
        (Method::PATCH, format!("/v1/experiments/{id}")),
        (Method::POST, format!("/v1/experiments/{id}/rankers")),
        (Method::POST, "/v1/interleavings".to_string()),
        (Method::POST, "/v1/clicks".to_string()),
        (Method::POST, "/v1/outcomes".to_string()),
        (Method::POST, "/v1/outcomes/batch".to_string()),
    ] {
        for content_type in [None, Some("text/plain"), Some("application/jsonx")] {
            let mut rb = app
                .client
                .request(method.clone(), format!("{}{path}", app.base))
                .body("{}");
            if let Some(ct) = content_type {
                rb = rb.header("content-type", ct);
            }
            let resp = rb.send().await.unwrap();
            if path == "/v1/clicks" && content_type == Some("text/plain") {
                // What navigator.sendBeacon sends for a string: read as JSON (here of the wrong
                // shape).
                assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
                assert_eq!(error_code(&resp.json().await.unwrap()), "invalid_body");
                continue;
            }
            assert_eq!(
                resp.status(),
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "{method} {path} with {content_type:?}"
            );
            assert_eq!(
                error_code(&resp.json().await.unwrap()),
                "unsupported_media_type"
            );
        }
    }
    assert_eq!(app.experiment(id).await["version"], 1);
    app.stop().await;
}

/// The words of Rust types (struct and enum names, `u64`, `f64`, ...) that serde and axum put in
/// their messages; none may reach a client.
const RUST_WORDS: [&str; 12] = [
    "struct",
    "enum",
    "PolicySpec",
    "TieRule",
    "Status",
    "InterleavingSpec",
    "usize",
    "u64",
    "i64",
    "f64",
    "String",
    "Option",
];

fn assert_no_rust_words(message: &str) {
    for word in RUST_WORDS {
        assert!(!message.contains(word), "`{word}` in {message:?}");
    }
}

#[tokio::test]
async fn refusals_speak_json_not_rust_types() {
    let app = spawn_app().await;
    let bodies: Vec<(Value, &str, &str)> = vec![
        (
            json!({"policy": "rucb"}),
            "invalid_body",
            "expected an object",
        ),
        (
            json!({"policy": {"name": "rucb", "params": {"alpha": "x"}}}),
            "invalid_policy",
            "a number",
        ),
        (
            json!({"rankers_per_query": "3"}),
            "invalid_body",
            "a non-negative integer",
        ),
        (
            json!({"interleaving": "team_draft"}),
            "invalid_body",
            "expected an object",
        ),
        (
            json!({"interleaving": {"method": "probabilistic", "options": {"tau": "x"}}}),
            "invalid_interleaving",
            "a number",
        ),
    ];
    for (extra, code, says) in bodies {
        let (_, b) = app.post("/v1/experiments", create(extra)).await;
        assert_eq!(error_code(&b), code, "{b}");
        let message = b["error"]["message"].as_str().unwrap();
        assert_no_rust_words(message);
        assert!(message.contains(says), "{message:?} does not say {says:?}");
    }
    let (s, b) = app
        .send(
            Method::PATCH,
            "/v1/experiments/1",
            Some(json!({"status": 1})),
        )
        .await;
    // serde_json reads a value that cannot start an enum as a syntax error.
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::BAD_REQUEST, "invalid_json")
    );
    assert_no_rust_words(b["error"]["message"].as_str().unwrap());
    let (s, b) = app.get("/v1/experiments/abc").await;
    assert_eq!((s, error_code(&b)), (StatusCode::NOT_FOUND, "not_found"));
    let message = b["error"]["message"].as_str().unwrap();
    assert_no_rust_words(message);
    assert!(message.contains("`abc` is not a valid"), "{message}");
    for query in ["limit=x", "after=1.5", "limit=-"] {
        let (s, b) = app.get(&format!("/v1/experiments?{query}")).await;
        assert_eq!(
            (s, error_code(&b)),
            (StatusCode::BAD_REQUEST, "invalid_query")
        );
        assert_no_rust_words(b["error"]["message"].as_str().unwrap());
    }
    app.stop().await;
}

/// A database failure that is not an outage (here a table gone from under the server) is a 500
/// whose body names the request id and nothing of the database's own text.
#[tokio::test]
async fn an_internal_error_tells_the_client_only_where_to_look() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b"], json!({"name": "uniform"}))
        .await;
    let pool = sqlx::PgPool::connect(&app.db_url).await.unwrap();
    sqlx::query("ALTER TABLE history_points RENAME TO history_points_elsewhere")
        .execute(&pool)
        .await
        .unwrap();
    let r = app
        .client
        .get(format!("{}/v1/experiments/{id}/history", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let request_id = r.headers()["x-request-id"].to_str().unwrap().to_string();
    let b: Value = r.json().await.unwrap();
    assert_eq!(error_code(&b), "internal");
    assert_eq!(
        b["error"]["message"],
        format!("internal error; see the server log (request id {request_id})")
    );
    sqlx::query("ALTER TABLE history_points_elsewhere RENAME TO history_points")
        .execute(&pool)
        .await
        .unwrap();
    let (s, _) = app.get(&format!("/v1/experiments/{id}/history")).await;
    assert_eq!(s, StatusCode::OK);
    app.stop().await;
}

/// Names shown on the dashboard and in answers must read as what they are: a bidirectional
/// override shows `abc\u{202E}fed` as `abcdef`, a zero-width space makes `bert` and `be\u{200B}rt`
/// look alike. Both, and the other invisible formatting characters, are refused with 422 naming
/// the character, in a new experiment's rankers, an added ranker and an experiment's name.
#[tokio::test]
async fn names_with_bidirectional_or_invisible_characters_are_refused() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["bm25", "bert"], json!({"name": "uniform"}))
        .await;
    let before = experiment_count(&app).await;
    let spoofs = [
        ("abc\u{202E}fed", "U+202E"),
        ("be\u{200B}rt", "U+200B"),
        ("bm\u{200D}25", "U+200D"),
        ("\u{FEFF}bm25", "U+FEFF"),
        ("bm25\u{2066}", "U+2066"),
        ("bert\u{E0041}", "U+E0041"),
        ("soft\u{00AD}hyphen", "U+00AD"),
    ];
    for (name, named) in spoofs {
        for body in [
            json!({"name": "n", "rankers": ["ok", name], "policy": {"name": "uniform"}}),
            json!({"name": name, "rankers": ["a", "b"], "policy": {"name": "uniform"}}),
        ] {
            let (s, b) = app.post("/v1/experiments", body).await;
            assert_eq!(
                (s, error_code(&b)),
                (StatusCode::UNPROCESSABLE_ENTITY, "invalid_name"),
                "{name:?}: {b}"
            );
            let message = b["error"]["message"].as_str().unwrap();
            assert!(message.contains(named), "{message}");
            assert!(message.contains("bidirectional, zero-width"), "{message}");
        }
        let (s, b) = app.add_ranker(id, json!({"name": name})).await;
        assert_eq!(
            (s, error_code(&b)),
            (StatusCode::UNPROCESSABLE_ENTITY, "invalid_name"),
            "{name:?}: {b}"
        );
    }
    assert_eq!(experiment_count(&app).await, before);
    assert_eq!(
        app.experiment(id).await["rankers"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // Letters of any script, accents and symbols stay welcome.
    let (s, b) = app
        .post(
            "/v1/experiments",
            json!({"name": "évaluation", "rankers": ["Ранжир", "排序-β", "bm25 ★"], "policy": {"name": "uniform"}}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    app.stop().await;
}
