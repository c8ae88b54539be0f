//! The dashboard in a real browser: headless Chromium against a real server and Postgres.

use crate::helpers::browser::{Browser, ONE_AT_A_TIME};
use crate::helpers::http_server::{
    TestApp, spawn_app, spawn_app_on, spawn_app_with_history_every_group,
};
use crate::helpers::{http_server, postgres};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// A ranker name that would run a script if a page ever inserted it as markup.
const XSS: &str = "<img src=x onerror=\"window.__xss=1\">";

/// Plays `n` duels; the ranker listed first in `strength` wins against any later one.
async fn play(app: &TestApp, id: i64, n: usize, strength: &[&str]) {
    let rank = |name: &str| strength.iter().position(|s| *s == name).unwrap();
    for _ in 0..n {
        let (token, r) = app.duel(id).await;
        let winner = if rank(&r[0]) <= rank(&r[1]) {
            &r[0]
        } else {
            &r[1]
        };
        let (s, b) = app.outcome(&token, winner).await;
        assert_eq!(s, StatusCode::OK, "{b}");
    }
}

/// Types `key` into the key prompt's input (found by `input`) and submits the form.
async fn enter_key(b: &Browser, input: &str, key: &str) {
    b.wait_for(input).await.send_keys(key).await.unwrap();
    b.wait_for("#key-form button[type=submit]")
        .await
        .click()
        .await
        .unwrap();
}

fn names(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn pages_show_the_experiment_and_refresh_themselves() {
    let _one = ONE_AT_A_TIME.lock().await;
    // A history point for every group of outcomes, so that the charts have several at once.
    let app = spawn_app_with_history_every_group().await;
    let rankers = ["bm25", "lambdamart", XSS, "random"];
    let (s, e) = app
        .post(
            "/v1/experiments",
            json!({"name": format!("exp {XSS}"), "rankers": rankers, "policy": {"name": "uniform"}, "seed": 1}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{e}");
    let id = e["id"].as_i64().unwrap();
    let strength = ["lambdamart", XSS, "bm25", "random"];
    play(&app, id, 30, &strength).await;
    play(&app, id, 30, &strength).await;
    let api = app.experiment(id).await;
    let champion = api["champion"]["ranker"].as_str().unwrap().to_string();

    let b = Browser::start(1400, 1000).await;
    // The list page.
    b.goto(&format!("{}/ui/", app.base)).await;
    let row = format!("#experiments tr[data-id=\"{id}\"]");
    b.wait_for(&row).await;
    let text = b.text(&row).await;
    assert!(
        text.contains(&format!("exp {XSS}")),
        "the name shows as text: {text}"
    );
    assert!(text.contains("60") && text.contains(&champion), "{text}");

    // The experiment page.
    b.goto(&format!("{}/ui/experiments/{id}", app.base)).await;
    b.wait_for("body[data-loaded]").await;
    b.js("window.sameDocument = true; return true").await;
    let words = b.text("#champion-text").await;
    assert!(words.contains(&champion), "{words}");
    assert_eq!(b.text("#name").await, format!("exp {XSS}"));
    // Leaderboard: one row per ranker, the champion first.
    let rows = b.all("#leaderboard tbody tr").await;
    assert_eq!(rows.len(), 4);
    assert_eq!(
        rows[0].attr("data-ranker").await.unwrap().as_deref(),
        Some(champion.as_str())
    );
    // Heatmap: K x K cells, each naming its two rankers.
    let cells = b
        .js("return [...document.querySelectorAll('#heatmap td')].map(c => [c.dataset.row, c.dataset.col])")
        .await;
    let cells = cells.as_array().unwrap();
    assert_eq!(cells.len(), 16);
    let pairs: BTreeSet<(String, String)> = cells
        .iter()
        .map(|c| {
            (
                c[0].as_str().unwrap().to_string(),
                c[1].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(pairs.len(), 16);
    let m = app.get(&format!("/v1/experiments/{id}/matrix")).await.1;
    assert_eq!(
        pairs.iter().map(|p| p.0.clone()).collect::<BTreeSet<_>>(),
        names(&m["rankers"])
    );
    // History chart: every point drawn.
    let (_, h) = app.get(&format!("/v1/experiments/{id}/history")).await;
    let n_points = h["points"].as_array().unwrap().len();
    assert!(n_points >= 2, "{h}");
    assert_eq!(
        b.wait_for("#chart-outcomes canvas")
            .await
            .text()
            .await
            .unwrap(),
        "",
        "uPlot draws on a canvas"
    );
    assert_eq!(
        b.js("return document.getElementById('chart-outcomes').dataset.points")
            .await,
        json!(n_points.to_string())
    );
    // Champion chart: every point, one row per ranker that was ever champion.
    b.wait_for("#chart-champion canvas").await;
    assert_eq!(
        b.js("return document.getElementById('chart-champion').dataset.points")
            .await,
        json!(n_points.to_string())
    );
    let champions: BTreeSet<&str> = h["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["champion"].as_str())
        .collect();
    assert!(!champions.is_empty(), "{h}");
    assert_eq!(
        b.js("return document.getElementById('chart-champion').dataset.champions")
            .await,
        json!(champions.len().to_string())
    );
    // The XSS name is text everywhere and ran nothing.
    assert_eq!(
        b.js("return document.querySelectorAll('main img').length")
            .await,
        json!(0)
    );
    assert_eq!(b.js("return window.__xss === undefined").await, json!(true));
    let xss_row = b
        .text(&format!(
            "#leaderboard tr[data-ranker='{}']",
            XSS.replace('"', "\\\"")
        ))
        .await;
    assert!(xss_row.contains(XSS), "{xss_row}");

    // More outcomes: the page updates without reloading.
    let version = b.js("return document.body.dataset.version").await;
    play(&app, id, 20, &strength).await;
    b.until(
        "the page shows the new version",
        &format!("return document.body.dataset.version !== {version}"),
    )
    .await;
    let total: i64 = app.experiment(id).await["outcomes_applied"]
        .as_i64()
        .unwrap();
    assert_eq!(total, 80);
    b.until(
        "the leaderboard counts the new outcomes",
        "return [...document.querySelectorAll('#leaderboard tbody tr td:nth-child(4)')]
            .reduce((s, td) => s + Number(td.textContent.replace(/,/g, '')), 0) === 80",
    )
    .await;
    b.until(
        "the chart has the new point",
        &format!(
            "return Number(document.getElementById('chart-outcomes').dataset.points) > {n_points}"
        ),
    )
    .await;
    assert_eq!(
        b.js("return window.sameDocument === true").await,
        json!(true)
    );
    assert!(b.text("#status").await.starts_with("Last updated"));

    // No console errors (a CSP violation or a failed request would be one).
    let errors = b.console_errors().await;
    assert!(errors.is_empty(), "console errors: {errors:?}");

    // The server going away is reported, and the page stays.
    app.stop().await;
    b.until(
        "the page says the server cannot be reached",
        "return document.getElementById('status').textContent.startsWith('Cannot reach the server')",
    )
    .await;
    b.close().await;
}

/// A multi-ranker experiment's page says how many rankers a query compares, and its leaderboard
/// and heatmap count the pairwise results of its multileaved queries.
#[tokio::test]
async fn a_multi_ranker_experiment_shows_its_queries_as_pairs() {
    let _one = ONE_AT_A_TIME.lock().await;
    let app = spawn_app().await;
    let rankers = ["f1", "f2", "f3", "f4", "f5", "f6"];
    let (s, e) = app
        .post(
            "/v1/experiments",
            json!({"name": "multileaved", "rankers": rankers, "policy": {"name": "mdb"},
                   "rankers_per_query": 4, "seed": 1}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{e}");
    let id = e["id"].as_i64().unwrap();
    // Every query ranks its rankers by name, f1 best: f1 becomes the champion.
    let mut decided = 0;
    for _ in 0..40 {
        let (s, d) = app
            .post(&format!("/v1/experiments/{id}/duels"), json!({}))
            .await;
        assert_eq!(s, StatusCode::OK, "{d}");
        let mut shown: Vec<String> = d["rankers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap().to_string())
            .collect();
        shown.sort();
        let n = shown.len();
        decided += n * (n - 1) / 2;
        let (s, r) = app
            .post(
                "/v1/outcomes",
                json!({"duel_token": d["duel_token"], "ordering": shown}),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{r}");
    }
    let api = app.experiment(id).await;
    assert_eq!(api["outcomes_applied"], decided);
    assert_eq!(api["champion"]["ranker"], "f1");

    let b = Browser::start(1400, 1000).await;
    b.goto(&format!("{}/ui/experiments/{id}", app.base)).await;
    b.wait_for("body[data-loaded]").await;
    let settings = b.text("#interleaving").await;
    assert!(
        settings.contains("up to 4 (multileaved)") && settings.contains("team draft multileave"),
        "{settings}"
    );
    assert!(b.text("#champion-text").await.contains("f1"));
    let summary = b.text("#champion-detail").await;
    assert!(
        summary.contains(&format!("{decided} pairwise outcomes")),
        "{summary}"
    );
    assert_eq!(b.all("#leaderboard tbody tr").await.len(), 6);
    b.until(
        "the leaderboard counts every pairwise result",
        &format!(
            "return [...document.querySelectorAll('#leaderboard tbody tr td:nth-child(4)')]
                .reduce((s, td) => s + Number(td.textContent.replace(/,/g, '')), 0) === {decided}"
        ),
    )
    .await;
    assert_eq!(
        b.js("return document.querySelectorAll('#heatmap td').length")
            .await,
        json!(36)
    );
    let errors = b.console_errors().await;
    assert!(errors.is_empty(), "console errors: {errors:?}");
    b.close().await;
    app.stop().await;
}

const ADMIN: &str = "admin-key-0123456789-abcdefghij";
const READ: &str = "read-key-0123456789-abcdefghij";

#[tokio::test]
async fn api_keys_are_asked_for_and_only_admin_keys_see_actions() {
    let _one = ONE_AT_A_TIME.lock().await;
    let db = postgres::fresh_database().await;
    let app = spawn_app_on(&db, &format!("admin:{ADMIN},read:{READ}"))
        .await
        .with_key(ADMIN);
    let id = app
        .create_experiment(&["a", "b", "c"], json!({"name": "uniform"}))
        .await;
    play(&app, id, 5, &["a", "b", "c"]).await;

    let b = Browser::start(1200, 900).await;
    let page = format!("{}/ui/experiments/{id}", app.base);
    b.goto(&page).await;
    let prompt = b.text("#key-form:not([hidden]) #key-message").await;
    assert!(prompt.contains("needs an API key"), "{prompt}");

    // A wrong key: a clear message, and the prompt again.
    enter_key(&b, "#key-input", "not-a-key-at-all-00000").await;
    b.until(
        "the wrong key is refused",
        "return document.getElementById('key-message').textContent.includes('not accepted')",
    )
    .await;

    // A read key: the experiment, no admin actions.
    enter_key(&b, "#key-input", READ).await;
    b.wait_for("body[data-loaded]").await;
    b.wait_for("#leaderboard tbody tr").await;
    assert_eq!(
        b.js("return document.getElementById('actions').hidden")
            .await,
        json!(true)
    );
    assert_eq!(b.all("#leaderboard button.retire").await.len(), 0);
    // The key lives in this tab's sessionStorage only: not in the URL, not in a cookie.
    assert_eq!(
        b.js("return sessionStorage.getItem('joust.apiKey')").await,
        json!(READ)
    );
    assert_eq!(b.js("return document.cookie").await, json!(""));
    assert!(
        !b.client
            .current_url()
            .await
            .unwrap()
            .as_str()
            .contains(READ)
    );

    // An admin key: actions, each confirmed before it happens.
    b.wait_for("#forget-key").await.click().await.unwrap();
    enter_key(&b, "#key-form:not([hidden]) #key-input", ADMIN).await;
    b.wait_for("#actions:not([hidden])").await;
    b.until(
        "each active ranker has a retire button",
        "return document.querySelectorAll('#leaderboard button.retire').length === 3",
    )
    .await;
    b.wait_for("#actions button[data-status=paused]")
        .await
        .click()
        .await
        .unwrap();
    b.wait_for("#confirm:not([hidden])").await;
    assert_eq!(
        app.experiment(id).await["status"],
        "running",
        "nothing before confirmation"
    );
    b.wait_for("#confirm-yes").await.click().await.unwrap();
    b.until(
        "the page shows the pause",
        "return document.querySelector('#meta .badge').textContent === 'paused'",
    )
    .await;
    assert_eq!(app.experiment(id).await["status"], "paused");
    // Retiring a ranker, cancelled, changes nothing.
    b.all("#leaderboard button.retire").await[0]
        .click()
        .await
        .unwrap();
    b.wait_for("#confirm-no").await.click().await.unwrap();
    let active = app.experiment(id).await["rankers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["active"] == json!(true))
        .count();
    assert_eq!(active, 3);
    b.close().await;
    app.stop().await;
}

#[tokio::test]
async fn pages_forbid_inline_scripts_and_are_small() {
    let app = spawn_app().await;
    let mut total = 0;
    for path in ["/ui/", "/ui/experiments/1"] {
        let resp = app.get_response(path).await;
        assert_eq!(resp.status(), StatusCode::OK);
        let csp = resp.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
            "{csp}"
        );
        let html = resp.text().await.unwrap();
        assert!(
            !html.contains("<script>") && !html.contains("http"),
            "no inline script, nothing external"
        );
        if path != "/ui/" {
            total += html.len();
            // Every asset the experiment page loads.
            for asset in html.split("/ui/assets/").skip(1) {
                let name = asset.split('"').next().unwrap();
                let resp = app
                    .client
                    .get(format!("{}/ui/assets/{name}", app.base))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(resp.status(), StatusCode::OK, "{name}");
                total += resp.bytes().await.unwrap().len();
            }
        }
    }
    assert!(
        total < 150_000,
        "the experiment page's code weighs {total} bytes"
    );
    let (s, b) = app.get("/ui/assets/nothing.js").await;
    assert_eq!(
        (s, http_server::error_code(&b)),
        (StatusCode::NOT_FOUND, "not_found")
    );
    app.stop().await;
}

#[tokio::test]
async fn the_decision_card_shows_what_is_missing_then_the_decided_champion() {
    let _one = ONE_AT_A_TIME.lock().await;
    let app = spawn_app().await;
    let (s, e) = app
        .post(
            "/v1/experiments",
            // Uniform keeps comparing every pair, so the decision arrives within some hundreds
            // of duels whatever the default policy does; this test is about the page.
            json!({"name": "decides", "rankers": ["bm25", "bert", XSS], "seed": 3,
                   "policy": {"name": "uniform"}, "stop_rule": {"min_outcomes": 1000000}}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{e}");
    let id = e["id"].as_i64().unwrap();
    let strength = ["bert", XSS, "bm25"];
    play(&app, id, 20, &strength).await;

    let b = Browser::start(1400, 1000).await;
    b.goto(&format!("{}/ui/experiments/{id}", app.base)).await;
    b.wait_for("body[data-loaded]").await;
    let words = b.text("#decision-text").await;
    assert!(words.starts_with("Not decided yet"), "{words}");
    // One row per ranker that may still be best (three here), each naming the rivals it lacks
    // evidence against; names stay text.
    let api = app.experiment(id).await;
    let contenders = api["decision"]["possible_best"].as_array().unwrap();
    let rows = b.all("#possible-best tbody tr").await;
    assert_eq!(rows.len(), contenders.len());
    assert!(!rows.is_empty());
    let first = &contenders[0];
    let row = rows[0].text().await.unwrap();
    assert!(row.starts_with(first["ranker"].as_str().unwrap()), "{row}");
    // Compared rivals named, what the decision needs most first; rivals never compared counted.
    let missing = first["missing"].as_array().unwrap();
    let unseen = missing.iter().filter(|m| m["comparisons"] == 0.0).count();
    assert_eq!(first["never_compared"], unseen, "{first}");
    if let Some(m) = missing.iter().find(|m| m["comparisons"] != 0.0) {
        let rival = m["rival"].as_str().unwrap();
        assert!(row.contains(&format!("{rival}: ")), "{row}");
    }
    if unseen > 0 {
        assert!(row.contains(&format!("{unseen} never compared")), "{row}");
    }
    assert!(b.text("#self-duels").await.contains("no evidence"));
    assert!(
        b.text("#decision-rules")
            .await
            .contains("Concludes itself once decided and at least 1,000,000 outcomes")
    );
    assert_eq!(b.js("return window.__xss === undefined").await, true);

    // Until decided (the strongest ranker always wins): the page says so by itself.
    let mut played = 20;
    while app.experiment(id).await["decision"]["decided"] != true && played < 5_000 {
        play(&app, id, 100, &strength).await;
        played += 100;
    }
    let api = app.experiment(id).await;
    assert_eq!(api["decision"]["decided"], true, "{}", api["decision"]);
    b.until(
        "the page shows the decision",
        "return document.getElementById('decision-text').textContent.startsWith('Decided')",
    )
    .await;
    let words = b.text("#decision-text").await;
    assert!(words.contains("bert") && words.contains("95.0%"), "{words}");
    assert!(b.all("#possible-best tbody tr").await.is_empty());
    assert!(
        b.console_errors().await.is_empty(),
        "{:?}",
        b.console_errors().await
    );
    b.close().await;
}
