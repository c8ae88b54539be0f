//! Webhook egress: a webhook may reach only public addresses unless the operator allows a
//! network. Every way of writing a loopback or other inside address in a URL is refused with a
//! 422 that says why, as is a name that resolves to one; a name that resolves to a public address
//! when the webhook is set and to a private one later (DNS rebinding) gets no request through;
//! an address the operator no longer allows is refused when the event is posted.

use crate::decisions::{
    Receiver, SECRET, conclude_with_webhook, fast_webhooks, loopback_allowed,
    two_rankers_with_webhook,
};
use crate::helpers::eventually::eventually;
use crate::helpers::http_server::{self, TestApp, error_code};
use crate::helpers::postgres;
use joust::engine::{Egress, NameLookup};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A server that delivers within milliseconds and allows no inside network.
fn public_only() -> joust::engine::EngineOptions {
    joust::engine::EngineOptions {
        webhook_egress: Egress::default(),
        ..fast_webhooks()
    }
}

async fn experiment_count(app: &TestApp) -> usize {
    let (_, list) = app.get("/v1/experiments").await;
    list["experiments"].as_array().unwrap().len()
}

/// The delivery row of experiment `id`: (attempts, delivered, last error).
async fn delivery(pool: &sqlx::PgPool, id: i64) -> (i32, bool, Option<String>) {
    sqlx::query_as(
        "SELECT attempts, delivered_at IS NOT NULL, last_error FROM webhook_deliveries
         WHERE experiment_id = $1",
    )
    .bind(id)
    .fetch_one(pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn every_form_of_an_inside_address_is_refused_with_the_reason() {
    let db = postgres::fresh_database().await;
    let app = http_server::spawn_app_with(&db, "", public_only()).await;
    let (receiver, url) = Receiver::start(0).await;
    let port = url.rsplit(':').next().unwrap().trim_end_matches("/hook");
    let id = app
        .create_experiment(&["a", "b"], json!({"name": "uniform"}))
        .await;
    let before = app.experiment(id).await;
    for (host, why) in [
        ("127.0.0.1", "127.0.0.1 is loopback"),
        // The same address as one decimal number, in octal, in hex, shortened.
        ("2130706433", "127.0.0.1 is loopback"),
        ("0177.0.0.1", "127.0.0.1 is loopback"),
        ("0x7f.0x0.0x0.0x1", "127.0.0.1 is loopback"),
        ("0x7f000001", "127.0.0.1 is loopback"),
        ("127.1", "127.0.0.1 is loopback"),
        ("[::1]", "::1 is loopback"),
        ("[::ffff:127.0.0.1]", "IPv4-mapped"),
        ("[::ffff:7f00:1]", "IPv4-mapped"),
        ("[::127.0.0.1]", "IPv4-compatible"),
        ("0.0.0.0", "0.0.0.0 is unspecified"),
        ("[::]", ":: is unspecified"),
        ("169.254.169.254", "169.254.169.254 is link-local"),
        ("10.0.0.7", "private"),
        ("192.168.1.20", "private"),
        ("100.64.0.1", "shared address space"),
        ("[fd00::1]", "unique-local"),
        // A name that resolves to loopback.
        ("localhost", "localhost resolves to"),
    ] {
        let hook = json!({"url": format!("http://{host}:{port}/hook"), "secret": SECRET});
        let (s, b) = app
            .post(
                "/v1/experiments",
                json!({"name": "inside", "rankers": ["a", "b"], "webhook": hook}),
            )
            .await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{host}: {b}");
        assert_eq!(error_code(&b), "invalid_webhook", "{host}: {b}");
        let message = b["error"]["message"].as_str().unwrap();
        assert!(message.contains(why), "{host}: {message}");
        assert!(
            message.contains("--webhook-allow-networks"),
            "{host}: {message}"
        );
        let (s, b) = app.patch_experiment(id, json!({"webhook": hook})).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{host}: {b}");
        assert_eq!(error_code(&b), "invalid_webhook", "{host}: {b}");
    }
    assert_eq!(experiment_count(&app).await, 1, "nothing was created");
    let after = app.experiment(id).await;
    assert_eq!(after["webhook"], Value::Null);
    assert_eq!(after["version"], before["version"]);
    // Not vacuous: with loopback allowed by the operator, the number form is the receiver's
    // address and the event reaches it.
    app.stop().await;
    let allowing = http_server::spawn_app_with(&db, "", fast_webhooks()).await;
    let id = conclude_with_webhook(&allowing, &format!("http://2130706433:{port}/hook")).await;
    eventually("the delivery", Duration::from_secs(10), || {
        let n = receiver.delivered().len();
        async move { n == 1 }
    })
    .await;
    let body: Value = serde_json::from_str(&receiver.delivered()[0].body).unwrap();
    assert_eq!(body["experiment_id"], id);
    allowing.stop().await;
}

/// Answers lookups of any name in turn from `answers`, repeating the last one; counts them.
struct Answers {
    answers: Vec<IpAddr>,
    calls: Mutex<usize>,
}

impl Answers {
    fn new(answers: &[&str]) -> Arc<Answers> {
        Arc::new(Answers {
            answers: answers.iter().map(|a| a.parse().unwrap()).collect(),
            calls: Mutex::new(0),
        })
    }

    fn calls(&self) -> usize {
        *self.calls.lock().unwrap()
    }
}

impl NameLookup for Answers {
    fn lookup<'a>(
        &'a self,
        _host: &'a str,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + 'a>> {
        let mut calls = self.calls.lock().unwrap();
        let answer = self.answers[(*calls).min(self.answers.len() - 1)];
        *calls += 1;
        Box::pin(async move { Ok(vec![answer]) })
    }
}

/// A rebinding name: public when the webhook is set, then in turn loopback and public at
/// delivery. A client that checked one lookup and connected after another would reach the
/// receiver on the second attempt; this one connects only to what it checked, so the receiver
/// never gets a request, and each refusal names the address.
#[tokio::test]
async fn a_rebinding_name_never_reaches_the_inside() {
    let db = postgres::fresh_database().await;
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let (receiver, url) = Receiver::start(0).await;
    let port = url.rsplit(':').next().unwrap().trim_end_matches("/hook");
    let lookup = Answers::new(&[
        "8.8.8.8",
        "127.0.0.1",
        "8.8.8.8",
        "127.0.0.1",
        "8.8.8.8",
        "127.0.0.1",
    ]);
    let mut options = public_only();
    options.webhook_egress = Egress::default().with_lookup(lookup.clone());
    // An attempt on the public address fails (nothing listens there on this port) or is cut
    // off within a second.
    options.webhooks.attempt_timeout = Duration::from_secs(1);
    let app = http_server::spawn_app_with(&db, "", options).await;
    let id = conclude_with_webhook(&app, &format!("http://rebind.test:{port}/hook")).await;
    eventually("four attempts", Duration::from_secs(20), || {
        let pool = pool.clone();
        async move { delivery(&pool, id).await.0 >= 4 }
    })
    .await;
    let (_, delivered, _) = delivery(&pool, id).await;
    assert!(!delivered);
    assert!(lookup.calls() >= 5, "each attempt resolved the name again");
    assert!(receiver.got().is_empty(), "{:?}", receiver.got());
    // A refused attempt says why (attempts alternate between refused and unreachable).
    eventually("a refusal recorded", Duration::from_secs(20), || {
        let pool = pool.clone();
        async move {
            delivery(&pool, id)
                .await
                .2
                .is_some_and(|e| e.contains("rebind.test resolves to 127.0.0.1, which is loopback"))
        }
    })
    .await;
    assert!(receiver.got().is_empty(), "{:?}", receiver.got());
    app.stop().await;
}

/// A name that resolves to loopback at delivery (though it resolved to a public address when it
/// was set) is refused, and reaches the receiver once the operator allows loopback.
#[tokio::test]
async fn a_name_resolving_inside_at_delivery_is_refused_until_the_operator_allows_it() {
    let db = postgres::fresh_database().await;
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let (receiver, url) = Receiver::start(0).await;
    let port = url.rsplit(':').next().unwrap().trim_end_matches("/hook");
    let lookup = Answers::new(&["8.8.8.8", "127.0.0.1"]);
    let mut options = public_only();
    options.webhook_egress = Egress::default().with_lookup(lookup.clone());
    let app = http_server::spawn_app_with(&db, "", options).await;
    let id = conclude_with_webhook(&app, &format!("http://hooks.test:{port}/hook")).await;
    eventually("a refused attempt", Duration::from_secs(10), || {
        let pool = pool.clone();
        async move { delivery(&pool, id).await.0 >= 2 }
    })
    .await;
    let (_, delivered, error) = delivery(&pool, id).await;
    assert!(!delivered);
    let error = error.unwrap_or_default();
    assert!(
        error.contains("hooks.test resolves to 127.0.0.1, which is loopback"),
        "{error}"
    );
    assert!(receiver.got().is_empty());
    app.stop().await;
    // The operator allows loopback: the same name, resolved the same way, now delivers.
    let mut options = fast_webhooks();
    options.webhook_egress = loopback_allowed().with_lookup(lookup);
    let app = http_server::spawn_app_with(&db, "", options).await;
    eventually("the delivery", Duration::from_secs(10), || {
        let n = receiver.delivered().len();
        async move { n == 1 }
    })
    .await;
    app.stop().await;
}

/// An address allowed when the webhook was set but not by the server posting the event (the
/// operator narrowed `--webhook-allow-networks`) is refused at delivery.
#[tokio::test]
async fn an_address_no_longer_allowed_is_refused_at_delivery() {
    let db = postgres::fresh_database().await;
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let (receiver, url) = Receiver::start(0).await;
    let allowing = http_server::spawn_app_with(&db, "", fast_webhooks()).await;
    let id = two_rankers_with_webhook(&allowing, &url, Value::Null).await;
    allowing.stop().await;
    let app = http_server::spawn_app_with(&db, "", public_only()).await;
    let (s, b) = app
        .patch_experiment(id, json!({"status": "concluded"}))
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    eventually("a refused attempt", Duration::from_secs(10), || {
        let pool = pool.clone();
        async move { delivery(&pool, id).await.0 >= 2 }
    })
    .await;
    let error = delivery(&pool, id).await.2.unwrap_or_default();
    assert!(error.contains("refused: 127.0.0.1 is loopback"), "{error}");
    assert!(receiver.got().is_empty());
    app.stop().await;
}
