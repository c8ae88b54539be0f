//! Metrics and conversions through HTTP on a server with a test clock: a conversion posted an
//! hour after the click changes its metric's matrix and not the click metric's, exactly once
//! under retries (single and batch); windows that close are ties where the metric says so and
//! value-credited metrics are decided at the close; bad input is refused and changes nothing;
//! the view says when the metrics disagree on the champion.

use crate::helpers::eventually::eventually;
use crate::helpers::http_server::{
    TestApp, distinct_duel, error_code, ranker_lists, shown_documents, spawn_app, spawn_app_with,
    test_options,
};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;

pub(crate) async fn spawn_with_test_clock() -> TestApp {
    let db = crate::helpers::postgres::fresh_database().await;
    let options = joust::engine::EngineOptions {
        test_clock: true,
        ..test_options()
    };
    spawn_app_with(&db, "", options).await
}

pub(crate) async fn set_clock(app: &TestApp, offset_seconds: f64) {
    let (s, b) = app
        .send(
            reqwest::Method::PUT,
            "/v1/admin/clock",
            Some(json!({ "offset_seconds": offset_seconds })),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
}

pub(crate) async fn create(app: &TestApp, metrics: Value, primary: &str) -> i64 {
    let (s, b) = app
        .post(
            "/v1/experiments",
            json!({
                "name": "metrics",
                "rankers": ["x", "y"],
                "policy": {"name": "uniform"},
                "seed": 3,
                "metrics": metrics,
                "primary_metric": primary,
            }),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    b["id"].as_i64().unwrap()
}

/// A shown Team-Draft list of a duel between two different rankers: the interleaving answer,
/// the rankers in duel order, and a document of each ranker's team.
pub(crate) async fn shown_list(app: &TestApp, id: i64) -> (Value, [String; 2], [String; 2]) {
    let (token, pair) = distinct_duel(app, id).await;
    let il = app
        .interleave(
            &token,
            ranker_lists(&pair, &["a1", "a2", "a3"], &["b1", "b2", "b3"]),
        )
        .await;
    let docs = shown_documents(&il);
    let of = |r: &str| {
        docs.iter()
            .find(|(_, team)| team.as_deref() == Some(r))
            .map(|(d, _)| d.clone())
            .expect("each team has a shown document")
    };
    let team_docs = [of(&pair[0]), of(&pair[1])];
    (il, pair, team_docs)
}

pub(crate) async fn click(app: &TestApp, il: &Value, doc: &str) {
    let (s, b) = app
        .post(
            "/v1/clicks",
            json!({"interleaving_token": il["interleaving_token"], "clicks": [doc]}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
}

pub(crate) fn conversion(il: &Value, metric: &str, doc: &str, event: &str) -> Value {
    json!({
        "interleaving_token": il["interleaving_token"],
        "metric": metric,
        "document": doc,
        "event_id": event,
    })
}

/// The view's entry for `metric`.
pub(crate) fn metric<'a>(e: &'a Value, name: &str) -> &'a Value {
    e["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no metric {name}: {e}"))
}

/// (decided outcomes, ties) of a metric.
pub(crate) fn counts(e: &Value, name: &str) -> (u64, u64) {
    let m = metric(e, name);
    (m["outcomes"].as_u64().unwrap(), m["ties"].as_u64().unwrap())
}

/// Wins of `winner` over `loser` in a metric's matrix.
fn wins(e: &Value, name: &str, winner: &str, loser: &str) -> u64 {
    let m = &metric(e, name)["matrix"];
    let at = |r: &str| {
        m["rankers"]
            .as_array()
            .unwrap()
            .iter()
            .position(|n| n == r)
            .unwrap()
    };
    m["wins"][at(winner)][at(loser)].as_u64().unwrap()
}

pub(crate) async fn wait_for_counts(app: &TestApp, id: i64, name: &str, want: (u64, u64)) -> Value {
    let what = format!("metric {name} of experiment {id} at {want:?}");
    eventually(&what, Duration::from_secs(10), || async {
        counts(&app.experiment(id).await, name) == want
    })
    .await;
    app.experiment(id).await
}

pub(crate) fn purchase_first() -> Value {
    json!([
        {"name": "click"},
        {"name": "purchase", "credit": "first", "window_seconds": 86400, "missing": "tie"},
    ])
}

#[tokio::test]
async fn a_conversion_an_hour_later_counts_once_for_its_metric_only() {
    let app = spawn_with_test_clock().await;
    let id = create(&app, purchase_first(), "click").await;
    let (il, pair, docs) = shown_list(&app, id).await;
    // The click goes to the first ranker's document.
    click(&app, &il, &docs[0]).await;
    let e = wait_for_counts(&app, id, "click", (1, 0)).await;
    assert_eq!(wins(&e, "click", &pair[0], &pair[1]), 1, "{e}");
    assert_eq!(counts(&e, "purchase"), (0, 0), "{e}");

    // An hour later by the test clock, the purchase is of the second ranker's document; posted
    // three times with one event id.
    set_clock(&app, 3600.0).await;
    let body = conversion(&il, "purchase", &docs[1], "order-1");
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let (s, b) = app.post("/v1/conversions", body.clone()).await;
        assert_eq!(s, StatusCode::OK, "{b}");
        assert_eq!(b["metric"], "purchase", "{b}");
        statuses.push(b["status"].as_str().unwrap().to_string());
    }
    assert_eq!(statuses, ["recorded", "duplicate", "duplicate"]);
    // A batch with the same event and a second event of the same duel, posted twice: the
    // second event is recorded once and changes nothing (the first event decided).
    let batch = json!({"conversions": [body, conversion(&il, "purchase", &docs[0], "order-2")]});
    let (s, b) = app.post("/v1/conversions/batch", batch.clone()).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(
        (b["recorded"].as_u64(), b["duplicates"].as_u64()),
        (Some(1), Some(1)),
        "{b}"
    );
    let (s, b) = app.post("/v1/conversions/batch", batch).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(
        (b["recorded"].as_u64(), b["duplicates"].as_u64()),
        (Some(0), Some(2)),
        "{b}"
    );

    let e = wait_for_counts(&app, id, "purchase", (1, 0)).await;
    assert_eq!(wins(&e, "purchase", &pair[1], &pair[0]), 1, "{e}");
    // The click metric is as it was, and the champions differ: the view says so.
    assert_eq!(counts(&e, "click"), (1, 0), "{e}");
    assert_eq!(wins(&e, "click", &pair[0], &pair[1]), 1, "{e}");
    assert_eq!(metric(&e, "click")["champion"], pair[0].as_str(), "{e}");
    assert_eq!(metric(&e, "purchase")["champion"], pair[1].as_str(), "{e}");
    assert_eq!(e["metrics_agree"], false, "{e}");
    assert_eq!(e["primary_metric"], "click", "{e}");
    // The policy learned from clicks only.
    assert_eq!(e["outcomes_applied"], 1, "{e}");
    // Prometheus has the same figures.
    let (s, text) = app.get("/metrics").await;
    assert_eq!(s, StatusCode::OK);
    let text = text.as_str().unwrap();
    for line in [
        format!("joust_experiment_metric_outcomes{{experiment=\"{id}\",metric=\"purchase\"}} 1"),
        format!("joust_experiment_metric_outcomes{{experiment=\"{id}\",metric=\"click\"}} 1"),
        format!("joust_experiment_metrics_agree{{experiment=\"{id}\"}} 0"),
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "{line} missing from /metrics"
        );
    }

    // Later applications do not count anything again.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let e = app.experiment(id).await;
    assert_eq!(counts(&e, "purchase"), (1, 0), "{e}");
    assert_eq!(counts(&e, "click"), (1, 0), "{e}");

    // The window closing does not decide the duel a second time (it was decided).
    set_clock(&app, 2.0 * 86400.0).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let e = app.experiment(id).await;
    assert_eq!(counts(&e, "purchase"), (1, 0), "{e}");
}

#[tokio::test]
async fn closed_windows_are_ties_where_the_metric_says_so_and_value_decides_at_the_close() {
    let app = spawn_with_test_clock().await;
    let metrics = json!([
        {"name": "purchase", "credit": "first", "window_seconds": 3600, "missing": "tie"},
        {"name": "signup", "credit": "first", "window_seconds": 3600},
        {"name": "revenue", "credit": "value", "window_seconds": 7200, "missing": "tie"},
    ]);
    let id = create(&app, metrics, "click").await;
    // A duel clicked and never converted.
    let (quiet, _, quiet_docs) = shown_list(&app, id).await;
    click(&app, &quiet, &quiet_docs[0]).await;
    // A duel with revenue on both sides: the second ranker's document earns more.
    let (il, pair, docs) = shown_list(&app, id).await;
    click(&app, &il, &docs[0]).await;
    let _ = wait_for_counts(&app, id, "click", (2, 0)).await;
    for (doc, value, event) in [
        (&docs[0], 10.0, "r1"),
        (&docs[1], 25.0, "r2"),
        (&docs[0], 5.0, "r3"),
    ] {
        let mut body = conversion(&il, "revenue", doc, event);
        body["value"] = json!(value);
        let (s, b) = app.post("/v1/conversions", body).await;
        assert_eq!(s, StatusCode::OK, "{b}");
    }
    // Before the windows close nothing is decided for revenue (it waits for every event).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let e = app.experiment(id).await;
    assert_eq!(counts(&e, "revenue"), (0, 0), "{e}");
    assert_eq!(counts(&e, "purchase"), (0, 0), "{e}");

    // Past every window (and the grace after it).
    set_clock(&app, 3.0 * 3600.0).await;
    let e = wait_for_counts(&app, id, "revenue", (1, 1)).await;
    assert_eq!(wins(&e, "revenue", &pair[1], &pair[0]), 1, "{e}");
    // No purchase on either duel: two ties; no signup: nothing counted.
    let e2 = wait_for_counts(&app, id, "purchase", (0, 2)).await;
    assert_eq!(counts(&e2, "signup"), (0, 0), "{e2}");
    assert_eq!(counts(&e2, "click"), (2, 0), "{e2}");

    // A conversion after its window is refused and changes nothing.
    let (s, b) = app
        .post(
            "/v1/conversions",
            conversion(&il, "purchase", &docs[0], "late"),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{b}");
    assert_eq!(error_code(&b), "conversion_window_closed");
}

#[tokio::test]
async fn bad_conversions_are_refused_and_change_nothing() {
    let app = spawn_with_test_clock().await;
    let id = create(&app, purchase_first(), "click").await;
    let (il, _, docs) = shown_list(&app, id).await;
    let (s, b) = app
        .post(
            "/v1/conversions",
            conversion(&il, "purchase", &docs[0], "e1"),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let e = wait_for_counts(&app, id, "purchase", (1, 0)).await;
    let version = e["version"].as_i64().unwrap();

    let cases = [
        (
            conversion(&il, "refund", &docs[0], "e2"),
            422,
            "unknown_metric",
        ),
        (
            conversion(&il, "click", &docs[0], "e2"),
            422,
            "unknown_metric",
        ),
        (
            conversion(&il, "purchase", "not-shown", "e2"),
            422,
            "conversion_not_shown",
        ),
        (
            conversion(&il, "purchase", &docs[1], "e1"),
            409,
            "conversion_conflict",
        ),
        (
            conversion(&il, "purchase", &docs[0], ""),
            422,
            "invalid_conversion",
        ),
        (
            json!({"interleaving_token": "forged", "metric": "purchase", "document": "a1", "event_id": "e3"}),
            400,
            "invalid_token",
        ),
        (
            json!({"metric": "purchase", "document": "a1", "event_id": "e3"}),
            422,
            "invalid_body",
        ),
    ];
    for (body, status, code) in cases {
        let (s, b) = app.post("/v1/conversions", body.clone()).await;
        assert_eq!(s.as_u16(), status, "{body} -> {b}");
        assert_eq!(error_code(&b), code, "{body} -> {b}");
    }
    // A value that is not a finite number (JSON has none, so a huge one).
    let mut huge = conversion(&il, "purchase", &docs[0], "e4");
    huge["value"] = json!(1e300);
    let (s, b) = app.post("/v1/conversions", huge).await;
    assert_eq!(
        (s.as_u16(), error_code(&b)),
        (422, "invalid_conversion"),
        "{b}"
    );
    // A batch refuses its bad items one by one; an empty batch is refused whole.
    let (s, b) = app
        .post(
            "/v1/conversions/batch",
            json!({"conversions": [conversion(&il, "purchase", "not-shown", "e5")]}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["rejected"], 1, "{b}");
    assert_eq!(
        b["results"][0]["error"]["code"], "conversion_not_shown",
        "{b}"
    );
    let (s, b) = app
        .post("/v1/conversions/batch", json!({"conversions": []}))
        .await;
    assert_eq!((s.as_u16(), error_code(&b)), (422, "invalid_batch"), "{b}");

    tokio::time::sleep(Duration::from_millis(1500)).await;
    let e = app.experiment(id).await;
    assert_eq!(counts(&e, "purchase"), (1, 0), "{e}");
    assert_eq!(e["version"].as_i64().unwrap(), version, "{e}");
}

#[tokio::test]
async fn metrics_are_validated_and_default_to_click() {
    let app = spawn_app().await;
    // Without metrics: click only, primary, agreeing.
    let id = app
        .create_experiment(&["x", "y"], json!({"name": "uniform"}))
        .await;
    let e = app.experiment(id).await;
    assert_eq!(e["primary_metric"], "click", "{e}");
    assert_eq!(e["metrics"].as_array().unwrap().len(), 1, "{e}");
    assert_eq!(e["metrics"][0]["name"], "click", "{e}");
    assert_eq!(e["metrics_agree"], true, "{e}");

    let bad = [
        (json!({"metrics": []}), "invalid_metrics"),
        (
            json!({"metrics": [{"name": "Purchase"}]}),
            "invalid_metrics",
        ),
        (
            json!({"metrics": [{"name": "p", "credit": "most"}]}),
            "invalid_metrics",
        ),
        (
            json!({"metrics": [{"name": "p", "window_seconds": 0}]}),
            "invalid_metrics",
        ),
        (
            json!({"metrics": [{"name": "p", "missing": "loss"}]}),
            "invalid_metrics",
        ),
        (
            json!({"metrics": [{"name": "click", "window_seconds": 60}]}),
            "invalid_metrics",
        ),
        (
            json!({"metrics": [{"name": "p"}, {"name": "p"}]}),
            "invalid_metrics",
        ),
        (
            json!({"metrics": [{"name": "p"}], "primary_metric": "q"}),
            "unknown_metric",
        ),
        (json!({"primary_metric": "purchase"}), "unknown_metric"),
    ];
    for (extra, code) in bad {
        let mut body = json!({"name": "m", "rankers": ["x", "y"]});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let (s, b) = app.post("/v1/experiments", body.clone()).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{body} -> {b}");
        assert_eq!(error_code(&b), code, "{body} -> {b}");
    }
    // The test clock is off unless the server was started with it.
    let (s, b) = app
        .send(
            reqwest::Method::PUT,
            "/v1/admin/clock",
            Some(json!({"offset_seconds": 60})),
        )
        .await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::NOT_FOUND, "not_found"),
        "{b}"
    );
}

#[tokio::test]
async fn a_delayed_primary_metric_is_what_the_policy_learns_from() {
    let app = spawn_with_test_clock().await;
    let id = create(&app, purchase_first(), "purchase").await;
    let (il, pair, docs) = shown_list(&app, id).await;
    click(&app, &il, &docs[0]).await;
    // The click is counted for its metric, not learned by the policy.
    let e = wait_for_counts(&app, id, "click", (1, 0)).await;
    assert_eq!(e["outcomes_applied"], 0, "{e}");
    assert_eq!(e["primary_metric"], "purchase", "{e}");
    let (s, b) = app
        .post(
            "/v1/conversions",
            conversion(&il, "purchase", &docs[1], "o1"),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let e = wait_for_counts(&app, id, "purchase", (1, 0)).await;
    assert_eq!(e["outcomes_applied"], 1, "{e}");
    assert_eq!(wins(&e, "purchase", &pair[1], &pair[0]), 1, "{e}");
    // The experiment's own matrix is the primary metric's.
    let (s, m) = app.get(&format!("/v1/experiments/{id}/matrix")).await;
    assert_eq!(s, StatusCode::OK, "{m}");
    let total: u64 = m["wins"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap().iter().map(|v| v.as_u64().unwrap()))
        .sum();
    assert_eq!(total, 1, "{m}");
    assert_eq!(e["champion"]["ranker"], pair[1].as_str(), "{e}");
}

#[tokio::test]
async fn a_duel_takes_at_most_100_conversions_even_from_concurrent_batches() {
    let app = spawn_with_test_clock().await;
    let id = create(&app, purchase_first(), "click").await;
    let (il, _, docs) = shown_list(&app, id).await;
    let batch = |from: usize, n: usize| {
        let items: Vec<Value> = (from..from + n)
            .map(|i| conversion(&il, "purchase", &docs[0], &format!("order-{i}")))
            .collect();
        json!({ "conversions": items })
    };
    // Two batches of 60 new events at once: the cap holds across transactions.
    let (a, b) = tokio::join!(
        app.post("/v1/conversions/batch", batch(0, 60)),
        app.post("/v1/conversions/batch", batch(60, 60)),
    );
    let refused = |b: &Value| -> Vec<String> {
        b["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["error"]["code"].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(
        (a.0, b.0),
        (StatusCode::OK, StatusCode::OK),
        "{} {}",
        a.1,
        b.1
    );
    let mut codes = refused(&a.1);
    codes.extend(refused(&b.1));
    assert_eq!(codes.len(), 20, "{} {}", a.1, b.1);
    assert!(
        codes.iter().all(|c| c == "conversion_limit_reached"),
        "{codes:?}"
    );

    // A new event beyond the cap is refused; a retry of a recorded one is still a duplicate.
    let recorded: Vec<usize> = a.1["results"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, r)| r["status"] == "recorded")
        .map(|(i, _)| i)
        .collect();
    let (s, b) = app
        .post(
            "/v1/conversions",
            conversion(&il, "purchase", &docs[1], "one-more"),
        )
        .await;
    assert_eq!(
        (s.as_u16(), error_code(&b)),
        (409, "conversion_limit_reached"),
        "{b}"
    );
    let retry = conversion(&il, "purchase", &docs[0], &format!("order-{}", recorded[0]));
    let (s, b) = app.post("/v1/conversions", retry).await;
    assert_eq!(
        (s, &b["status"]),
        (StatusCode::OK, &json!("duplicate")),
        "{b}"
    );

    // Values: up to 1e9 in size, no more.
    let (il2, _, docs2) = shown_list(&app, id).await;
    let mut at_cap = conversion(&il2, "purchase", &docs2[0], "big");
    at_cap["value"] = json!(1e9);
    let (s, b) = app.post("/v1/conversions", at_cap).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let mut over = conversion(&il2, "purchase", &docs2[0], "bigger");
    over["value"] = json!(-1.5e9);
    let (s, b) = app.post("/v1/conversions", over).await;
    assert_eq!(
        (s.as_u16(), error_code(&b)),
        (422, "invalid_conversion"),
        "{b}"
    );
}
