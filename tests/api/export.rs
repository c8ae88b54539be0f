//! Exports through HTTP: every recorded outcome once, in pages joined by `Link` headers, as
//! NDJSON and CSV; exactly the recorded rows while several clients post and across a restart
//! of the server mid-export (resumed from the cursor, and a page broken off and read again);
//! the preference matrix recomputed from the rows equals the server's; conversions with their
//! duels; bad cursors, formats and limits refused.

use crate::helpers::eventually::eventually;
use crate::helpers::http_server::{TestApp, distinct_duel, error_code, spawn_app, spawn_app_on};
use crate::metrics_and_conversions::{
    click, conversion, create, purchase_first, shown_list, spawn_with_test_clock,
};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// One page: its status, rows (NDJSON parsed, or CSV lines), `Link` next URL and cursor.
struct Page {
    status: StatusCode,
    content_type: String,
    rows: Vec<Value>,
    text: String,
    next: Option<String>,
    cursor: Option<String>,
}

async fn page(app: &TestApp, path: &str, accept: Option<&str>) -> Page {
    let mut rb = app.client.get(format!("{}{path}", app.base));
    if let Some(a) = accept {
        rb = rb.header("accept", a);
    }
    let resp = rb.send().await.expect("request");
    let status = resp.status();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    let content_type = header("content-type").unwrap_or_default();
    let next = header("link").map(|link| {
        let url = link
            .strip_prefix('<')
            .and_then(|l| l.split_once(">; rel=\"next\""))
            .unwrap_or_else(|| panic!("a Link header of rel=next: {link}"))
            .0;
        url.to_string()
    });
    let cursor = header("joust-cursor");
    let text = resp.text().await.unwrap();
    let rows = if content_type.starts_with("application/x-ndjson") {
        text.lines()
            .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
            .collect()
    } else {
        Vec::new()
    };
    Page {
        status,
        content_type,
        rows,
        text,
        next,
        cursor,
    }
}

/// Follows `Link` from `first` to the last page; returns every row and the last page's cursor.
async fn export_all(app: &TestApp, first: &str) -> (Vec<Value>, String, usize) {
    let mut rows = Vec::new();
    let mut url = first.to_string();
    let mut pages = 0;
    loop {
        let p = page(app, &url, None).await;
        assert_eq!(p.status, StatusCode::OK, "{}", p.text);
        pages += 1;
        rows.extend(p.rows);
        match p.next {
            Some(next) => url = next,
            None => return (rows, p.cursor.expect("every page has a cursor"), pages),
        }
    }
}

/// Posts `n` outcomes to experiment `id` (a tie every third duel, else one of the two rankers):
/// returns each duel id with its recorded answer.
async fn post_outcomes(app: &TestApp, id: i64, n: usize) -> HashMap<String, Value> {
    let mut recorded = HashMap::new();
    for i in 0..n {
        let (token, pair) = app.duel(id).await;
        let winner = if i % 3 == 0 { "tie" } else { &pair[i % 2] };
        let (s, b) = app.outcome(&token, winner).await;
        assert_eq!(s, StatusCode::OK, "{b}");
        assert_eq!(b["status"], "recorded", "{b}");
        let mut answer = b.clone();
        answer["rankers"] = json!(pair);
        recorded.insert(b["duel_id"].as_str().unwrap().to_string(), answer);
    }
    recorded
}

fn duel_ids(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .map(|r| r["duel_id"].as_str().unwrap().to_string())
        .collect()
}

/// Asserts that `rows` are exactly the duels of `want`, each once.
fn assert_exactly(rows: &[Value], want: &HashSet<String>) {
    let ids = duel_ids(rows);
    let unique: HashSet<String> = ids.iter().cloned().collect();
    assert_eq!(unique.len(), ids.len(), "a row was exported twice");
    let missing: Vec<_> = want.difference(&unique).collect();
    let extra: Vec<_> = unique.difference(want).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}, not recorded {extra:?}"
    );
}

#[tokio::test]
async fn every_recorded_outcome_is_exported_once_in_linked_pages() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b", "c"], json!({"name": "uniform"}))
        .await;
    let recorded = post_outcomes(&app, id, 25).await;
    // A retry is answered `duplicate` and is not a second row.
    let (token, pair) = app.duel(id).await;
    let (s, first) = app.outcome(&token, &pair[0]).await;
    assert_eq!(s, StatusCode::OK, "{first}");
    let (s, again) = app.outcome(&token, &pair[0]).await;
    assert_eq!(
        (s, again["status"].as_str()),
        (StatusCode::OK, Some("duplicate"))
    );
    let mut recorded = recorded;
    let mut answer = first.clone();
    answer["rankers"] = json!(pair);
    recorded.insert(first["duel_id"].as_str().unwrap().to_string(), answer);
    let want: HashSet<String> = recorded.keys().cloned().collect();

    // Rows become final once every older transaction has ended: poll until all 26 are.
    let path = format!("/v1/experiments/{id}/outcomes?limit=7");
    eventually(
        "every outcome exported",
        Duration::from_secs(10),
        || async { export_all(&app, &path).await.0.len() == 26 },
    )
    .await;
    let (rows, cursor, pages) = export_all(&app, &path).await;
    assert_eq!(pages, 4, "26 rows in pages of 7");
    assert_exactly(&rows, &want);
    for row in &rows {
        let answer = &recorded[row["duel_id"].as_str().unwrap()];
        assert_eq!(row["rankers"], answer["rankers"], "{row}");
        assert_eq!(
            row["winner"], answer["winner"],
            "{row} recorded as {answer}"
        );
        assert_eq!(row["metric"], "click", "{row}");
        assert_eq!(row["outcomes"], Value::Null, "{row}");
        assert_eq!(
            (&row["unit_hash"], &row["segment"]),
            (&Value::Null, &Value::Null)
        );
        let (issued, at) = (
            row["issued_at"].as_str().unwrap(),
            row["recorded_at"].as_str().unwrap(),
        );
        let time = |t: &str| chrono::DateTime::parse_from_rfc3339(t).unwrap();
        assert!(time(issued) <= time(at), "{row}");
    }

    // The first page is the same rows whenever it is read again; the default is NDJSON.
    let p = page(&app, &format!("/v1/experiments/{id}/outcomes"), None).await;
    assert_eq!(p.content_type, "application/x-ndjson");
    assert_eq!(
        duel_ids(&p.rows),
        duel_ids(&rows),
        "the same order on one page"
    );
    assert_eq!(p.next, None);

    // CSV, by Accept and by format: a header and one record per row, in the same order.
    for (path, accept) in [
        (format!("/v1/experiments/{id}/outcomes"), Some("text/csv")),
        (format!("/v1/experiments/{id}/outcomes?format=csv"), None),
    ] {
        let p = page(&app, &path, accept).await;
        assert_eq!(p.status, StatusCode::OK, "{}", p.text);
        assert!(p.content_type.starts_with("text/csv"), "{}", p.content_type);
        let mut lines = p.text.lines();
        assert_eq!(
            lines.next(),
            Some(
                "duel_id,issued_at,recorded_at,rankers,winner,outcomes,metric,unit_hash,segment,\
                 posted,interleaving,chosen_by"
            )
        );
        let ids: Vec<String> = lines
            .map(|l| l.split(',').next().unwrap().to_string())
            .collect();
        assert_eq!(ids, duel_ids(&rows));
    }

    // Gzipped for a client that accepts it, and whole.
    let gzipped = app
        .client
        .get(format!("{}/v1/experiments/{id}/outcomes", app.base))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(gzipped.headers()["content-encoding"], "gzip");
    let bytes = gzipped.bytes().await.expect("the whole gzipped body");
    assert!(!bytes.is_empty());

    // The last page's cursor picks up exactly the rows recorded since.
    let later = format!("/v1/experiments/{id}/outcomes?after={cursor}");
    let p = page(&app, &later, None).await;
    assert_eq!((p.status, p.rows.len(), p.next), (StatusCode::OK, 0, None));
    let more = post_outcomes(&app, id, 3).await;
    let want_more: HashSet<String> = more.keys().cloned().collect();
    eventually(
        "the new outcomes exported",
        Duration::from_secs(10),
        || async { page(&app, &later, None).await.rows.len() == 3 },
    )
    .await;
    assert_exactly(&page(&app, &later, None).await.rows, &want_more);
}

#[tokio::test]
async fn rows_say_what_was_posted_how_it_was_recorded_and_who_chose_the_duel() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b", "c"], json!({"name": "uniform"}))
        .await;
    let post = |body: Value| {
        let app = &app;
        async move {
            let (s, b) = app.post("/v1/outcomes", body).await;
            assert_eq!(s, StatusCode::OK, "{b}");
            b["duel_id"].as_str().unwrap().to_string()
        }
    };
    // A winner, credits and an ordering, each on a duel of two different rankers.
    let (token, pair) = distinct_duel(&app, id).await;
    let by_winner = post(json!({"duel_token": token, "winner": pair[1]})).await;
    let (token, pair) = distinct_duel(&app, id).await;
    let credits = json!({pair[0].clone(): 0.5, pair[1].clone(): 2.25});
    let by_credits = post(json!({"duel_token": token, "credits": credits})).await;
    let credits_winner = pair[1].clone();
    let (token, pair) = distinct_duel(&app, id).await;
    let ordering = json!([pair[0].clone(), [pair[1].clone()]]);
    let by_ordering = post(json!({"duel_token": token, "ordering": ordering})).await;
    let ordering_winner = pair[0].clone();
    // A self-duel's posted winner is recorded as a tie: the row says both. (DTS compares an arm
    // with itself early on; uniform never does.)
    let dts = app
        .create_experiment(&["a", "b", "c"], json!({"name": "dts"}))
        .await;
    let mut self_duel = None;
    for _ in 0..500 {
        let (token, pair) = app.duel(dts).await;
        if pair[0] == pair[1] {
            self_duel = Some((token, pair));
            break;
        }
    }
    let (token, self_pair) = self_duel.expect("a self-duel among 500 duels of DTS");
    let self_duel = post(json!({"duel_token": token, "winner": self_pair[0]})).await;
    // Clicks on a shown Team-Draft list, credited to the clicked document's team.
    let (il, pair, docs) = shown_list(&app, id).await;
    click(&app, &il, &docs[1]).await;

    let path = format!("/v1/experiments/{id}/outcomes");
    eventually(
        "every outcome exported",
        Duration::from_secs(10),
        || async { page(&app, &path, None).await.rows.len() == 4 },
    )
    .await;
    let rows = page(&app, &path, None).await.rows;
    let row = |duel: &str| {
        rows.iter()
            .find(|r| r["duel_id"] == duel)
            .unwrap_or_else(|| panic!("no row of {duel}: {rows:?}"))
            .clone()
    };
    let r = row(&by_winner);
    assert_eq!(r["posted"], json!({"winner": r["winner"]}), "{r}");
    let r = row(&by_credits);
    assert_eq!(
        (&r["posted"], &r["winner"]),
        (&json!({"credits": credits}), &json!(credits_winner)),
        "{r}"
    );
    let r = row(&by_ordering);
    assert_eq!(
        (&r["posted"], &r["winner"]),
        (&json!({"ordering": ordering}), &json!(ordering_winner)),
        "{r}"
    );
    let dts_path = format!("/v1/experiments/{dts}/outcomes");
    eventually(
        "the self-duel exported",
        Duration::from_secs(10),
        || async { page(&app, &dts_path, None).await.rows.len() == 1 },
    )
    .await;
    let r = &page(&app, &dts_path, None).await.rows[0];
    assert_eq!(r["duel_id"], self_duel.as_str());
    assert_eq!(
        (&r["posted"], &r["winner"]),
        (&json!({"winner": self_pair[0]}), &json!("tie")),
        "{r}"
    );
    let clicked = rows
        .iter()
        .find(|r| r["posted"]["clicks"].is_array())
        .expect("the clicked duel's row");
    assert_eq!(clicked["winner"], pair[1].as_str(), "{clicked}");
    assert_eq!(clicked["interleaving"], "team_draft", "{clicked}");
    assert_eq!(clicked["posted"]["clicks"].as_array().unwrap().len(), 1);
    for r in &rows {
        assert!(
            r["chosen_by"] == "policy" || r["chosen_by"] == "confirmation",
            "{r}"
        );
        if r["posted"].get("clicks").is_none() {
            assert_eq!(r["interleaving"], Value::Null, "{r}");
        }
    }

    // CSV: the same values, JSON text where they are JSON.
    let p = page(&app, &format!("{path}?format=csv"), None).await;
    let line = p
        .text
        .lines()
        .find(|l| l.starts_with(&by_credits))
        .unwrap()
        .to_string();
    // JSON inside a quoted field, its quotes doubled.
    assert!(
        line.contains(r#","{""credits"":{""#)
            && line.contains(&format!(r#"""{credits_winner}"": 2.25"#)),
        "{line}"
    );
    assert!(
        line.ends_with(",policy") || line.ends_with(",confirmation"),
        "{line}"
    );
}

#[tokio::test]
async fn the_preference_matrix_recomputed_from_the_export_is_the_servers() {
    let app = spawn_app().await;
    let names = ["a", "b", "c", "d"];
    let id = app
        .create_experiment(&names, json!({"name": "uniform"}))
        .await;
    let recorded = post_outcomes(&app, id, 60).await;
    let want: HashSet<String> = recorded.keys().cloned().collect();
    let path = format!("/v1/experiments/{id}/outcomes");
    eventually(
        "every outcome exported",
        Duration::from_secs(10),
        || async { export_all(&app, &path).await.0.len() == want.len() },
    )
    .await;
    let (rows, _, _) = export_all(&app, &path).await;
    assert_exactly(&rows, &want);

    // wins[i][j]: times i beat j; ties[i][j]: ties between i and j (i != j), as docs/export.md.
    let (s, m) = app.get(&format!("/v1/experiments/{id}/matrix")).await;
    assert_eq!(s, StatusCode::OK, "{m}");
    let order: Vec<String> = serde_json::from_value(m["rankers"].clone()).unwrap();
    let at = |name: &str| order.iter().position(|n| n == name).unwrap();
    let k = order.len();
    let mut wins = vec![vec![0u64; k]; k];
    let mut ties = vec![vec![0u64; k]; k];
    for row in &rows {
        let (a, b) = (
            row["rankers"][0].as_str().unwrap(),
            row["rankers"][1].as_str().unwrap(),
        );
        match row["winner"].as_str().unwrap() {
            "tie" if a != b => {
                ties[at(a)][at(b)] += 1;
                ties[at(b)][at(a)] += 1;
            }
            "tie" => {}
            w => {
                let loser = if w == a { b } else { a };
                wins[at(w)][at(loser)] += 1;
            }
        }
    }
    assert_eq!(serde_json::to_value(&wins).unwrap(), m["wins"], "wins");
    assert_eq!(serde_json::to_value(&ties).unwrap(), m["ties"], "ties");
}

/// Several clients post while an export pages through the rows; the server is restarted mid
/// export and the export resumes from its cursor on the new one; a page broken off mid-body is
/// read again and starts with the same rows. In the end the export holds every recorded
/// outcome exactly once.
#[tokio::test]
async fn an_export_beside_posting_clients_and_a_restart_holds_each_row_once() {
    let db = crate::helpers::postgres::fresh_database().await;
    let app = spawn_app_on(&db, "").await;
    let id = app
        .create_experiment(&["a", "b", "c"], json!({"name": "uniform"}))
        .await;
    const CLIENTS: usize = 4;
    const EACH: usize = 25;

    let mut exported: Vec<Value> = Vec::new();
    let mut cursor: Option<String> = None;
    // One page of at most 8 rows from the cursor.
    async fn step(app: &TestApp, id: i64, cursor: &mut Option<String>, out: &mut Vec<Value>) {
        let url = match cursor {
            Some(c) => format!("/v1/experiments/{id}/outcomes?limit=8&after={c}"),
            None => format!("/v1/experiments/{id}/outcomes?limit=8"),
        };
        let p = page(app, &url, None).await;
        assert_eq!(p.status, StatusCode::OK, "{}", p.text);
        out.extend(p.rows);
        *cursor = Some(p.cursor.unwrap());
    }

    let mut want = HashSet::new();
    let mut app = app;
    for phase in 0..2 {
        let posters: Vec<_> = (0..CLIENTS)
            .map(|_| {
                let base = app.base.clone();
                tokio::spawn(async move {
                    let client = TestApp::client_of(&base);
                    post_outcomes(&client, id, EACH).await
                })
            })
            .collect();
        // Export while they post.
        while !posters.iter().all(|p| p.is_finished()) {
            step(&app, id, &mut cursor, &mut exported).await;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        for p in posters {
            want.extend(p.await.unwrap().into_keys());
        }
        if phase == 0 {
            // Restart: a new server on the same database, the export continuing from its cursor.
            app.stop().await;
            app = spawn_app_on(&db, "").await;
        }
    }

    // A page broken off after its first rows, then read again from the same cursor, starts
    // with the same rows (the final rows only grow at their end).
    let url = format!(
        "/v1/experiments/{id}/outcomes?limit=8&after={}",
        cursor.clone().unwrap()
    );
    let again = page(&app, &url, None).await;
    let mut resp = app
        .client
        .get(format!("{}{url}", app.base))
        .send()
        .await
        .unwrap();
    let first_chunk = resp.chunk().await.unwrap().unwrap_or_default();
    drop(resp);
    let broken: Vec<Value> = String::from_utf8_lossy(&first_chunk)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(
        duel_ids(&broken),
        duel_ids(&again.rows[..broken.len()]),
        "a page read again starts with the same rows"
    );

    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while exported.len() < want.len() {
        assert!(
            std::time::Instant::now() < deadline,
            "export stalled at {}",
            exported.len()
        );
        step(&app, id, &mut cursor, &mut exported).await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // And nothing after: one more page from the cursor is empty.
    step(&app, id, &mut cursor, &mut exported).await;
    assert_eq!(want.len(), CLIENTS * EACH * 2);
    assert_exactly(&exported, &want);
}

#[tokio::test]
async fn conversions_are_exported_with_their_duels() {
    let app = spawn_with_test_clock().await;
    let id = create(&app, purchase_first(), "click").await;
    let (il, pair, docs) = shown_list(&app, id).await;
    click(&app, &il, &docs[0]).await;
    let (s, b) = app
        .post(
            "/v1/conversions",
            conversion(&il, "purchase", &docs[1], "order-1"),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let path = format!("/v1/experiments/{id}/conversions");
    eventually(
        "the conversion exported",
        Duration::from_secs(10),
        || async { page(&app, &path, None).await.rows.len() == 1 },
    )
    .await;
    let p = page(&app, &path, None).await;
    let row = &p.rows[0];
    assert_eq!(row["duel_id"], b["duel_id"], "{row} vs {b}");
    assert_eq!(row["metric"], "purchase");
    assert_eq!(row["event_id"], "order-1");
    assert_eq!(row["document"], docs[1].as_str());
    assert_eq!(row["rankers"], json!(pair));
    // Team-Draft credits the event to the team that placed the document.
    assert_eq!(
        row["credit"],
        json!({pair[0].clone(): 0.0, pair[1].clone(): 1.0}),
        "{row}"
    );
    assert!(
        row["duel_winner"].is_null() || pair.iter().any(|p| row["duel_winner"] == p.as_str()),
        "{row}"
    );
    // The outcome of the same duel is the outcomes export's, credited to the clicked ranker.
    let outcomes = page(&app, &format!("/v1/experiments/{id}/outcomes"), None).await;
    assert_eq!(outcomes.rows.len(), 1);
    assert_eq!(outcomes.rows[0]["duel_id"], row["duel_id"]);
    assert_eq!(outcomes.rows[0]["winner"], pair[0].as_str());
    // A cursor of the outcomes is not one of the conversions.
    let c = outcomes.cursor.unwrap();
    let p = page(&app, &format!("{path}?after={c}"), None).await;
    assert_eq!(p.status, StatusCode::BAD_REQUEST);
    let body: Value = serde_json::from_str(&p.text).unwrap();
    assert_eq!(error_code(&body), "invalid_cursor");
}

#[tokio::test]
async fn bad_cursors_formats_and_limits_are_refused() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b"], json!({"name": "uniform"}))
        .await;
    let other = app
        .create_experiment(&["a", "b"], json!({"name": "uniform"}))
        .await;
    post_outcomes(&app, id, 3).await;
    let cursor = page(&app, &format!("/v1/experiments/{id}/outcomes"), None)
        .await
        .cursor
        .unwrap();
    // One character of the cursor changed.
    let mut altered = cursor.clone().into_bytes();
    altered[10] = if altered[10] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    let (token, _) = app.duel(id).await;
    let cases = [
        (
            format!("/v1/experiments/{other}/outcomes?after={cursor}"),
            400,
            "invalid_cursor",
        ),
        (
            format!("/v1/experiments/{id}/outcomes?after={altered}"),
            400,
            "invalid_cursor",
        ),
        (
            format!("/v1/experiments/{id}/outcomes?after=not-a-cursor"),
            400,
            "invalid_cursor",
        ),
        (
            format!("/v1/experiments/{id}/outcomes?after={token}"),
            400,
            "invalid_cursor",
        ),
        (
            format!("/v1/experiments/{id}/outcomes?format=parquet"),
            400,
            "invalid_query",
        ),
        (
            format!("/v1/experiments/{id}/outcomes?limit=0"),
            400,
            "invalid_query",
        ),
        (
            format!("/v1/experiments/{id}/outcomes?limit=1000001"),
            400,
            "invalid_query",
        ),
        (
            format!("/v1/experiments/{id}/outcomes?limit=ten"),
            400,
            "invalid_query",
        ),
        (
            format!("/v1/experiments/{id}/outcomes?page=2"),
            400,
            "invalid_query",
        ),
        (
            "/v1/experiments/999999/outcomes".to_string(),
            404,
            "unknown_experiment",
        ),
        (
            "/v1/experiments/999999/conversions".to_string(),
            404,
            "unknown_experiment",
        ),
    ];
    for (path, status, code) in cases {
        let (s, b) = app.get(&path).await;
        assert_eq!(s.as_u16(), status, "{path}: {b}");
        assert_eq!(error_code(&b), code, "{path}: {b}");
    }
    // Nothing changed: the export still holds the three outcomes.
    let p = page(&app, &format!("/v1/experiments/{id}/outcomes"), None).await;
    assert_eq!(p.rows.len(), 3);
}

/// Rows say which layer chose their duel: with the confirmation layer taking every step it may
/// (`max_confirmation_share` 1), the duels issued before a ranker is established (played 20
/// times per rival) are the policy's, and those issued after, while nothing is decided, the
/// confirmation layer's.
#[tokio::test]
async fn rows_say_whether_the_policy_or_the_confirmation_layer_chose_the_duel() {
    let app = spawn_app().await;
    let (s, b) = app
        .post(
            "/v1/experiments",
            json!({"name": "chooser", "rankers": ["a", "b", "c"], "policy": {"name": "uniform"},
                   "seed": 7, "decision": {"max_confirmation_share": 1.0}}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    let id = b["id"].as_i64().unwrap();
    // Even preferences (each position wins half the time): nothing is decided, and the most
    // played of three rankers (about 267 plays each) passes 40 within 400 duels.
    const BEFORE: usize = 400;
    let early = post_even_winners(&app, id, BEFORE).await;
    let path = format!("/v1/experiments/{id}");
    eventually("every outcome applied", Duration::from_secs(20), || async {
        app.get(&path).await.1["outcomes_applied"] == BEFORE
    })
    .await;
    let (_, experiment) = app.get(&path).await;
    assert_eq!(experiment["decision"]["decided"], false, "{experiment}");
    let late = post_even_winners(&app, id, 20).await;

    let export = format!("/v1/experiments/{id}/outcomes?limit=1000");
    eventually(
        "every outcome exported",
        Duration::from_secs(10),
        || async { page(&app, &export, None).await.rows.len() == BEFORE + 20 },
    )
    .await;
    let rows = page(&app, &export, None).await.rows;
    let chooser = |id: &str| {
        let row = rows.iter().find(|r| r["duel_id"] == id).unwrap();
        row["chosen_by"].as_str().unwrap().to_string()
    };
    // The first 19 duels precede any ranker's 40th play (a duel plays a ranker at most twice).
    for duel in early.iter().take(19) {
        assert_eq!(chooser(duel), "policy", "{duel}");
    }
    for duel in &late {
        assert_eq!(chooser(duel), "confirmation", "{duel}");
    }
}

/// Posts `n` duels' outcomes, the first ranker winning every other one; returns their duel ids
/// in the order they were issued.
async fn post_even_winners(app: &TestApp, id: i64, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let (token, pair) = app.duel(id).await;
        let (s, b) = app.outcome(&token, &pair[i % 2]).await;
        assert_eq!(s, StatusCode::OK, "{b}");
        ids.push(b["duel_id"].as_str().unwrap().to_string());
    }
    ids
}

/// `joust export --url` follows the pages (asking for each next page while it reads the one
/// before) and writes every row once, and a CSV file's header once.
#[tokio::test]
async fn the_export_command_writes_every_page_once() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b", "c"], json!({"name": "uniform"}))
        .await;
    let recorded = post_outcomes(&app, id, 23).await;
    let want: HashSet<String> = recorded.keys().cloned().collect();
    let path = format!("/v1/experiments/{id}/outcomes");
    eventually(
        "every outcome exported",
        Duration::from_secs(10),
        || async { page(&app, &path, None).await.rows.len() == want.len() },
    )
    .await;
    let dir = std::env::temp_dir().join(format!("joust-export-{}-{id}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Awaited, not waited for: the server runs on this test's thread.
    let export = |file: &str| {
        let out = dir.join(file);
        let (base, id) = (app.base.clone(), id.to_string());
        async move {
            let status = tokio::process::Command::new(env!("CARGO_BIN_EXE_joust"))
                .args(["export", "--url", &base, "--experiment", &id])
                .args(["--limit", "4", "--out"])
                .arg(&out)
                .status()
                .await
                .expect("joust export runs");
            assert!(status.success());
            std::fs::read_to_string(out).unwrap()
        }
    };
    let ndjson = export("outcomes.ndjson").await;
    let rows: Vec<Value> = ndjson
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_exactly(&rows, &want);
    let csv = export("outcomes.csv").await;
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("duel_id,"), "{csv}");
    let ids: HashSet<String> = lines
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect();
    assert_eq!(ids, want, "{csv}");
    assert_eq!(csv.lines().count(), want.len() + 1, "{csv}");
    std::fs::remove_dir_all(&dir).unwrap();
}
