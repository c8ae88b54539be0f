//! `GET /v1/experiments/{id}/history` and conditional GETs (`ETag` / `If-None-Match` / 304)
//! through HTTP against a real Postgres.

use crate::helpers::http_server::{
    TestApp, error_code, spawn_app, spawn_app_with_history_every_group, wait_for_flushed_duels,
};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Plays `n` duels, the first-named ranker always winning.
async fn play(app: &TestApp, id: i64, n: usize) {
    for _ in 0..n {
        let (token, rankers) = app.duel(id).await;
        let (s, b) = app.outcome(&token, &rankers[0]).await;
        assert_eq!(s, StatusCode::OK, "{b}");
    }
}

async fn history(app: &TestApp, id: i64, query: &str) -> Value {
    let (s, b) = app
        .get(&format!("/v1/experiments/{id}/history{query}"))
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    b
}

#[tokio::test]
async fn the_writer_records_points_with_counts_and_champion() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b", "c"], json!({"name": "uniform"}))
        .await;
    assert_eq!(history(&app, id, "").await["points"], json!([]));
    play(&app, id, 5).await;
    // The wait is the test: the server writes a point at most once a second, so the outcomes
    // after this second make one more.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    play(&app, id, 3).await;

    let h = history(&app, id, "").await;
    assert_eq!(h["rankers"], json!(["a", "b", "c"]));
    let points = h["points"].as_array().unwrap();
    assert_eq!(h["total_points"].as_u64(), Some(points.len() as u64));
    // The first application of each second wrote a point: one within the first five outcomes
    // and one within the last three (more only if the three last outcomes took over a second).
    // How many outcomes an application takes depends on how fast they came.
    let applied: Vec<i64> = points
        .iter()
        .map(|p| p["outcomes_applied"].as_i64().unwrap())
        .collect();
    assert!(
        applied.len() >= 2 && (1..=5).contains(&applied[0]) && (6..=8).contains(&applied[1]),
        "{h}"
    );
    assert!(applied.windows(2).all(|w| w[0] < w[1]) && applied[applied.len() - 1] <= 8);
    let times: Vec<_> = points
        .iter()
        .map(|p| chrono::DateTime::parse_from_rfc3339(p["at"].as_str().unwrap()).unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
    for p in points {
        let wins: i64 = p["wins"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .sum();
        let losses: i64 = p["losses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .sum();
        assert_eq!(
            (wins, losses),
            (p["outcomes_applied"].as_i64().unwrap(), wins)
        );
        assert!(p["champion"].is_string(), "{p}");
        assert!(p["confident"].is_boolean());
    }
    // The last point agrees with the experiment at its version.
    let last = &points[points.len() - 1];
    let e = app.experiment(id).await;
    let wins_now: Vec<i64> = e["rankers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["wins"].as_i64().unwrap())
        .collect();
    let wins_then: Vec<i64> = last["wins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert!(wins_then.iter().zip(&wins_now).all(|(t, n)| t <= n));

    // `since` after the first point leaves the second.
    let since = points[1]["at"].as_str().unwrap();
    let since = url_escape(since);
    let later = history(&app, id, &format!("?since={since}")).await;
    assert_eq!(
        later["points"].as_array().unwrap()[..],
        points[1..],
        "{later}"
    );
    app.stop().await;
}

fn url_escape(s: &str) -> String {
    s.replace('+', "%2B").replace(':', "%3A")
}

#[tokio::test]
async fn long_histories_are_thinned_evenly_keeping_both_ends() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b"], json!({"name": "uniform"}))
        .await;
    // A month of points, one an hour, straight into the table.
    let pool = joust::store::pool_options()
        .connect(&app.db_url)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO history_points (experiment_id, at, version, outcomes_applied, ties_applied,
                duels_issued, champion, basis, confident, wins, losses)
         SELECT $1, TIMESTAMPTZ '2026-01-01Z' + i * INTERVAL '1 hour', i, i, 0, i, NULL, 'none',
                false, ARRAY[i, 0]::bigint[], ARRAY[0, i]::bigint[]
         FROM generate_series(0, 719) AS i",
    )
    .bind(id)
    .execute(&pool)
    .await
    .unwrap();

    let h = history(&app, id, "").await;
    assert_eq!(h["total_points"], 720);
    let versions = |h: &Value| -> Vec<i64> {
        h["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["version"].as_i64().unwrap())
            .collect()
    };
    // Default: at most 500 points, the first and the last among them, in order, and no gap
    // wider than ceil(719 / 499) = 2 steps.
    let v = versions(&h);
    assert_eq!(v.len(), 500);
    assert_eq!((v[0], v[499]), (0, 719));
    assert!(
        v.windows(2).all(|w| w[0] < w[1] && w[1] - w[0] <= 2),
        "{v:?}"
    );

    let v = versions(&history(&app, id, "?max_points=10").await);
    // Row r is kept when it opens bucket floor(r * 9 / 719): r = ceil(b * 719 / 9), b = 0..9.
    assert_eq!(v, [0, 80, 160, 240, 320, 400, 480, 560, 640, 719]);
    let v = versions(&history(&app, id, "?max_points=1").await);
    assert_eq!(v, [719]);
    let v = versions(&history(&app, id, "?max_points=10000").await);
    assert_eq!(v.len(), 720);
    // `since` counts from there: 24 points on the last day.
    let h = history(&app, id, "?since=2026-01-30T00:00:00Z&max_points=100").await;
    assert_eq!(
        (h["total_points"].as_i64(), versions(&h).len()),
        (Some(24), 24)
    );

    for bad in [
        "?max_points=0",
        "?max_points=10001",
        "?since=yesterday",
        "?since=%2F%E2%AF%8C%00",
        "?color=red",
    ] {
        let (s, b) = app.get(&format!("/v1/experiments/{id}/history{bad}")).await;
        assert_eq!(
            (s, error_code(&b)),
            (StatusCode::BAD_REQUEST, "invalid_query"),
            "{bad}"
        );
        // A client that holds the current version (or any: `*`) is told of its bad query
        // too, not answered 304.
        let path = format!("/v1/experiments/{id}/history{bad}");
        let (s, _, body) = conditional_get(&app, &path, Some("*")).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{bad} with If-None-Match: *");
        assert!(body.contains("invalid_query"), "{bad}: {body}");
    }
    // A time without its timezone is ambiguous; the answer says what is missing.
    let (s, b) = app
        .get(&format!(
            "/v1/experiments/{id}/history?since=2026-01-30T00:00:00"
        ))
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let message = b["error"]["message"].as_str().unwrap();
    assert!(message.contains("timezone"), "{message}");
    let (s, b) = app.get("/v1/experiments/999999/history").await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::NOT_FOUND, "unknown_experiment")
    );

    // Deleting the experiment deletes its history.
    let (s, _) = app.delete_experiment(id).await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let left: i64 =
        sqlx::query_scalar("SELECT count(*) FROM history_points WHERE experiment_id = $1")
            .bind(id)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(left, 0);
    app.stop().await;
}

/// GETs `path` with `If-None-Match: tag` (if any); returns the status, the ETag and the body.
async fn conditional_get(
    app: &TestApp,
    path: &str,
    tag: Option<&str>,
) -> (StatusCode, String, String) {
    let mut rb = app.client.get(format!("{}{path}", app.base));
    if let Some(t) = tag {
        rb = rb.header("if-none-match", t);
    }
    let resp = rb.send().await.unwrap();
    let status = resp.status();
    let etag = resp
        .headers()
        .get("etag")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, etag, resp.text().await.unwrap())
}

#[tokio::test]
async fn read_endpoints_answer_304_until_the_state_changes() {
    // A history point for every outcome, so that the history changes with the state at once.
    let app = spawn_app_with_history_every_group().await;
    let id = app
        .create_experiment(&["a", "b", "c"], json!({"name": "uniform"}))
        .await;
    play(&app, id, 1).await;
    let paths = [
        "/v1/experiments".to_string(),
        format!("/v1/experiments/{id}"),
        format!("/v1/experiments/{id}/matrix"),
        format!("/v1/experiments/{id}/history"),
    ];
    // Duel counts are flushed in the background; once they are, only outcomes change the state.
    wait_for_flushed_duels(&app, id, 1).await;
    let mut tags = Vec::new();
    for path in &paths {
        let (s, tag, body) = conditional_get(&app, path, None).await;
        assert_eq!(s, StatusCode::OK, "{path}");
        assert!(
            tag.starts_with('"') && tag.ends_with('"'),
            "{path}: ETag {tag:?}"
        );
        assert!(!body.is_empty());
        let (s, again, body) = conditional_get(&app, path, Some(&tag)).await;
        assert_eq!((s, body.as_str()), (StatusCode::NOT_MODIFIED, ""), "{path}");
        assert_eq!(again, tag);
        let (s, _, _) = conditional_get(&app, path, Some("\"stale\"")).await;
        assert_eq!(s, StatusCode::OK, "{path}");
        tags.push(tag);
    }
    // An outcome makes a new version: every endpoint answers in full with a new tag.
    play(&app, id, 1).await;
    wait_for_flushed_duels(&app, id, 2).await;
    // The experiment's view waits until acknowledged outcomes are applied; the list reads the
    // cached state without waiting, so it is asked after the view has seen the outcome applied.
    app.experiment(id).await;
    for (path, old) in paths.iter().zip(&tags) {
        let (s, tag, body) = conditional_get(&app, path, Some(old)).await;
        assert_eq!(s, StatusCode::OK, "{path}");
        assert_ne!(&tag, old, "{path}");
        assert!(!body.is_empty());
    }
    app.stop().await;
}
