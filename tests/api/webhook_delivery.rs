//! Webhook deliveries under slow receivers: a slow receiver holds a few of a replica's attempts
//! and delays no other receiver's event; two replicas post each event exactly once while a
//! receiver takes 9 s per request, however long their backlog; delivered rows are pruned by
//! retention, pending ones kept.

use crate::decisions::{Receiver, SECRET, conclude_with_webhook, fast_webhooks};
use crate::helpers::eventually::eventually;
use crate::helpers::http_server::{self, TestApp};
use crate::helpers::postgres;
use axum::http::HeaderMap;
use joust::engine::{Retention, spawn_retention};
use reqwest::StatusCode;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One request a slow receiver got: its event id and when it was answered.
#[derive(Debug, Clone)]
struct Took {
    event_id: String,
    answered: Option<Instant>,
}

/// A receiver that answers 200 after `delay`, recording every request and the most requests it
/// held at once.
#[derive(Clone)]
struct SlowReceiver {
    delay: Duration,
    requests: Arc<Mutex<Vec<Took>>>,
    in_flight: Arc<Mutex<(usize, usize)>>,
}

impl SlowReceiver {
    async fn start(delay: Duration) -> (SlowReceiver, String) {
        let r = SlowReceiver {
            delay,
            requests: Default::default(),
            in_flight: Default::default(),
        };
        let state = r.clone();
        let app = axum::Router::new().route(
            "/slow",
            axum::routing::post(move |headers: HeaderMap, _body: String| {
                let state = state.clone();
                async move {
                    let event_id = headers
                        .get("joust-event-id")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string();
                    let index = {
                        let mut requests = state.requests.lock().unwrap();
                        requests.push(Took {
                            event_id,
                            answered: None,
                        });
                        requests.len() - 1
                    };
                    {
                        let mut f = state.in_flight.lock().unwrap();
                        f.0 += 1;
                        f.1 = f.1.max(f.0);
                    }
                    tokio::time::sleep(state.delay).await;
                    state.in_flight.lock().unwrap().0 -= 1;
                    state.requests.lock().unwrap()[index].answered = Some(Instant::now());
                    axum::http::StatusCode::OK
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/slow", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (r, url)
    }

    fn requests(&self) -> Vec<Took> {
        self.requests.lock().unwrap().clone()
    }

    fn most_at_once(&self) -> usize {
        self.in_flight.lock().unwrap().1
    }
}

/// Creates an experiment with a webhook to `url` (no event yet).
async fn hooked(app: &TestApp, url: &str) -> i64 {
    let (s, b) = app
        .post(
            "/v1/experiments",
            json!({"name": "hooked", "rankers": ["a", "b"],
                   "webhook": {"url": url, "secret": SECRET}}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    b["id"].as_i64().unwrap()
}

#[tokio::test]
async fn a_slow_receiver_delays_no_other_receivers_event() {
    let db = postgres::fresh_database().await;
    let app = http_server::spawn_app_with(&db, "", fast_webhooks()).await;
    let slow_delay = Duration::from_secs(4);
    let (slow, slow_url) = SlowReceiver::start(slow_delay).await;
    let per_receiver = fast_webhooks().webhooks.limits.per_receiver;
    // Twice as many events as the slow receiver has slots: half wait in the outbox.
    for _ in 0..2 * per_receiver {
        conclude_with_webhook(&app, &slow_url).await;
    }
    eventually(
        "the slow receiver's slots taken",
        Duration::from_secs(5),
        || {
            let n = slow.requests().len();
            async move { n >= per_receiver }
        },
    )
    .await;
    // Another receiver, which fails its first request: both its first attempt and the retry
    // (due within 200 ms) go through while the slow receiver still holds its requests.
    let (other, other_url) = Receiver::start(1).await;
    let concluded_at = Instant::now();
    conclude_with_webhook(&app, &other_url).await;
    eventually(
        "the other receiver's event",
        Duration::from_secs(10),
        || {
            let n = other.delivered().len();
            async move { n == 1 }
        },
    )
    .await;
    let took = concluded_at.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "the other receiver's event took {took:?}"
    );
    assert_eq!(other.got().len(), 2, "one failure, then the delivery");
    assert!(
        slow.requests().iter().all(|r| r.answered.is_none()),
        "not vacuous: the slow receiver was still holding every request"
    );
    // The slow receiver gets the rest once it answers, never more than its slots at once.
    eventually(
        "every slow event",
        slow_delay * 3 + Duration::from_secs(5),
        || {
            let n = slow
                .requests()
                .iter()
                .filter(|r| r.answered.is_some())
                .count();
            async move { n == 2 * per_receiver }
        },
    )
    .await;
    assert_eq!(slow.most_at_once(), per_receiver);
    app.stop().await;
}

/// Two replicas share an outbox whose receiver takes `delay` per request: `experiments`
/// experiments with `events_each` events each. Every event is posted exactly once (never
/// twice at once, never again after it was answered), and the run takes about
/// `events / slots x delay`.
async fn two_replicas_post_each_event_once(
    delay: Duration,
    experiments: usize,
    events_each: usize,
) -> Duration {
    let db = postgres::fresh_database().await;
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let (receiver, url) = SlowReceiver::start(delay).await;
    // The production retry policy (10 s per attempt, so a 9 s receiver answers in time), polled
    // often; loopback allowed.
    let options = || joust::engine::EngineOptions {
        webhooks: joust::engine::RetryPolicy {
            poll_interval: Duration::from_millis(50),
            ..Default::default()
        },
        ..fast_webhooks()
    };
    let a = http_server::spawn_app_with(&db, "", options()).await;
    let b = http_server::spawn_app_with(&db, "", options()).await;
    // A backlog (as a receiver's outage leaves): written in one statement, so the first replica
    // to poll sees all of it.
    let mut ids = Vec::new();
    for _ in 0..experiments {
        ids.push(hooked(&a, &url).await);
    }
    let started = Instant::now();
    sqlx::query(
        "INSERT INTO webhook_deliveries (event_id, experiment_id, event, body)
         SELECT gen_random_uuid(), e, 'champion_changed', '{\"backlog\": ' || n || '}'
         FROM unnest($1::bigint[]) AS e, generate_series(1, $2) AS n",
    )
    .bind(&ids)
    .bind(events_each as i32)
    .execute(&pool)
    .await
    .unwrap();
    let total = experiments * events_each;
    eventually(
        "every event delivered",
        delay * (total as u32) + Duration::from_secs(30),
        || {
            let pool = pool.clone();
            async move {
                let n: i64 = sqlx::query_scalar(
                    "SELECT count(*) FROM webhook_deliveries WHERE delivered_at IS NOT NULL",
                )
                .fetch_one(&pool)
                .await
                .unwrap();
                n == total as i64
            }
        },
    )
    .await;
    let took = started.elapsed();
    // Long enough for a lease taken during the run to end: any repeat would have been posted.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let requests = receiver.requests();
    let mut per_event: HashMap<&str, usize> = HashMap::new();
    for r in &requests {
        *per_event.entry(r.event_id.as_str()).or_default() += 1;
    }
    let repeated: Vec<_> = per_event.iter().filter(|(_, n)| **n > 1).collect();
    assert!(repeated.is_empty(), "posted more than once: {repeated:?}");
    assert_eq!(
        (requests.len(), per_event.len()),
        (total, total),
        "{requests:?}"
    );
    let attempts: i64 = sqlx::query_scalar("SELECT sum(attempts) FROM webhook_deliveries")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(attempts, total as i64, "one attempt per event");
    a.stop().await;
    b.stop().await;
    took
}

/// Two replicas over a run of a minute and more: 56 events (four experiments of 14), at most
/// eight at once (four per replica), 9 s each. Before claims were leased per attempt, one replica
/// claimed a pass of events and posted each experiment's one after another under a 30 s lease,
/// so the other replica posted the same event again while it was being posted.
#[tokio::test]
async fn two_replicas_post_each_event_once_over_a_minute_with_a_receiver_taking_9_s() {
    let took = two_replicas_post_each_event_once(Duration::from_secs(9), 4, 14).await;
    assert!(took >= Duration::from_secs(60), "{took:?}");
    // Both replicas posted at once: one alone, four at a time, would take 14 rounds (126 s).
    assert!(took < Duration::from_secs(110), "{took:?}");
}

#[tokio::test]
async fn delivered_rows_are_pruned_and_pending_ones_kept() {
    let db = postgres::fresh_database().await;
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let app = http_server::spawn_app_with(&db, "", fast_webhooks()).await;
    let (up, up_url) = Receiver::start(0).await;
    let (down, down_url) = Receiver::start(0).await;
    *down.failing.lock().unwrap() = true;
    let delivered = conclude_with_webhook(&app, &up_url).await;
    let pending = conclude_with_webhook(&app, &down_url).await;
    eventually(
        "a delivery and a failed attempt",
        Duration::from_secs(10),
        || {
            let (a, b) = (up.delivered().len(), down.got().len());
            async move { a == 1 && b >= 1 }
        },
    )
    .await;
    let rows = |id: i64| {
        let pool = pool.clone();
        async move {
            let n: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM webhook_deliveries WHERE experiment_id = $1",
            )
            .bind(id)
            .fetch_one(&pool)
            .await
            .unwrap();
            n
        }
    };
    assert_eq!((rows(delivered).await, rows(pending).await), (1, 1));
    let pruner = spawn_retention(
        pool.clone(),
        Retention {
            keep: Duration::ZERO,
            batch: 10,
            interval: Duration::from_millis(100),
        },
    );
    eventually("the delivered row pruned", Duration::from_secs(10), || {
        let n = rows(delivered);
        async move { n.await == 0 }
    })
    .await;
    // Several passes later the pending row is still there.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(rows(pending).await, 1);
    pruner.abort();
    app.stop().await;
}
