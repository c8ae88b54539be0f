//! A joust server in the test process on a fresh database, and a small client for its API.

use reqwest::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

pub struct TestApp {
    pub base: String,
    pub db_url: String,
    pub client: reqwest::Client,
    pub key: Option<String>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

/// A server on a fresh, migrated database with no API keys (loopback).
pub async fn spawn_app() -> TestApp {
    let db = super::postgres::fresh_database().await;
    spawn_app_on(&db, "").await
}

/// The engine options of the test servers: history points every second, so that tests see them,
/// and duel counts flushed at every refresh, so that tests see them soon.
pub fn test_options() -> joust::engine::EngineOptions {
    joust::engine::EngineOptions {
        history_interval: std::time::Duration::from_secs(1),
        duel_count_flush_interval: std::time::Duration::ZERO,
        ..Default::default()
    }
}

/// A server on the given database with the given API keys.
pub async fn spawn_app_on(db_url: &str, keys: &str) -> TestApp {
    spawn_app_with(db_url, keys, test_options()).await
}

/// A server on a fresh database whose history has a point for every group of outcomes, for tests
/// that need several points without waiting a second for each.
pub async fn spawn_app_with_history_every_group() -> TestApp {
    let db = super::postgres::fresh_database().await;
    let options = joust::engine::EngineOptions {
        history_interval: std::time::Duration::ZERO,
        ..test_options()
    };
    spawn_app_with(&db, "", options).await
}

/// A server on the given database with the given API keys and engine options.
pub async fn spawn_app_with(
    db_url: &str,
    keys: &str,
    options: joust::engine::EngineOptions,
) -> TestApp {
    let keys = joust::http::ApiKeys::parse(keys).unwrap();
    spawn_app_with_options(db_url, keys, options).await
}

/// A server on the given database with these keys (and their settings).
pub async fn spawn_app_with_keys(db_url: &str, keys: joust::http::ApiKeys) -> TestApp {
    spawn_app_with_options(db_url, keys, test_options()).await
}

async fn spawn_app_with_options(
    db_url: &str,
    keys: joust::http::ApiKeys,
    options: joust::engine::EngineOptions,
) -> TestApp {
    let pool = joust::store::pool_options()
        .connect(db_url)
        .await
        .expect("connect");
    joust::store::migrate(&pool).await.expect("migrate");
    let engine = joust::engine::Engine::start_with(pool, options)
        .await
        .expect("engine");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        joust::http::serve(listener, Arc::clone(&engine), keys, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
        // As `joust serve` stops: what the owners hold in memory is written.
        engine.shutdown().await;
    });
    TestApp {
        base: format!("http://{addr}"),
        db_url: db_url.to_string(),
        client: reqwest::Client::new(),
        key: None,
        stop: Some(stop),
        task: Some(task),
    }
}

impl TestApp {
    /// A client of a server running elsewhere (another task's), which stopping does not stop.
    pub fn client_of(base: &str) -> TestApp {
        TestApp {
            base: base.to_string(),
            db_url: String::new(),
            client: reqwest::Client::new(),
            key: None,
            stop: None,
            task: None,
        }
    }

    pub fn without_key(mut self) -> Self {
        self.key = None;
        self
    }

    pub fn with_key(mut self, key: &str) -> Self {
        self.key = Some(key.to_string());
        self
    }

    /// Stops the server, waiting for in-flight requests.
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }

    fn auth(&self, rb: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.key {
            Some(k) => rb.bearer_auth(k),
            None => rb,
        }
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut rb = self.auth(self.client.request(method, format!("{}{path}", self.base)));
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        let resp = rb.send().await.expect("request");
        let status = resp.status();
        let text = resp.text().await.unwrap();
        let value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        (status, value)
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.send(reqwest::Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    /// Creates an experiment and returns its id.
    pub async fn create_experiment(&self, rankers: &[&str], policy: Value) -> i64 {
        let (status, body) = self
            .post(
                "/v1/experiments",
                json!({ "name": "test", "rankers": rankers, "policy": policy, "seed": 7 }),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_i64().unwrap()
    }

    /// Asks for a duel with this request body (a unit, a segment, ...); returns the answer.
    pub async fn duel_for(&self, id: i64, request: Value) -> Value {
        let (status, body) = self
            .post(&format!("/v1/experiments/{id}/duels"), request)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }

    /// Asks for a duel; returns its token and rankers.
    pub async fn duel(&self, id: i64) -> (String, [String; 2]) {
        let body = self.duel_for(id, json!({})).await;
        let r = body["rankers"].as_array().unwrap();
        (
            body["duel_token"].as_str().unwrap().to_string(),
            [
                r[0].as_str().unwrap().to_string(),
                r[1].as_str().unwrap().to_string(),
            ],
        )
    }

    /// Posts a duel's result lists (ranker name -> document ids); returns the interleaving.
    pub async fn interleave(&self, duel_token: &str, lists: Value) -> Value {
        let (status, body) = self.try_interleave(duel_token, lists).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }

    /// Posts a duel's result lists, which may be refused.
    pub async fn try_interleave(&self, duel_token: &str, lists: Value) -> (StatusCode, Value) {
        self.post(
            "/v1/interleavings",
            json!({ "duel_token": duel_token, "lists": lists }),
        )
        .await
    }

    /// Adds a ranker to experiment `id` (`body` names it).
    pub async fn add_ranker(&self, id: i64, body: Value) -> (StatusCode, Value) {
        self.post(&format!("/v1/experiments/{id}/rankers"), body)
            .await
    }

    /// Retires ranker `name` of experiment `id`.
    pub async fn remove_ranker(&self, id: i64, name: &str) -> (StatusCode, Value) {
        let path = format!("/v1/experiments/{id}/rankers/{name}");
        self.send(reqwest::Method::DELETE, &path, None).await
    }

    /// Changes experiment `id` (its status, name, ...).
    pub async fn patch_experiment(&self, id: i64, body: Value) -> (StatusCode, Value) {
        let path = format!("/v1/experiments/{id}");
        self.send(reqwest::Method::PATCH, &path, Some(body)).await
    }

    /// Deletes experiment `id`.
    pub async fn delete_experiment(&self, id: i64) -> (StatusCode, Value) {
        let path = format!("/v1/experiments/{id}");
        self.send(reqwest::Method::DELETE, &path, None).await
    }

    /// Posts the clicked positions of the list an interleaving (or multileaving) answer showed.
    pub async fn click_positions(&self, shown: &Value, positions: &[usize]) -> (StatusCode, Value) {
        self.post(
            "/v1/clicks",
            json!({"interleaving_token": shown["interleaving_token"], "click_positions": positions}),
        )
        .await
    }

    /// GETs `path` and returns the response undecoded, for its headers.
    pub async fn get_response(&self, path: &str) -> reqwest::Response {
        self.auth(self.client.get(format!("{}{path}", self.base)))
            .send()
            .await
            .expect("request")
    }

    pub async fn outcome(&self, token: &str, winner: &str) -> (StatusCode, Value) {
        self.post(
            "/v1/outcomes",
            json!({ "duel_token": token, "winner": winner }),
        )
        .await
    }

    pub async fn experiment(&self, id: i64) -> Value {
        let (status, body) = self.get(&format!("/v1/experiments/{id}")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }
}

/// Asserts the one error shape and returns the code.
pub fn error_code(body: &Value) -> &str {
    let err = body
        .get("error")
        .unwrap_or_else(|| panic!("not an error body: {body}"));
    assert!(
        err["message"].as_str().is_some_and(|m| !m.is_empty()),
        "error without message: {body}"
    );
    err["code"].as_str().expect("error code")
}

/// Duels of experiment `id` counted in the database: those the server has flushed.
pub async fn flushed_duels(app: &TestApp, id: i64) -> i64 {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&app.db_url).await.unwrap();
    joust::store::duels_issued(&mut conn, id).await.unwrap()
}

/// Waits until the server has flushed `n` duels of experiment `id` to the database.
pub async fn wait_for_flushed_duels(app: &TestApp, id: i64, n: i64) {
    // The flush runs every second; 30 s is room for a loaded 2-core machine, and passing
    // returns as soon as the counts are there.
    let what = format!("{n} duels of experiment {id} flushed");
    super::eventually::eventually(&what, Duration::from_secs(30), || async {
        flushed_duels(app, id).await == n
    })
    .await;
}

/// The sum of every cell of an experiment's win matrix.
pub async fn win_total(app: &TestApp, id: i64) -> u64 {
    let (status, m) = app.get(&format!("/v1/experiments/{id}/matrix")).await;
    assert_eq!(status, StatusCode::OK, "{m}");
    m["wins"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row.as_array().unwrap().iter().map(|v| v.as_u64().unwrap()))
        .sum()
}

/// A duel between two different rankers (a policy may draw self-duels too: those are skipped).
pub async fn distinct_duel(app: &TestApp, id: i64) -> (String, [String; 2]) {
    loop {
        let (token, pair) = app.duel(id).await;
        if pair[0] != pair[1] {
            return (token, pair);
        }
    }
}

/// The `lists` of an interleaving request: `a` for the duel's first ranker, `b` for its second.
pub fn ranker_lists<S: AsRef<str>>(pair: &[String; 2], a: &[S], b: &[S]) -> Value {
    let ids = |l: &[S]| l.iter().map(|d| d.as_ref().to_string()).collect::<Vec<_>>();
    let mut m = serde_json::Map::new();
    m.insert(pair[0].clone(), json!(ids(a)));
    m.insert(pair[1].clone(), json!(ids(b)));
    Value::Object(m)
}

/// The shown documents of an interleaving answer: each id and the ranker it counts for, if any.
pub fn shown_documents(body: &Value) -> Vec<(String, Option<String>)> {
    body["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["id"].as_str().unwrap().to_string(),
                d["ranker"].as_str().map(String::from),
            )
        })
        .collect()
}
