//! Interleaving and click credit through HTTP: the shown list, the credit, exactly-once recording
//! shared with direct outcomes, and every kind of bad input refused without changing anything.

use crate::helpers::http_server::{
    TestApp, distinct_duel, error_code, ranker_lists as lists, shown_documents as shown, spawn_app,
};
use reqwest::StatusCode;
use serde_json::{Map, Value, json};

async fn experiment_with(app: &TestApp, interleaving: Value, window: i64) -> i64 {
    let (s, b) = app
        .post(
            "/v1/experiments",
            json!({
                "name": "interleaving",
                "rankers": ["x", "y"],
                "policy": {"name": "uniform"},
                "interleaving": interleaving,
                "attribution_window_secs": window,
            }),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    b["id"].as_i64().unwrap()
}

/// What a dashboard would see change if anything was recorded.
async fn recorded(app: &TestApp, id: i64) -> (i64, i64, i64) {
    let e = app.experiment(id).await;
    (
        e["outcomes_applied"].as_i64().unwrap(),
        e["ties_recorded"].as_i64().unwrap(),
        e["version"].as_i64().unwrap(),
    )
}

#[tokio::test]
async fn team_draft_shows_both_teams_credits_clicks_and_records_once() {
    let app = spawn_app().await;
    let id = experiment_with(&app, json!({"method": "team_draft"}), 3600).await;
    let e = app.experiment(id).await;
    assert_eq!(e["interleaving"]["method"], "team_draft");
    assert_eq!(e["interleaving"]["max_length"], 10);
    assert_eq!(e["interleaving"]["options"]["shared_prefix"], "draft");

    let (token, pair) = distinct_duel(&app, id).await;
    let a = ["a1", "a2", "a3", "a4"];
    let b = ["b1", "b2", "b3", "b4"];
    let body = json!({"duel_token": token, "lists": lists(&pair, &a, &b)});
    let (s, il) = app.post("/v1/interleavings", body.clone()).await;
    assert_eq!(s, StatusCode::OK, "{il}");
    assert_eq!(il["method"], "team_draft");
    let docs = shown(&il);
    // Disjoint lists of four: four complete rounds of one pick per team. Each shown document is
    // credited to the ranker that listed it, each team's documents keep their own order, and
    // every round has one pick per team (Team-Draft).
    assert_eq!(docs.len(), 8, "{il}");
    for (doc, team) in &docs {
        let owner = if doc.starts_with('a') {
            &pair[0]
        } else {
            &pair[1]
        };
        assert_eq!(team.as_ref(), Some(owner), "{il}");
    }
    let mut picks = Vec::new();
    for prefix in ["a", "b"] {
        let order: Vec<&str> = docs
            .iter()
            .map(|(d, _)| d.as_str())
            .filter(|d| d.starts_with(prefix))
            .collect();
        let expected: Vec<String> = (1..=order.len()).map(|i| format!("{prefix}{i}")).collect();
        assert_eq!(order, expected, "{il}");
        picks.push(order.len());
    }
    assert_eq!(picks, [4, 4], "{il}");
    for round in docs.chunks_exact(2) {
        assert_ne!(round[0].1, round[1].1, "one pick per team per round: {il}");
    }
    // The same duel and lists interleave the same way: a retried request shows the same list.
    let (_, again) = app.post("/v1/interleavings", body).await;
    assert_eq!(shown(&again), docs);

    // Two clicks on the first ranker's documents and one on the second's: the first wins.
    let itoken = il["interleaving_token"].clone();
    let clicks = json!({"interleaving_token": itoken, "clicks": ["a1", "a2", "b3"]});
    let (s, r) = app.post("/v1/clicks", clicks.clone()).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["winner"], pair[0].as_str());
    assert_eq!(r["status"], "recorded");
    assert_eq!(r["credit"][&pair[0]], 2.0);
    assert_eq!(r["credit"][&pair[1]], 1.0);
    assert_eq!(r["duel_id"], il["duel_id"]);
    assert_eq!(recorded(&app, id).await.0, 1);

    // Exactly once: the same clicks again are a duplicate; clicks that favour the other ranker
    // conflict; the direct outcome of the same duel agrees with the recorded one or conflicts.
    let (s, r) = app.post("/v1/clicks", clicks).await;
    assert_eq!(
        (s, r["status"].as_str()),
        (StatusCode::OK, Some("duplicate"))
    );
    let before = recorded(&app, id).await;
    let b1 = docs.iter().position(|(d, _)| d == "b1").unwrap();
    let (s, r) = app
        .post(
            "/v1/clicks",
            json!({"interleaving_token": itoken, "click_positions": [b1]}),
        )
        .await;
    assert_eq!(s, StatusCode::CONFLICT, "{r}");
    assert_eq!(error_code(&r), "outcome_conflict");
    let (s, r) = app.outcome(&token, &pair[0]).await;
    assert_eq!(
        (s, r["status"].as_str()),
        (StatusCode::OK, Some("duplicate"))
    );
    let (s, _) = app.outcome(&token, &pair[1]).await;
    assert_eq!(s, StatusCode::CONFLICT);
    assert_eq!(
        recorded(&app, id).await,
        before,
        "nothing changed after the first"
    );
    app.stop().await;
}

/// The token goes to the browser: a script that reads it must not learn which ranker drafted
/// which shown document (it could click for the one it wants), yet the server credits clicks.
#[tokio::test]
async fn the_interleaving_token_shows_no_team_but_clicks_are_credited() {
    use base64::Engine as _;
    let app = spawn_app().await;
    let id = experiment_with(&app, json!({"method": "team_draft"}), 3600).await;
    let (token, pair) = distinct_duel(&app, id).await;
    let a = ["first-ranker-doc-1", "first-ranker-doc-2"];
    let b = ["second-ranker-doc-1", "second-ranker-doc-2"];
    let body = json!({"duel_token": token, "lists": lists(&pair, &a, &b)});
    let (s, il) = app.post("/v1/interleavings", body).await;
    assert_eq!(s, StatusCode::OK, "{il}");
    let itoken = il["interleaving_token"].as_str().unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(itoken)
        .expect("a token is base64url");
    let readable = String::from_utf8_lossy(&bytes);
    for word in ["teams", "ranker-doc", "{\""] {
        assert!(
            !readable.contains(word),
            "`{word}` readable in {readable:?}"
        );
    }
    let first = shown(&il)[0].clone();
    let (s, r) = app.click_positions(&il, &[0]).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(
        Some(r["winner"].as_str().unwrap().to_string()),
        first.1,
        "{r} {il}"
    );
    app.stop().await;
}

#[tokio::test]
async fn no_clicks_is_a_tie_and_positions_work_like_ids() {
    let app = spawn_app().await;
    let id = experiment_with(&app, json!({"method": "balanced"}), 3600).await;
    let (token, pair) = distinct_duel(&app, id).await;
    let il = app
        .interleave(&token, lists(&pair, &["a", "b", "c"], &["b", "c", "a"]))
        .await;
    assert!(
        shown(&il).iter().all(|(_, team)| team.is_none()),
        "balanced has no teams"
    );
    let (s, r) = app
        .post(
            "/v1/clicks",
            json!({"interleaving_token": il["interleaving_token"], "click_positions": []}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["winner"], "tie");
    let (applied, ties, _) = recorded(&app, id).await;
    assert_eq!((applied, ties), (0, 1));

    // Balanced on A = (a, b, c), B = (b, c, a): whoever leads, "a" is shown within the first
    // two positions, where the shown prefix holds A's top document and at most B's top one, so
    // a click on "a" alone credits A or, at the depth where B's prefix is still empty, nobody.
    // B never wins on it, whether the click is posted by id or by position.
    for by_position in [false, true] {
        let (token, pair) = distinct_duel(&app, id).await;
        let il = app
            .interleave(&token, lists(&pair, &["a", "b", "c"], &["b", "c", "a"]))
            .await;
        let pos = shown(&il).iter().position(|(d, _)| d == "a").unwrap();
        let clicks = if by_position {
            json!({"interleaving_token": il["interleaving_token"], "click_positions": [pos]})
        } else {
            json!({"interleaving_token": il["interleaving_token"], "clicks": ["a"]})
        };
        let (s, r) = app.post("/v1/clicks", clicks).await;
        assert_eq!(s, StatusCode::OK, "{r}");
        assert!(pos < 2, "{il}");
        assert_ne!(r["winner"], pair[1].as_str(), "{r} on {il}");
    }
    app.stop().await;
}

#[tokio::test]
async fn probabilistic_and_optimized_credit_clicks_too() {
    let app = spawn_app().await;
    for (interleaving, max) in [
        (
            json!({"method": "probabilistic", "options": {"tau": 3}}),
            10,
        ),
        (json!({"method": "optimized", "max_length": 6}), 6),
    ] {
        let id = experiment_with(&app, interleaving.clone(), 3600).await;
        let (token, pair) = distinct_duel(&app, id).await;
        let a: Vec<String> = (1..=8).map(|i| format!("a{i}")).collect();
        let b: Vec<String> = (1..=8).map(|i| format!("b{i}")).collect();
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let b: Vec<&str> = b.iter().map(String::as_str).collect();
        let il = app.interleave(&token, lists(&pair, &a, &b)).await;
        let docs = shown(&il);
        assert!(!docs.is_empty() && docs.len() <= max, "{il}");
        // Click every shown document of the first ranker's list: with disjoint lists those can
        // only come from it (neither method credits a ranker for a document it did not list).
        let clicks: Vec<&str> = docs
            .iter()
            .map(|(d, _)| d.as_str())
            .filter(|d| d.starts_with('a'))
            .collect();
        assert!(!clicks.is_empty(), "{il}");
        let (s, r) = app
            .post(
                "/v1/clicks",
                json!({"interleaving_token": il["interleaving_token"], "clicks": clicks}),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{r}");
        // Probabilistic is then certain; Optimized draws A with probability d / Z and a tie
        // otherwise (its module docs), never B.
        if interleaving["method"] == "probabilistic" {
            assert_eq!(r["winner"], pair[0].as_str(), "{interleaving}: {r}");
        } else {
            assert_ne!(r["winner"], pair[1].as_str(), "{interleaving}: {r}");
        }
        assert!(
            r["credit"][&pair[0]].as_f64() > r["credit"][&pair[1]].as_f64(),
            "{r}"
        );
        assert_eq!(r["method"], interleaving["method"]);
    }
    app.stop().await;
}

#[tokio::test]
async fn bad_interleaving_settings_are_refused_at_creation() {
    let app = spawn_app().await;
    for (interleaving, status, code) in [
        (
            json!({"method": "coin"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_interleaving",
        ),
        (
            json!({"method": "team_draft_multileave"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_interleaving",
        ),
        (
            json!({"method": "optimized", "max_length": 20}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_interleaving",
        ),
        (
            json!({"method": "balanced", "options": {"tau": 2}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_interleaving",
        ),
        (
            json!({"method": "probabilistic", "options": {"tau": "high"}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_interleaving",
        ),
        (
            json!({"methd": "balanced"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
        ),
        (
            json!("team_draft"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
        ),
    ] {
        let (s, b) = app
            .post(
                "/v1/experiments",
                json!({"name": "x", "rankers": ["a", "b"], "policy": {"name": "uniform"},
                       "interleaving": interleaving}),
            )
            .await;
        assert_eq!(s, status, "{interleaving}: {b}");
        if !code.is_empty() {
            assert_eq!(error_code(&b), code, "{b}");
        }
        assert!(
            b["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
    }
    let (_, list) = app.get("/v1/experiments").await;
    assert_eq!(list["experiments"].as_array().unwrap().len(), 0);
    app.stop().await;
}

#[tokio::test]
async fn bad_lists_and_clicks_are_refused_and_change_nothing() {
    let app = spawn_app().await;
    let id = experiment_with(&app, json!({"method": "team_draft"}), 3600).await;
    let (token, pair) = distinct_duel(&app, id).await;
    let good_lists = lists(&pair, &["a1", "a2"], &["b1", "b2"]);
    let il = app.interleave(&token, good_lists.clone()).await;
    let itoken = il["interleaving_token"].as_str().unwrap().to_string();
    let before = recorded(&app, id).await;

    let mut one_list = Map::new();
    one_list.insert(pair[0].clone(), json!(["a1"]));
    let mut extra = good_lists.as_object().unwrap().clone();
    extra.insert("z".into(), json!([]));
    let long: Vec<String> = (0..1001).map(|i| format!("d{i}")).collect();
    let mut tampered = itoken.clone().into_bytes();
    let mid = tampered.len() / 2;
    tampered[mid] = if tampered[mid] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let cases: Vec<(&str, Value, StatusCode, &str)> = vec![
        (
            "/v1/interleavings",
            json!({"duel_token": "forged", "lists": good_lists}),
            StatusCode::BAD_REQUEST,
            "invalid_token",
        ),
        (
            "/v1/interleavings",
            json!({"duel_token": itoken, "lists": good_lists}),
            StatusCode::BAD_REQUEST,
            "invalid_token",
        ),
        (
            "/v1/interleavings",
            json!({"duel_token": token, "lists": one_list}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "lists_mismatch",
        ),
        (
            "/v1/interleavings",
            json!({"duel_token": token, "lists": extra}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "lists_mismatch",
        ),
        (
            "/v1/interleavings",
            json!({"duel_token": token, "lists": lists(&pair, &["a1", ""], &[])}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_list",
        ),
        (
            "/v1/interleavings",
            json!({"duel_token": token, "lists": lists(&pair, &long.iter().map(String::as_str).collect::<Vec<_>>(), &[])}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_list",
        ),
        (
            "/v1/interleavings",
            json!({"duel_token": token, "lists": {"x": [1, 2]}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
        ),
        (
            "/v1/clicks",
            json!({"interleaving_token": itoken, "clicks": ["a1", "nowhere"]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "click_not_shown",
        ),
        (
            "/v1/clicks",
            json!({"interleaving_token": itoken, "click_positions": [0, 4]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "click_not_shown",
        ),
        (
            "/v1/clicks",
            json!({"interleaving_token": itoken, "clicks": ["a1"], "click_positions": [0]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_clicks",
        ),
        (
            "/v1/clicks",
            json!({"interleaving_token": itoken}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_clicks",
        ),
        (
            "/v1/clicks",
            json!({"interleaving_token": tampered, "clicks": ["a1"]}),
            StatusCode::BAD_REQUEST,
            "invalid_token",
        ),
        (
            "/v1/clicks",
            json!({"interleaving_token": token, "clicks": ["a1"]}),
            StatusCode::BAD_REQUEST,
            "invalid_token",
        ),
        (
            "/v1/clicks",
            json!({"interleaving_token": itoken, "click_positions": [-1]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
        ),
        (
            "/v1/clicks",
            json!({"interleaving_token": itoken, "clicks": ["a1"], "extra": 1}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
        ),
    ];
    for (path, body, status, code) in cases {
        let (s, b) = app.post(path, body.clone()).await;
        assert_eq!(s, status, "{path} {body}: {b}");
        if !code.is_empty() {
            assert_eq!(error_code(&b), code, "{path} {body}: {b}");
        }
        assert!(
            b["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{b}"
        );
    }
    assert_eq!(
        recorded(&app, id).await,
        before,
        "bad input changed nothing"
    );
    // The valid clicks still count after all that.
    let (s, r) = app
        .post(
            "/v1/clicks",
            json!({"interleaving_token": itoken, "clicks": ["b1"]}),
        )
        .await;
    assert_eq!(
        (s, r["winner"].as_str()),
        (StatusCode::OK, Some(pair[1].as_str()))
    );
    app.stop().await;
}

#[tokio::test]
async fn expired_duels_cannot_be_interleaved_or_credited() {
    let app = spawn_app().await;
    let id = experiment_with(&app, json!({"method": "team_draft"}), 1).await;
    let (token, pair) = distinct_duel(&app, id).await;
    let il = app.interleave(&token, lists(&pair, &["a"], &["b"])).await;
    // The wait is the test: the duel outlives its attribution window (1 s, the shortest).
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let (s, b) = app
        .post(
            "/v1/interleavings",
            json!({"duel_token": token, "lists": lists(&pair, &["a"], &["b"])}),
        )
        .await;
    assert_eq!((s, error_code(&b)), (StatusCode::GONE, "duel_expired"));
    let (s, b) = app
        .post(
            "/v1/clicks",
            json!({"interleaving_token": il["interleaving_token"], "clicks": ["a"]}),
        )
        .await;
    assert_eq!((s, error_code(&b)), (StatusCode::GONE, "duel_expired"));
    assert_eq!(recorded(&app, id).await.0, 0);
    app.stop().await;
}
