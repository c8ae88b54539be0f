//! Units and segments over HTTP against a real Postgres: a unit's duel and interleaved list are
//! the same on two replicas of one database (across an outcome applied in between, and on the
//! next page), a segment beyond the experiment's limit is refused and changes nothing, and each
//! segment's champion follows the outcomes fed to it.

use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;

use crate::helpers::http_server::{TestApp, error_code, spawn_app, spawn_app_on};
use crate::helpers::postgres::fresh_database;

const RANKERS: [&str; 4] = ["bm25", "lambdamart", "bert", "colbert"];

async fn create(app: &TestApp, extra: Value) -> i64 {
    let mut body = json!({"name": "units", "rankers": RANKERS, "seed": 11});
    // `extra` may replace any of these, the rankers too.
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    let (status, body) = app.post("/v1/experiments", body).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["id"].as_i64().unwrap()
}

/// Each ranker's list: 30 documents, partly shared, in a ranker-specific order.
fn lists(rankers: &[Value]) -> Value {
    let mut m = serde_json::Map::new();
    for r in rankers {
        let name = r.as_str().unwrap();
        let shift = RANKERS.iter().position(|x| *x == name).unwrap() * 7;
        let docs: Vec<String> = (0..30).map(|i| format!("d{}", (i + shift) % 45)).collect();
        m.insert(name.to_string(), json!(docs));
    }
    Value::Object(m)
}

async fn interleave_page(app: &TestApp, duel: &Value, page: Option<usize>) -> Value {
    let mut body = json!({"duel_token": duel["duel_token"], "lists": lists(duel["rankers"].as_array().unwrap())});
    if let Some(p) = page {
        body["page"] = json!(p);
    }
    let (status, shown) = app.post("/v1/interleavings", body).await;
    assert_eq!(status, StatusCode::OK, "{shown}");
    shown
}

async fn version_on(app: &TestApp, id: i64) -> i64 {
    app.experiment(id).await["version"].as_i64().unwrap()
}

#[tokio::test]
async fn a_units_duel_and_list_are_the_same_on_two_replicas_and_pages() {
    let db = fresh_database().await;
    let a = spawn_app_on(&db, "").await;
    let b = spawn_app_on(&db, "").await;
    let id = create(&a, json!({"units": {"window_seconds": 3600}})).await;
    let asks: Vec<Value> = (0..12)
        .map(|i| json!({"unit": format!("user-{}", i / 3), "query": format!("query {}", i % 3)}))
        .collect();
    // First asks, on replica a; each duel's outcome is posted at once.
    let mut first = Vec::new();
    for ask in &asks {
        let duel = a.duel_for(id, ask.clone()).await;
        let page1 = interleave_page(&a, &duel, None).await;
        let page2 = interleave_page(&a, &duel, Some(2)).await;
        let winner = duel["rankers"][0].as_str().unwrap().to_string();
        let (status, body) = a
            .outcome(duel["duel_token"].as_str().unwrap(), &winner)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        first.push((duel, page1, page2));
    }
    // The outcomes change the live state on both replicas before the second asks.
    let before = first[0].0["duel_id"].clone();
    let applied_version = eventually_version_above(&b, id, 1).await;
    assert!(applied_version > 1);
    let mut pairs = std::collections::HashSet::new();
    for (ask, (duel, page1, page2)) in asks.iter().zip(&first) {
        let again = b.duel_for(id, ask.clone()).await;
        assert_eq!(again["duel_id"], duel["duel_id"], "{ask}");
        assert_eq!(again["rankers"], duel["rankers"], "{ask}");
        pairs.insert(duel["rankers"].to_string());
        let again1 = interleave_page(&b, &again, None).await;
        let again2 = interleave_page(&b, &again, Some(2)).await;
        assert_eq!(again1["documents"], page1["documents"], "{ask}");
        assert_eq!(again2["documents"], page2["documents"], "{ask}");
        assert_eq!(page1["offset"], 0);
        assert_eq!(page2["offset"], 10);
        // Page 2 continues page 1: no document shown twice.
        let ids = |p: &Value| -> Vec<String> {
            p["documents"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["id"].as_str().unwrap().to_string())
                .collect()
        };
        let (one, two) = (ids(page1), ids(page2));
        assert!(!two.is_empty());
        assert!(two.iter().all(|d| !one.contains(d)), "{one:?} {two:?}");
        // The same query again (a reload) is the same duel: its outcome was recorded once.
        let winner = duel["rankers"][0].as_str().unwrap();
        let (status, body) = b
            .outcome(again["duel_token"].as_str().unwrap(), winner)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["status"], "duplicate", "{body}");
    }
    // Different units and queries do not all get one duel, and a duel without a unit is new
    // every time.
    assert!(pairs.len() > 1, "{pairs:?}");
    let plain1 = a.duel_for(id, json!({})).await;
    let plain2 = a.duel_for(id, json!({})).await;
    assert_ne!(plain1["duel_id"], plain2["duel_id"]);
    assert_ne!(before, plain1["duel_id"]);
    a.stop().await;
    b.stop().await;
}

async fn eventually_version_above(app: &TestApp, id: i64, v: i64) -> i64 {
    let until = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let seen = version_on(app, id).await;
        if seen > v {
            return seen;
        }
        assert!(
            std::time::Instant::now() < until,
            "no version above {v} on the other replica"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn clicks_on_page_two_credit_the_ranker_that_placed_the_document() {
    let app = spawn_app().await;
    let id = create(&app, json!({})).await;
    for u in 0..10 {
        let duel = app
            .duel_for(id, json!({"unit": format!("u{u}"), "query": "q"}))
            .await;
        if duel["rankers"][0] == duel["rankers"][1] {
            continue;
        }
        let page2 = interleave_page(&app, &duel, Some(2)).await;
        let doc = &page2["documents"][0];
        let Some(team) = doc["ranker"].as_str() else {
            continue;
        };
        let (status, body) = app
            .post(
                "/v1/clicks",
                json!({"interleaving_token": page2["interleaving_token"], "clicks": [doc["id"]]}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["winner"], team, "{body}");
        // By position: positions count from the top of the whole list.
        let (status, body) = app
            .post(
                "/v1/clicks",
                json!({"interleaving_token": page2["interleaving_token"], "click_positions": [10]}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["status"], "duplicate", "{body}");
        return;
    }
    panic!("no duel of two rankers with a drafted first document on page 2");
}

#[tokio::test]
async fn bad_unit_requests_and_paging_of_optimized_lists_are_refused() {
    let app = spawn_app().await;
    let id = create(&app, json!({})).await;
    let path = format!("/v1/experiments/{id}/duels");
    for (body, code) in [
        (json!({"query": "q"}), "invalid_unit"),
        (json!({"unit": ""}), "invalid_unit"),
        (json!({"unit": "x".repeat(513)}), "invalid_unit"),
        (json!({"segment": ""}), "invalid_segment"),
        (json!({"unit": "u", "extra": 1}), "invalid_body"),
        (json!([]), "invalid_body"),
    ] {
        let (status, err) = app.post(&path, body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body} {err}");
        assert_eq!(error_code(&err), code, "{body}");
    }
    let (status, err) = app
        .post(
            "/v1/experiments",
            json!({"name": "x", "rankers": ["a", "b"], "units": {"window_seconds": 0}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_code(&err), "invalid_units");
    let (status, body) = app
        .post(
            "/v1/experiments",
            json!({"name": "opt", "rankers": ["bm25", "bert"], "interleaving": {"method": "optimized"}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let opt = body["id"].as_i64().unwrap();
    let duel = app.duel_for(opt, json!({"unit": "u", "query": "q"})).await;
    let mut req = json!({"duel_token": duel["duel_token"], "lists": lists(duel["rankers"].as_array().unwrap()), "page": 2});
    let (status, err) = app.post("/v1/interleavings", req.clone()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    assert_eq!(error_code(&err), "paging_unsupported");
    req["page"] = json!(1);
    let (status, body) = app.post("/v1/interleavings", req).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn a_segment_beyond_the_limit_is_refused_and_changes_nothing() {
    let app = spawn_app().await;
    let id = create(&app, json!({"segments": {"max_segments": 2}})).await;
    let path = format!("/v1/experiments/{id}/duels");
    for label in ["mobile", "desktop", "mobile"] {
        app.duel_for(id, json!({"segment": label})).await;
    }
    let (status, err) = app.post(&path, json!({"segment": "tablet"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{err}");
    assert_eq!(error_code(&err), "segment_limit_reached");
    crate::helpers::http_server::wait_for_flushed_duels(&app, id, 3).await;
    let view = app.experiment(id).await;
    assert_eq!(view["duels_issued"], 3, "{view}");
    // Known labels still work; the refused one was not registered.
    app.duel_for(id, json!({"segment": "desktop"})).await;
    let (status, _) = app.post(&path, json!({"segment": "tablet"})).await;
    assert_eq!(status, StatusCode::CONFLICT);
    let labels: Vec<String> = sqlx::query_scalar(
        "SELECT label FROM experiment_segments WHERE experiment_id = $1 ORDER BY idx",
    )
    .bind(id)
    .fetch_all(&sqlx::PgPool::connect(&app.db_url).await.unwrap())
    .await
    .unwrap();
    assert_eq!(labels, ["mobile", "desktop"]);
}

#[tokio::test]
async fn each_segment_reports_the_champion_of_its_own_outcomes() {
    let app = spawn_app().await;
    // Uniform pairs, so each segment compares its best ranker with every other (a policy that
    // concentrates on bert against bm25 may leave a segment's best never compared with a third
    // ranker, and the segment's Copeland leader is then whoever beat the most).
    let id = create(&app, json!({"policy": {"name": "uniform"}})).await;
    // On phones bert wins every duel it is in; on desktops bm25 does. Elsewhere the first
    // ranker of the duel wins.
    let mut posted = 0;
    for i in 0..240 {
        let (segment, best) = if i % 2 == 0 {
            ("phone", "bert")
        } else {
            ("desktop", "bm25")
        };
        let duel = app.duel_for(id, json!({"segment": segment})).await;
        let r: Vec<&str> = duel["rankers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let winner = if r.contains(&best) { best } else { r[0] };
        let (status, body) = app
            .outcome(duel["duel_token"].as_str().unwrap(), winner)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        posted += 1;
    }
    let view = app.experiment(id).await;
    let segments = view["segments"]["segments"].as_array().unwrap();
    let find = |label: &str| {
        segments
            .iter()
            .find(|s| s["label"] == label)
            .unwrap_or_else(|| panic!("{view}"))
    };
    let (phone, desktop) = (find("phone"), find("desktop"));
    assert_eq!(phone["champion"], "bert", "{phone}");
    assert_eq!(desktop["champion"], "bm25", "{desktop}");
    let n = |s: &Value| s["outcomes"].as_i64().unwrap() + s["ties"].as_i64().unwrap();
    // The policy learned from all of it, and every outcome is in exactly one segment.
    assert_eq!(n(phone) + n(desktop), posted);
    assert_eq!(
        view["outcomes_applied"].as_i64().unwrap() + view["ties_recorded"].as_i64().unwrap(),
        posted
    );
    let wins = phone["wins"].as_array().unwrap();
    assert_eq!(wins.len(), 4);
}

/// One unit sending many queries that all prefer one ranker: counted per query, the decision
/// is soon made; counted per unit, that unit is one vote, and nothing is decided. The policy
/// learns from every outcome either way.
#[tokio::test]
async fn one_heavy_unit_does_not_decide_an_experiment_that_aggregates_by_unit() {
    let app = spawn_app().await;
    let mut decided = Vec::new();
    // Decisive outcomes at which counting per query decided.
    let mut needed = None;
    for aggregation in ["query", "unit"] {
        let id = create(
            &app,
            json!({"rankers": ["bm25", "bert"], "units": {"aggregation": aggregation, "window_seconds": 1}}),
        )
        .await;
        // Post the heavy unit's queries one at a time. Counted per query, the experiment is
        // decided after some number of decisive outcomes (self-duels are ties); counted per
        // unit, the same number of decisive outcomes must leave it undecided. How many queries
        // that takes depends on the policy's choices, so the test counts decisive outcomes
        // instead of assuming a share; 3,000 queries bound a policy that never compares the pair.
        let mut q = 0;
        let view = loop {
            let duel = app
                .duel_for(id, json!({"unit": "heavy", "query": format!("q{q}")}))
                .await;
            q += 1;
            let r = duel["rankers"].as_array().unwrap();
            let winner = if r.iter().any(|x| x == "bert") {
                "bert"
            } else {
                r[0].as_str().unwrap()
            };
            let (status, body) = app
                .outcome(duel["duel_token"].as_str().unwrap(), winner)
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            // The view waits until the outcome is applied.
            let view = app.experiment(id).await;
            let applied = view["outcomes_applied"].as_i64().unwrap();
            match needed {
                None if view["decision"]["decided"] == true => {
                    needed = Some(applied);
                    break view;
                }
                Some(n) if applied >= n => break view,
                _ => {}
            }
            assert!(q < 3000, "{q} queries: {view}");
        };
        if aggregation == "unit" {
            // bert beat bm25 once as far as units go: one unit, one pair.
            assert_eq!(view["units"]["votes_counted"], 1, "{}", view["units"]);
        } else {
            assert_eq!(view["units"]["votes_counted"], Value::Null);
        }
        decided.push(view["decision"]["decided"].as_bool().unwrap());
    }
    assert_eq!(decided, [true, false]);
}
