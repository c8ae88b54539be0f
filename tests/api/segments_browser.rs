//! The dashboard's segments card in a real browser: headless Chromium against a real server and
//! Postgres, on an experiment whose two segments have different winners, and on one without
//! segments (no card; the metrics card of a click-only experiment is one line).

use crate::helpers::browser::{Browser, ONE_AT_A_TIME};
use crate::helpers::http_server::{TestApp, spawn_app};
use reqwest::StatusCode;
use serde_json::{Value, json};

const RANKERS: [&str; 4] = ["bm25", "lambdamart", "bert", "colbert"];

async fn create(app: &TestApp, name: &str) -> i64 {
    let (s, e) = app
        .post(
            "/v1/experiments",
            json!({"name": name, "rankers": RANKERS, "policy": {"name": "uniform"}, "seed": 5}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{e}");
    e["id"].as_i64().unwrap()
}

/// Plays `n` duels labelled `segment` (none when `None`); the ranker listed first in
/// `strength` wins against any later one (a self-duel goes to its one ranker, a tie).
async fn play(app: &TestApp, id: i64, n: usize, segment: Option<&str>, strength: &[&str]) {
    let rank = |name: &str| strength.iter().position(|s| *s == name).unwrap();
    let body = segment.map_or(json!({}), |s| json!({ "segment": s }));
    for _ in 0..n {
        let duel = app.duel_for(id, body.clone()).await;
        let r: Vec<&str> = duel["rankers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let winner = if rank(r[0]) <= rank(r[1]) { r[0] } else { r[1] };
        let (s, b) = app
            .outcome(duel["duel_token"].as_str().unwrap(), winner)
            .await;
        assert_eq!(s, StatusCode::OK, "{b}");
    }
}

fn segment<'a>(view: &'a Value, label: &str) -> &'a Value {
    view["segments"]["segments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == label)
        .unwrap_or_else(|| panic!("no segment {label} in {view}"))
}

#[tokio::test]
async fn the_segments_card_shows_each_segments_champion_and_decision() {
    let _one = ONE_AT_A_TIME.lock().await;
    let app = spawn_app().await;
    let id = create(&app, "segmented").await;
    // On phones bert beats every ranker, on desktops bm25 does. The uniform policy draws each
    // of the 6 pairs with probability 1/6 per duel, so a pair missing from a segment's 90 duels
    // has probability (5/6)^90 < 1e-7: each segment's champion is its strongest ranker.
    play(
        &app,
        id,
        90,
        Some("phone"),
        &["bert", "colbert", "lambdamart", "bm25"],
    )
    .await;
    play(
        &app,
        id,
        90,
        Some("desktop"),
        &["bm25", "lambdamart", "colbert", "bert"],
    )
    .await;
    let view = app.experiment(id).await;
    let (phone, desktop) = (segment(&view, "phone"), segment(&view, "desktop"));
    assert_eq!(phone["champion"], "bert", "{phone}");
    assert_eq!(desktop["champion"], "bm25", "{desktop}");

    let b = Browser::start(1400, 1400).await;
    b.goto(&format!("{}/ui/experiments/{id}", app.base)).await;
    b.wait_for("body[data-loaded]").await;
    assert_eq!(
        b.js("return document.getElementById('segments').hidden")
            .await,
        json!(false)
    );
    // One row per segment, with the champion of its own outcomes and its decision.
    for (label, s) in [("phone", phone), ("desktop", desktop)] {
        let row = b
            .text(&format!("#segments-table tr[data-segment={label}]"))
            .await;
        assert!(row.contains(s["champion"].as_str().unwrap()), "{row}");
        let n = s["outcomes"].as_i64().unwrap();
        assert!(row.contains(&n.to_string()), "{row} lacks {n}");
        let dec = &s["decision"];
        let expected = if dec["decided"] == true {
            format!("decided: {}", dec["champion"].as_str().unwrap())
        } else {
            "may still be best".to_string()
        };
        assert!(row.contains(&expected), "{row} lacks {expected:?}");
    }
    // The flag names both champions.
    let flag = b.text("#segments-flag").await;
    assert!(flag.contains("disagree"), "{flag}");
    assert!(flag.contains("phone says bert"), "{flag}");
    assert!(flag.contains("desktop says bm25"), "{flag}");
    // Each segment's table: its champion's wins over the other segment's champion, as in the API.
    let at = |r: &str| RANKERS.iter().position(|n| *n == r).unwrap();
    assert_eq!(view["segments"]["rankers"], json!(RANKERS));
    let cell = b
        .text("#segments-list .metric[data-segment=phone] td[data-row=bert][data-col=bm25]")
        .await;
    assert_eq!(cell, phone["wins"][at("bert")][at("bm25")].to_string());
    assert_ne!(cell, "0", "bert met bm25 on phones: {phone}");
    let cell = b
        .text("#segments-list .metric[data-segment=desktop] td[data-row=bert][data-col=bm25]")
        .await;
    assert_eq!(cell, "0", "bert never beats bm25 on desktops");
    // All four rankers fit: no cut notice.
    assert_eq!(b.text("#segments-cut").await, "");
    if let Ok(dir) = std::env::var("JOUST_SCREENSHOT_DIR") {
        b.js("document.getElementById('segments').scrollIntoView(); return true")
            .await;
        let png = b.client.screenshot().await.unwrap();
        std::fs::write(format!("{dir}/segments-card.png"), png).unwrap();
    }
    let errors = b.console_errors().await;
    assert!(errors.is_empty(), "console errors: {errors:?}");

    // Without segments: no card, and the click-only metrics card is one line.
    let plain = create(&app, "plain").await;
    play(&app, plain, 10, None, &RANKERS).await;
    b.goto(&format!("{}/ui/experiments/{plain}", app.base))
        .await;
    b.wait_for("body[data-loaded]").await;
    assert_eq!(
        b.js("return document.getElementById('segments').hidden")
            .await,
        json!(true)
    );
    assert_eq!(
        b.js("return document.querySelectorAll('#metrics-list .metric').length")
            .await,
        json!(0)
    );
    let summary = b.text("#metrics-summary").await;
    assert!(summary.starts_with("One metric (click)"), "{summary}");
    let errors = b.console_errors().await;
    assert!(errors.is_empty(), "console errors: {errors:?}");
    b.close().await;
}
