//! Projects and stored keys: a key reaches only its project's experiments, and another
//! project's experiment is answered on every endpoint exactly as one that does not exist; keys
//! are created, listed (never with their secret), expire and are revoked on every replica
//! within seconds; an existing database moves to the `default` project.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::helpers::http_server::{TestApp, spawn_app_on};
use crate::helpers::postgres;

/// A configured global admin key.
const GLOBAL: &str = "global-admin-key-for-tests-0123456789";

async fn call(
    app: &TestApp,
    key: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut rb = app
        .client
        .request(method, format!("{}{path}", app.base))
        .bearer_auth(key);
    if let Some(b) = body {
        rb = rb.json(&b);
    }
    let resp = rb.send().await.unwrap();
    let status = resp.status();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

async fn new_project(app: &TestApp, name: &str) {
    let (s, b) = call(
        app,
        GLOBAL,
        Method::POST,
        "/v1/projects",
        Some(json!({"name": name})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
}

/// A new key of `project` (global when `None`) with `scope`, made by `by`.
async fn new_key(app: &TestApp, by: &str, project: Option<&str>, scope: &str) -> String {
    let mut body = json!({ "scope": scope });
    if let Some(p) = project {
        body["project"] = json!(p);
    }
    let (s, b) = call(app, by, Method::POST, "/v1/keys", Some(body)).await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    b["key"].as_str().unwrap().to_string()
}

async fn new_experiment(app: &TestApp, key: &str, body: Value) -> i64 {
    let (s, b) = call(app, key, Method::POST, "/v1/experiments", Some(body)).await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    b["id"].as_i64().unwrap()
}

fn spec() -> serde_yaml::Value {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.yaml")).unwrap();
    serde_yaml::from_str(&text).unwrap()
}

/// Every documented (method, path).
fn operations() -> Vec<(Method, String)> {
    let doc = spec();
    let mut out = Vec::new();
    for (path, ops) in doc["paths"].as_mapping().unwrap() {
        for (method, _) in ops.as_mapping().unwrap() {
            let method = method.as_str().unwrap();
            if method == "parameters" {
                continue;
            }
            out.push((
                Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(),
                path.as_str().unwrap().to_string(),
            ));
        }
    }
    out
}

/// The error an answer carries, with the experiment's id taken out of its message, so that
/// answers about two ids compare equal when they say the same.
fn error_of(status: StatusCode, body: &Value, id: i64) -> (StatusCode, String, String) {
    (
        status,
        body["error"]["code"].as_str().unwrap_or("").to_string(),
        body["error"]["message"]
            .as_str()
            .unwrap_or("")
            .replace(&id.to_string(), "ID"),
    )
}

/// Endpoints that name no experiment in their path, each with how it reaches experiments; a new
/// one must be added here, so that no endpoint is left unchecked.
const BODY_TOKEN_ROUTES: &[&str] = &[
    "/v1/interleavings",
    "/v1/clicks",
    "/v1/outcomes",
    "/v1/outcomes/batch",
    "/v1/conversions",
    "/v1/conversions/batch",
];
const NO_EXPERIMENT_ROUTES: &[&str] = &[
    // Lists and creates within the key's project (checked below).
    "/v1/experiments",
    "/v1/key",
    "/v1/keys",
    "/v1/keys/{key_id}",
    "/v1/projects",
    "/v1/admin/clock",
    "/healthz",
    "/readyz",
    "/metrics",
];

#[tokio::test]
async fn another_projects_experiment_is_404_on_every_endpoint() {
    let db = postgres::fresh_database().await;
    let app = spawn_app_on(&db, &format!("admin:{GLOBAL}")).await;
    new_project(&app, "alpha").await;
    new_project(&app, "beta").await;
    let alpha = new_key(&app, GLOBAL, Some("alpha"), "admin").await;
    let beta = new_key(&app, GLOBAL, Some("beta"), "admin").await;
    let id = new_experiment(
        &app,
        &alpha,
        json!({"name": "a", "rankers": ["a", "b"], "policy": {"name": "uniform"}, "seed": 1,
               "metrics": [{"name": "purchase"}], "browser_clicks": {"origins": ["https://shop.example"]}}),
    )
    .await;
    // The same answers for an id that exists nowhere.
    let missing = id + 1000;

    // The endpoints that reach an experiment through a token the experiment issued: alpha's
    // tokens posted with beta's key are refused as an unknown experiment's.
    let (s, d) = call(
        &app,
        &alpha,
        Method::POST,
        &format!("/v1/experiments/{id}/duels"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{d}");
    let lists = json!({"a": ["d1", "d2"], "b": ["d2", "d3"]});
    let interleave = json!({"duel_token": d["duel_token"], "lists": lists});
    let (s, b) = call(
        &app,
        &beta,
        Method::POST,
        "/v1/interleavings",
        Some(interleave.clone()),
    )
    .await;
    assert_eq!(
        (s, &b["error"]["code"]),
        (StatusCode::NOT_FOUND, &json!("unknown_experiment")),
        "{b}"
    );
    let (s, il) = call(
        &app,
        &alpha,
        Method::POST,
        "/v1/interleavings",
        Some(interleave),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{il}");
    let token = il["interleaving_token"].clone();
    let doc0 = il["documents"][0]["id"].clone();
    let clicks = json!({"interleaving_token": token, "click_positions": [0]});
    let outcome = json!({"duel_token": d["duel_token"], "winner": "a"});
    let conversion = json!({"interleaving_token": token, "metric": "purchase", "document": doc0,
                            "value": 1.0, "event_id": "e1"});
    let single = [
        ("/v1/clicks", clicks),
        ("/v1/outcomes", outcome.clone()),
        ("/v1/conversions", conversion.clone()),
    ];
    for (path, body) in single {
        let (s, b) = call(&app, &beta, Method::POST, path, Some(body)).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{path}: {b}");
        assert_eq!(b["error"]["code"], "unknown_experiment", "{path}: {b}");
    }
    let batches = [
        ("/v1/outcomes/batch", json!({"outcomes": [outcome]})),
        (
            "/v1/conversions/batch",
            json!({"conversions": [conversion]}),
        ),
    ];
    for (path, body) in batches {
        let (s, b) = call(&app, &beta, Method::POST, path, Some(body)).await;
        let item = &b["results"][0];
        assert!(
            s == StatusCode::NOT_FOUND || item["error"]["code"] == "unknown_experiment",
            "{path}: {s} {b}"
        );
    }
    // Nothing was recorded by beta's tries: alpha's duel takes its outcome now.
    let (s, b) = call(
        &app,
        &alpha,
        Method::POST,
        "/v1/outcomes",
        Some(json!({"duel_token": d["duel_token"], "winner": "a"})),
    )
    .await;
    assert_eq!(
        (s, &b["status"]),
        (StatusCode::OK, &json!("recorded")),
        "{b}"
    );
    // Deleting the experiment comes last, so that the owner's calls before it find it.
    let mut operations = operations();
    operations.sort_by_key(|(m, t)| *m == Method::DELETE && t == "/v1/experiments/{id}");
    let mut checked = BTreeSet::new();
    for (method, template) in operations {
        if !template.starts_with("/v1/experiments/{id}") {
            let known = BODY_TOKEN_ROUTES.contains(&template.as_str())
                || NO_EXPERIMENT_ROUTES.contains(&template.as_str());
            assert!(known, "{method} {template}: classify it in this test");
            continue;
        }
        let path = |id: i64| {
            template
                .replace("{id}", &id.to_string())
                .replace("{name}", "a")
        };
        let body = (method != Method::GET && method != Method::DELETE).then(|| json!({}));
        let (s, b) = call(&app, &beta, method.clone(), &path(id), body.clone()).await;
        assert_eq!(
            s,
            StatusCode::NOT_FOUND,
            "{method} {template} with another project's key: {b}"
        );
        let (s2, b2) = call(&app, &beta, method.clone(), &path(missing), body.clone()).await;
        assert_eq!(
            error_of(s, &b, id),
            error_of(s2, &b2, missing),
            "{method} {template}: another project's experiment must look like none"
        );
        // The owner's key is not refused so (a body of `{}` may be refused for its content).
        let (s, b) = call(&app, &alpha, method.clone(), &path(id), body).await;
        assert_ne!(
            s,
            StatusCode::NOT_FOUND,
            "{method} {template} with its project's key: {b}"
        );
        checked.insert(template.clone());
    }
    assert!(checked.len() >= 6, "only {checked:?} checked");

    app.stop().await;
}

#[tokio::test]
async fn a_key_lists_and_creates_in_its_own_project_only() {
    let db = postgres::fresh_database().await;
    let app = spawn_app_on(&db, &format!("admin:{GLOBAL}")).await;
    new_project(&app, "alpha").await;
    new_project(&app, "beta").await;
    let alpha = new_key(&app, GLOBAL, Some("alpha"), "admin").await;
    let beta_read = new_key(&app, GLOBAL, Some("beta"), "read").await;
    let plain = json!({"name": "x", "rankers": ["a", "b"], "policy": {"name": "uniform"}});
    let in_alpha = new_experiment(&app, &alpha, plain.clone()).await;
    let in_default = new_experiment(&app, GLOBAL, plain.clone()).await;
    let mut named = plain.clone();
    named["project"] = json!("beta");
    let in_beta = new_experiment(&app, GLOBAL, named.clone()).await;
    // A project's key cannot create in another project.
    let (s, b) = call(&app, &alpha, Method::POST, "/v1/experiments", Some(named)).await;
    assert_eq!(
        (s, &b["error"]["code"]),
        (StatusCode::NOT_FOUND, &json!("unknown_project")),
        "{b}"
    );
    // A name no project can carry (Postgres text refuses NUL) is unknown too, for experiments
    // and keys alike, and creates nothing.
    let mut nul = plain.clone();
    nul["project"] = json!("be\u{0}ta");
    let (s, b) = call(&app, GLOBAL, Method::POST, "/v1/experiments", Some(nul)).await;
    assert_eq!(
        (s, &b["error"]["code"]),
        (StatusCode::NOT_FOUND, &json!("unknown_project")),
        "{b}"
    );
    let key_body = json!({"scope": "admin", "project": "\u{1e}|\u{0}~"});
    let (s, b) = call(&app, GLOBAL, Method::POST, "/v1/keys", Some(key_body)).await;
    assert_eq!(
        (s, &b["error"]["code"]),
        (StatusCode::NOT_FOUND, &json!("unknown_project")),
        "{b}"
    );

    let ids = |b: &Value| -> Vec<i64> {
        b["experiments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_i64().unwrap())
            .collect()
    };
    let (_, b) = call(&app, GLOBAL, Method::GET, "/v1/experiments", None).await;
    assert_eq!(ids(&b), vec![in_alpha, in_default, in_beta]);
    let (_, b) = call(&app, &alpha, Method::GET, "/v1/experiments", None).await;
    assert_eq!(ids(&b), vec![in_alpha]);
    let (_, b) = call(&app, &beta_read, Method::GET, "/v1/experiments", None).await;
    assert_eq!(ids(&b), vec![in_beta]);
    let (_, b) = call(&app, &beta_read, Method::GET, "/v1/projects", None).await;
    assert_eq!(b["projects"].as_array().unwrap().len(), 1, "{b}");
    let (_, b) = call(&app, &beta_read, Method::GET, "/v1/key", None).await;
    assert_eq!(
        (&b["scope"], &b["project"]),
        (&json!("read"), &json!("beta")),
        "{b}"
    );
    // Only a global admin makes projects; a read key manages no keys.
    let (s, _) = call(
        &app,
        &alpha,
        Method::POST,
        "/v1/projects",
        Some(json!({"name": "c"})),
    )
    .await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, _) = call(&app, &beta_read, Method::GET, "/v1/keys", None).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    app.stop().await;
}

#[tokio::test]
async fn keys_are_listed_without_their_secret_and_revoked_within_reach() {
    let db = postgres::fresh_database().await;
    let app = spawn_app_on(&db, &format!("admin:{GLOBAL}")).await;
    new_project(&app, "alpha").await;
    new_project(&app, "beta").await;
    let alpha = new_key(&app, GLOBAL, Some("alpha"), "admin").await;
    let ingest = new_key(&app, &alpha, None, "ingest").await;
    let beta = new_key(&app, GLOBAL, Some("beta"), "admin").await;
    let global_read = new_key(&app, GLOBAL, None, "read").await;
    for key in [&alpha, &ingest, &beta, &global_read] {
        assert!(key.starts_with("jk_") && key.len() >= 43, "{key}");
    }
    let (s, list) = call(&app, GLOBAL, Method::GET, "/v1/keys", None).await;
    assert_eq!(s, StatusCode::OK);
    let text = list.to_string();
    for key in [&alpha, &ingest, &beta, &global_read] {
        assert!(
            !text.contains(key.as_str()),
            "a key's secret is listed: {text}"
        );
        assert!(text.contains(&key[..11]), "its prefix is not: {text}");
    }
    assert!(
        list["keys"]
            .as_array()
            .unwrap()
            .iter()
            .all(|k| k.get("key").is_none())
    );
    // A project's admin sees and revokes its project's keys only.
    let (_, own) = call(&app, &alpha, Method::GET, "/v1/keys", None).await;
    let own: Vec<&Value> = own["keys"].as_array().unwrap().iter().collect();
    assert_eq!(own.len(), 2, "{own:?}");
    assert!(own.iter().all(|k| k["project"] == "alpha"));
    let beta_id = list["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["prefix"] == beta[..11])
        .unwrap()["id"]
        .as_i64()
        .unwrap();
    let (s, b) = call(
        &app,
        &alpha,
        Method::DELETE,
        &format!("/v1/keys/{beta_id}"),
        None,
    )
    .await;
    assert_eq!(
        (s, &b["error"]["code"]),
        (StatusCode::NOT_FOUND, &json!("unknown_key")),
        "{b}"
    );
    let (s, _) = call(&app, &beta, Method::GET, "/v1/experiments", None).await;
    assert_eq!(s, StatusCode::OK);
    let (s, b) = call(
        &app,
        GLOBAL,
        Method::DELETE,
        &format!("/v1/keys/{beta_id}"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert!(b["revoked_at"].is_string(), "{b}");
    // Refused at once on the replica that revoked it.
    let (s, _) = call(&app, &beta, Method::GET, "/v1/experiments", None).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    // A project's key cannot make a global key: with no project named it gets its own.
    let (_, k) = call(
        &app,
        &alpha,
        Method::POST,
        "/v1/keys",
        Some(json!({"scope": "admin"})),
    )
    .await;
    assert_eq!(k["project"], "alpha", "{k}");
    app.stop().await;
}

#[tokio::test]
async fn a_key_stops_working_when_it_expires() {
    let db = postgres::fresh_database().await;
    let app = spawn_app_on(&db, &format!("admin:{GLOBAL}")).await;
    let past = (chrono::Utc::now() - chrono::Duration::seconds(1)).to_rfc3339();
    let (s, b) = call(
        &app,
        GLOBAL,
        Method::POST,
        "/v1/keys",
        Some(json!({"scope": "read", "expires_at": past})),
    )
    .await;
    assert_eq!(
        (s, &b["error"]["code"]),
        (StatusCode::UNPROCESSABLE_ENTITY, &json!("invalid_key")),
        "{b}"
    );
    let at = chrono::Utc::now() + chrono::Duration::milliseconds(1500);
    let (s, b) = call(
        &app,
        GLOBAL,
        Method::POST,
        "/v1/keys",
        Some(json!({"scope": "read", "expires_at": at.to_rfc3339()})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    let key = b["key"].as_str().unwrap().to_string();
    let (s, _) = call(&app, &key, Method::GET, "/v1/experiments", None).await;
    assert_eq!(s, StatusCode::OK);
    tokio::time::sleep(
        (at - chrono::Utc::now()).to_std().unwrap_or_default() + Duration::from_millis(50),
    )
    .await;
    let (s, b) = call(&app, &key, Method::GET, "/v1/experiments", None).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "{b}");
    app.stop().await;
}

#[tokio::test]
async fn a_key_revoked_on_one_replica_is_refused_by_another_within_5_seconds() {
    let db = postgres::fresh_database().await;
    let one = spawn_app_on(&db, &format!("admin:{GLOBAL}")).await;
    let two = spawn_app_on(&db, &format!("admin:{GLOBAL}")).await;
    let (s, b) = call(
        &one,
        GLOBAL,
        Method::POST,
        "/v1/keys",
        Some(json!({"scope": "read", "project": "default"})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    let (key, key_id) = (
        b["key"].as_str().unwrap().to_string(),
        b["id"].as_i64().unwrap(),
    );
    // Created on one, accepted by the other within the same bound.
    let start = Instant::now();
    while call(&two, &key, Method::GET, "/v1/experiments", None)
        .await
        .0
        != StatusCode::OK
    {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "a new key not in force on the other replica"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (s, _) = call(
        &one,
        GLOBAL,
        Method::DELETE,
        &format!("/v1/keys/{key_id}"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let revoked = Instant::now();
    loop {
        let (s, _) = call(&two, &key, Method::GET, "/v1/experiments", None).await;
        if s == StatusCode::UNAUTHORIZED {
            break;
        }
        assert_eq!(s, StatusCode::OK);
        assert!(
            revoked.elapsed() < Duration::from_secs(5),
            "the revoked key still works on the other replica"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!(
        "refused by the other replica {:?} after its revocation",
        revoked.elapsed()
    );
    one.stop().await;
    two.stop().await;
}

#[tokio::test]
async fn metrics_need_a_global_read_or_admin_key_when_asked() {
    let db = postgres::fresh_database().await;
    let keys = joust::http::ApiKeys::parse(&format!("admin:{GLOBAL}"))
        .unwrap()
        .with_metrics_key(true);
    let app = crate::helpers::http_server::spawn_app_with_keys(&db, keys).await;
    let read = new_key(&app, GLOBAL, None, "read").await;
    let ingest = new_key(&app, GLOBAL, None, "ingest").await;
    let project_read = new_key(&app, GLOBAL, Some("default"), "read").await;
    let status = |key: Option<String>| {
        let rb = app.client.get(format!("{}/metrics", app.base));
        let rb = match key {
            Some(k) => rb.bearer_auth(k),
            None => rb,
        };
        async move { rb.send().await.unwrap().status() }
    };
    assert_eq!(status(None).await, StatusCode::UNAUTHORIZED);
    assert_eq!(status(Some(ingest)).await, StatusCode::FORBIDDEN);
    assert_eq!(status(Some(project_read)).await, StatusCode::FORBIDDEN);
    assert_eq!(status(Some(read)).await, StatusCode::OK);
    assert_eq!(status(Some(GLOBAL.into())).await, StatusCode::OK);
    // Without the setting, /metrics stays open.
    let open = spawn_app_on(&db, &format!("admin:{GLOBAL}")).await;
    let s = open
        .client
        .get(format!("{}/metrics", open.base))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(s, StatusCode::OK);
    app.stop().await;
    open.stop().await;
}

#[tokio::test]
async fn an_existing_database_moves_to_the_default_project() {
    use sqlx::Connection;
    let db = postgres::empty_database().await;
    // The migrations before projects, and an experiment made then.
    let before: Vec<_> = joust::store::MIGRATOR
        .iter()
        .filter(|m| m.version < 11)
        .cloned()
        .collect();
    let old = sqlx::migrate::Migrator {
        migrations: std::borrow::Cow::Owned(before),
        ..sqlx::migrate::Migrator::DEFAULT
    };
    let mut conn = sqlx::PgConnection::connect(&db).await.unwrap();
    old.run(&mut conn).await.unwrap();
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO experiments (name, status, policy, tie_rule, attribution_window_secs, seed)
         VALUES ('old', 'running', '{\"name\": \"uniform\"}', 'ignore', 3600, 1) RETURNING id",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    sqlx::query("INSERT INTO rankers (experiment_id, idx, name) VALUES ($1, 0, 'a'), ($1, 1, 'b')")
        .bind(id)
        .execute(&mut conn)
        .await
        .unwrap();
    sqlx::query("INSERT INTO experiment_state (experiment_id, version, policy_state) VALUES ($1, 1, 'null')")
        .bind(id)
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();

    // The server migrates it; the experiment is the default project's.
    let app = spawn_app_on(&db, &format!("admin:{GLOBAL}")).await;
    let mut conn = sqlx::PgConnection::connect(&db).await.unwrap();
    let project: String = sqlx::query_scalar(
        "SELECT p.name FROM experiments e JOIN projects p ON p.id = e.project_id WHERE e.id = $1",
    )
    .bind(id)
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(project, "default");
    let default_read = new_key(&app, GLOBAL, Some("default"), "read").await;
    new_project(&app, "other").await;
    let other_read = new_key(&app, GLOBAL, Some("other"), "read").await;
    // (The row written above has no usable policy state, so it is checked in SQL, not read.)
    let (s, _) = call(&app, &default_read, Method::GET, "/v1/key", None).await;
    assert_eq!(s, StatusCode::OK);
    let (_, b) = call(&app, &other_read, Method::GET, "/v1/experiments", None).await;
    assert_eq!(b["experiments"], json!([]), "{b}");
    app.stop().await;
}
