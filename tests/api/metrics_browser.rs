//! The dashboard's metrics card in a real browser: headless Chromium against a real server and
//! Postgres, on an experiment whose click and purchase champions differ.

use crate::helpers::browser::{Browser, ONE_AT_A_TIME};
use crate::metrics_and_conversions::{
    click, conversion, create, purchase_first, shown_list, spawn_with_test_clock, wait_for_counts,
};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn the_metrics_card_shows_each_metric_and_flags_their_disagreement() {
    let _one = ONE_AT_A_TIME.lock().await;
    let app = spawn_with_test_clock().await;
    let id = create(&app, purchase_first(), "click").await;
    // Three duels: clicks go to the first ranker of each duel, purchases to the second.
    let mut duels = Vec::new();
    for i in 0..3 {
        let (il, pair, docs) = shown_list(&app, id).await;
        click(&app, &il, &docs[0]).await;
        let (s, b) = app
            .post(
                "/v1/conversions",
                conversion(&il, "purchase", &docs[1], &format!("order-{i}")),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{b}");
        duels.push(pair);
    }
    let _ = wait_for_counts(&app, id, "purchase", (3, 0)).await;
    let e = wait_for_counts(&app, id, "click", (3, 0)).await;
    let click_champion = e["metrics"][0]["champion"].as_str().unwrap().to_string();
    let purchase_champion = e["metrics"][1]["champion"].as_str().unwrap().to_string();
    // Each duel's click winner is its purchase loser, and 3 duels leave no tie: the champions
    // differ whatever pairs the policy drew.
    assert_ne!(click_champion, purchase_champion, "{e} after {duels:?}");
    assert_eq!(e["metrics_agree"], false, "{e}");

    let b = Browser::start(1400, 1100).await;
    b.goto(&format!("{}/ui/experiments/{id}", app.base)).await;
    b.wait_for("body[data-loaded]").await;
    // One box per metric, the primary one marked.
    let boxes = b
        .js("return [...document.querySelectorAll('#metrics-list .metric')].map(m => [m.dataset.metric, m.classList.contains('primary')])")
        .await;
    assert_eq!(boxes, json!([["click", true], ["purchase", false]]));
    let click_box = b.text("#metrics-list .metric[data-metric=click]").await;
    assert!(
        click_box.contains(&format!("Champion: {click_champion}")),
        "{click_box}"
    );
    assert!(click_box.contains("3 outcomes"), "{click_box}");
    let purchase_box = b.text("#metrics-list .metric[data-metric=purchase]").await;
    assert!(
        purchase_box.contains(&format!("Champion: {purchase_champion}")),
        "{purchase_box}"
    );
    assert!(purchase_box.contains("window 24 h"), "{purchase_box}");
    // The flag names both champions.
    let flag = b.text("#metrics-flag").await;
    assert!(flag.contains("disagree"), "{flag}");
    assert!(
        flag.contains(&format!("click says {click_champion}")),
        "{flag}"
    );
    assert!(
        flag.contains(&format!("purchase says {purchase_champion}")),
        "{flag}"
    );
    // The head-to-head cells match the API's matrix.
    let m = &e["metrics"][1]["matrix"];
    let at = |r: &str| {
        m["rankers"]
            .as_array()
            .unwrap()
            .iter()
            .position(|n| n == r)
            .unwrap()
    };
    let cell = b
        .text(&format!(
            "#metrics-list .metric[data-metric=purchase] td[data-row='{purchase_champion}'][data-col='{click_champion}']"
        ))
        .await;
    assert_eq!(
        cell,
        m["wins"][at(&purchase_champion)][at(&click_champion)].to_string()
    );
    if let Ok(dir) = std::env::var("JOUST_SCREENSHOT_DIR") {
        b.js("document.getElementById('metrics').scrollIntoView(); return true")
            .await;
        let png = b.client.screenshot().await.unwrap();
        std::fs::write(format!("{dir}/metrics-card.png"), png).unwrap();
    }
    let errors = b.console_errors().await;
    assert!(errors.is_empty(), "console errors: {errors:?}");
    b.close().await;
}
