//! Clicks from the browser through HTTP on a server with API keys: an experiment with
//! `browser_clicks` takes clicks with no key on the strength of the interleaving token, from the
//! origins it lists; CORS preflights and answers; `text/plain` bodies; turning it off; invalid
//! origins refused without changing anything; exactly once as for any click.

use crate::helpers::eventually::eventually;
use crate::helpers::http_server::{TestApp, distinct_duel, error_code, ranker_lists, spawn_app_on};
use crate::helpers::postgres;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::Duration;

const ADMIN: &str = "admin-key-0123456789-abcdefghij";
const INGEST: &str = "ingest-key-0123456789-abcdefghij";
const SITE: &str = "https://search.example.com";
const OTHER_SITE: &str = "http://localhost:5173";

async fn keyed_app() -> TestApp {
    let db = postgres::fresh_database().await;
    spawn_app_on(&db, &format!("admin:{ADMIN},ingest:{INGEST}"))
        .await
        .with_key(ADMIN)
}

/// Creates an experiment of two rankers, with `browser_clicks` when given.
async fn experiment(app: &TestApp, browser_clicks: Option<Value>) -> i64 {
    let mut body = json!({"name": "web", "rankers": ["x", "y"], "policy": {"name": "uniform"}});
    if let Some(b) = browser_clicks {
        body["browser_clicks"] = b;
    }
    let (s, b) = app.post("/v1/experiments", body).await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    b["id"].as_i64().unwrap()
}

/// A duel of two different rankers interleaved (with the key, as a search backend does); returns
/// the interleaving token.
async fn shown(app: &TestApp, id: i64) -> String {
    let (token, pair) = distinct_duel(app, id).await;
    let lists = ranker_lists(&pair, &["a1", "a2"], &["b1", "b2"]);
    let il = app.interleave(&token, lists).await;
    il["interleaving_token"].as_str().unwrap().to_string()
}

/// What a page posts: no key; an `Origin` when given; the body as `text/plain` (sendBeacon) or
/// JSON.
async fn post_from_page(
    app: &TestApp,
    origin: Option<&str>,
    text_plain: bool,
    body: Value,
) -> reqwest::Response {
    let mut rb = app.client.post(format!("{}/v1/clicks", app.base));
    if let Some(o) = origin {
        rb = rb.header("origin", o);
    }
    rb = if text_plain {
        rb.header("content-type", "text/plain;charset=UTF-8")
            .body(body.to_string())
    } else {
        rb.json(&body)
    };
    rb.send().await.unwrap()
}

fn header<'a>(resp: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    resp.headers().get(name).map(|v| v.to_str().unwrap())
}

fn varies_on_origin(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get_all("vary")
        .iter()
        .any(|v| v.to_str().unwrap().to_ascii_lowercase().contains("origin"))
}

async fn answer(resp: reqwest::Response) -> (StatusCode, Value) {
    let status = resp.status();
    (status, resp.json().await.unwrap())
}

async fn outcomes_applied(app: &TestApp, id: i64) -> i64 {
    let e = app.experiment(id).await;
    e["outcomes_applied"].as_i64().unwrap() + e["ties_recorded"].as_i64().unwrap()
}

#[tokio::test]
async fn a_page_posts_clicks_with_the_token_alone_from_a_listed_origin_once() {
    let app = keyed_app().await;
    let id = experiment(&app, Some(json!({"origins": [SITE, OTHER_SITE]}))).await;
    let e = app.experiment(id).await;
    assert_eq!(e["browser_clicks"], json!({"origins": [SITE, OTHER_SITE]}));
    let token = shown(&app, id).await;
    let first = json!({"interleaving_token": token, "click_positions": [0]});

    // From a page the experiment does not list: refused, nothing recorded, and the page may not
    // read the answer (no experiment lists that origin).
    let resp = post_from_page(&app, Some("https://evil.example"), true, first.clone()).await;
    assert!(varies_on_origin(&resp));
    assert_eq!(header(&resp, "access-control-allow-origin"), None);
    let (s, b) = answer(resp).await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{b}");
    assert_eq!(error_code(&b), "origin_not_allowed");
    assert_eq!(outcomes_applied(&app, id).await, 0);

    // From a listed page, as navigator.sendBeacon sends it: recorded, and readable by the page.
    let resp = post_from_page(&app, Some(SITE), true, first.clone()).await;
    assert_eq!(header(&resp, "access-control-allow-origin"), Some(SITE));
    assert!(varies_on_origin(&resp));
    let (s, b) = answer(resp).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["status"], "recorded");
    let winner = b["winner"].clone();
    assert_eq!(outcomes_applied(&app, id).await, 1);

    // The same clicks again (a retried beacon, or a replay): a duplicate, counted once.
    let (s, b) = answer(post_from_page(&app, Some(OTHER_SITE), false, first.clone()).await).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(
        (b["status"].as_str(), &b["winner"]),
        (Some("duplicate"), &winner)
    );
    assert_eq!(outcomes_applied(&app, id).await, 1);

    // Other clicks on the same duel (the other team's first document): the first outcome stands.
    let other = json!({"interleaving_token": token, "click_positions": [1]});
    let resp = post_from_page(&app, Some(SITE), true, other).await;
    // An error is readable by a listed page too, so that it sees why.
    assert_eq!(header(&resp, "access-control-allow-origin"), Some(SITE));
    let (s, b) = answer(resp).await;
    assert_eq!(s, StatusCode::CONFLICT, "{b}");
    assert_eq!(error_code(&b), "outcome_conflict");
    assert_eq!(outcomes_applied(&app, id).await, 1);

    // Without an Origin (a server relaying the click): the token suffices too.
    let token2 = shown(&app, id).await;
    let body = json!({"interleaving_token": token2, "clicks": []});
    let (s, b) = answer(post_from_page(&app, None, false, body).await).await;
    assert_eq!(s, StatusCode::OK, "{b}");

    // A forged or altered token is no capability.
    let mut forged = token.clone();
    forged.replace_range(10..11, if &token[10..11] == "A" { "B" } else { "A" });
    for t in ["forged", forged.as_str()] {
        let body = json!({"interleaving_token": t, "click_positions": [0]});
        let (s, b) = answer(post_from_page(&app, Some(SITE), true, body).await).await;
        assert_eq!(s, StatusCode::UNAUTHORIZED, "{b}");
        assert_eq!(error_code(&b), "unauthorized");
    }
    // Nor is a body that does not parse.
    let resp = app
        .client
        .post(format!("{}/v1/clicks", app.base))
        .header("content-type", "text/plain")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);

    // With a key, clicks behave as before: any origin, no origin check.
    let token3 = shown(&app, id).await;
    let body = json!({"interleaving_token": token3, "click_positions": [0]});
    let resp = app
        .client
        .post(format!("{}/v1/clicks", app.base))
        .bearer_auth(INGEST)
        .header("origin", "https://evil.example")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(header(&resp, "access-control-allow-origin"), None);
    let (s, b) = answer(resp).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    // A wrong key is still 401, even with a good token.
    let token4 = shown(&app, id).await;
    let resp = app
        .client
        .post(format!("{}/v1/clicks", app.base))
        .bearer_auth("not-a-key-0123456789")
        .header("origin", SITE)
        .json(&json!({"interleaving_token": token4, "click_positions": [0]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(outcomes_applied(&app, id).await, 3);
    app.stop().await;
}

#[tokio::test]
async fn without_browser_clicks_a_keyless_click_is_401_and_turning_it_off_restores_that() {
    let app = keyed_app().await;
    let plain = experiment(&app, None).await;
    assert_eq!(app.experiment(plain).await["browser_clicks"], Value::Null);
    let token = shown(&app, plain).await;
    let body = json!({"interleaving_token": token, "click_positions": [0]});
    let (s, b) = answer(post_from_page(&app, Some(SITE), true, body.clone()).await).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "{b}");
    assert_eq!(error_code(&b), "unauthorized");
    let (s, b) = answer(post_from_page(&app, None, false, body).await).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "{b}");

    // Turned on by PATCH, then off again (null): keyless clicks are 401 again.
    let (s, e) = app
        .patch_experiment(plain, json!({"browser_clicks": {"origins": [SITE]}}))
        .await;
    assert_eq!(s, StatusCode::OK, "{e}");
    assert_eq!(e["browser_clicks"], json!({"origins": [SITE]}));
    let on = shown(&app, plain).await;
    let body = json!({"interleaving_token": on, "click_positions": [0]});
    let (s, b) = answer(post_from_page(&app, Some(SITE), true, body).await).await;
    assert_eq!(s, StatusCode::OK, "{b}");

    let (s, e) = app
        .patch_experiment(plain, json!({"browser_clicks": null, "status": "paused"}))
        .await;
    assert_eq!(s, StatusCode::OK, "{e}");
    assert_eq!(e["browser_clicks"], Value::Null);
    assert_eq!(e["status"], "paused");
    let (s, e) = app
        .patch_experiment(plain, json!({"status": "running"}))
        .await;
    assert_eq!(s, StatusCode::OK, "{e}");
    assert_eq!(e["browser_clicks"], Value::Null, "status alone keeps it");
    let off = shown(&app, plain).await;
    let body = json!({"interleaving_token": off, "click_positions": [0]});
    let resp = post_from_page(&app, Some(SITE), true, body).await;
    assert_eq!(header(&resp, "access-control-allow-origin"), None);
    let (s, b) = answer(resp).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "{b}");
    let (s, b) = app.patch_experiment(plain, json!({})).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{b}");
    app.stop().await;
}

#[tokio::test]
async fn preflights_allow_listed_origins_on_every_replica() {
    let app = keyed_app().await;
    let id = experiment(&app, Some(json!({"origins": [SITE]}))).await;
    let preflight = |app: &TestApp, origin: Option<&'static str>| {
        let mut rb = app
            .client
            .request(reqwest::Method::OPTIONS, format!("{}/v1/clicks", app.base))
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "content-type");
        if let Some(o) = origin {
            rb = rb.header("origin", o);
        }
        rb.send()
    };
    let resp = preflight(&app, Some(SITE)).await.unwrap();
    assert_eq!(resp.status(), StatusCode::NO_CONTENT);
    assert_eq!(header(&resp, "access-control-allow-origin"), Some(SITE));
    assert_eq!(header(&resp, "access-control-allow-methods"), Some("POST"));
    assert_eq!(
        header(&resp, "access-control-allow-headers"),
        Some("content-type")
    );
    assert_eq!(header(&resp, "access-control-max-age"), Some("7200"));
    assert!(varies_on_origin(&resp));

    let resp = preflight(&app, Some("https://evil.example")).await.unwrap();
    assert_eq!(header(&resp, "access-control-allow-origin"), None);
    assert!(varies_on_origin(&resp));
    let (s, b) = answer(resp).await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{b}");
    assert_eq!(error_code(&b), "origin_not_allowed");

    let resp = preflight(&app, None).await.unwrap();
    assert_eq!(resp.status(), StatusCode::NO_CONTENT);
    assert_eq!(header(&resp, "allow"), Some("POST, OPTIONS"));

    // A second replica on the same database, which never loaded the experiment, knows the
    // origin from its start, and learns of changes made elsewhere from its refresh poll.
    let replica = spawn_app_on(&app.db_url, &format!("admin:{ADMIN}")).await;
    let resp = preflight(&replica, Some(SITE)).await.unwrap();
    assert_eq!(resp.status(), StatusCode::NO_CONTENT);
    assert_eq!(header(&resp, "access-control-allow-origin"), Some(SITE));
    let (s, _) = app
        .patch_experiment(id, json!({"browser_clicks": {"origins": [OTHER_SITE]}}))
        .await;
    assert_eq!(s, StatusCode::OK);
    // At once on the replica that made the change.
    assert_eq!(
        preflight(&app, Some(SITE)).await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    eventually(
        "the other replica follows the change",
        Duration::from_secs(10),
        || async {
            preflight(&replica, Some(SITE)).await.unwrap().status() == StatusCode::FORBIDDEN
                && preflight(&replica, Some(OTHER_SITE))
                    .await
                    .unwrap()
                    .status()
                    == StatusCode::NO_CONTENT
        },
    )
    .await;
    // A deleted experiment lists nothing.
    let (s, _) = app.delete_experiment(id).await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    assert_eq!(
        preflight(&app, Some(OTHER_SITE)).await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    eventually(
        "the other replica forgets the deleted experiment",
        Duration::from_secs(10),
        || async {
            preflight(&replica, Some(OTHER_SITE))
                .await
                .unwrap()
                .status()
                == StatusCode::FORBIDDEN
        },
    )
    .await;
    replica.stop().await;
    app.stop().await;
}

#[tokio::test]
async fn invalid_origins_are_422_and_change_nothing() {
    let app = keyed_app().await;
    let id = experiment(&app, Some(json!({"origins": [SITE]}))).await;
    let before = app.experiment(id).await;
    let (_, list) = app.get("/v1/experiments").await;
    let count = list["experiments"].as_array().unwrap().len();
    let too_many: Vec<String> = (0..33).map(|i| format!("https://s{i}.example")).collect();
    for bad in [
        json!({"origins": ["https://search.example.com/"]}),
        json!({"origins": ["https://search.example.com/path"]}),
        json!({"origins": ["*"]}),
        json!({"origins": ["null"]}),
        json!({"origins": ["search.example.com"]}),
        json!({"origins": ["ftp://search.example.com"]}),
        json!({"origins": ["https://Search.example.com"]}),
        json!({"origins": ["https://search.example.com:443"]}),
        json!({"origins": [SITE, SITE]}),
        json!({"origins": []}),
        json!({"origins": too_many}),
    ] {
        let body = json!({"name": "bad", "rankers": ["x", "y"], "browser_clicks": bad});
        let (s, b) = app.post("/v1/experiments", body).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {b}");
        assert_eq!(error_code(&b), "invalid_origin", "{bad}");
        let (s, b) = app
            .patch_experiment(id, json!({"browser_clicks": bad, "status": "paused"}))
            .await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {b}");
        assert_eq!(error_code(&b), "invalid_origin", "{bad}");
    }
    // Not an object of origins: the body's shape is wrong.
    for bad in [
        json!(["https://a.example"]),
        json!({"origins": [SITE], "x": 1}),
    ] {
        let (s, b) = app
            .patch_experiment(id, json!({"browser_clicks": bad}))
            .await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{b}");
        assert_eq!(error_code(&b), "invalid_body");
    }
    let after = app.experiment(id).await;
    assert_eq!(after["version"], before["version"]);
    assert_eq!(after["status"], "running");
    assert_eq!(after["browser_clicks"], json!({"origins": [SITE]}));
    let (_, list) = app.get("/v1/experiments").await;
    assert_eq!(list["experiments"].as_array().unwrap().len(), count);
    app.stop().await;
}

#[tokio::test]
async fn only_clicks_take_a_text_plain_body() {
    let app = keyed_app().await;
    let id = experiment(&app, None).await;
    let token = shown(&app, id).await;
    let text = |path: &str, body: Value| {
        app.client
            .post(format!("{}{path}", app.base))
            .bearer_auth(ADMIN)
            .header("content-type", "text/plain;charset=UTF-8")
            .body(body.to_string())
            .send()
    };
    let (s, b) = answer(
        text(
            "/v1/clicks",
            json!({"interleaving_token": token, "clicks": ["a1"]}),
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let (duel, pair) = distinct_duel(&app, id).await;
    let (s, b) = answer(
        text(
            "/v1/outcomes",
            json!({"duel_token": duel, "winner": pair[0]}),
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{b}");
    let (s, b) = answer(
        text(
            "/v1/experiments",
            json!({"name": "n", "rankers": ["a", "b"]}),
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{b}");
    // Neither JSON nor text: 415 for clicks too.
    let resp = app
        .client
        .post(format!("{}/v1/clicks", app.base))
        .bearer_auth(ADMIN)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("interleaving_token=x")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    app.stop().await;
}
