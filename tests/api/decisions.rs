//! Decisions over HTTP: an experiment fed from MSLR-Navigational decides, reports its decision,
//! posts a signed `decided` event to a webhook receiver the test runs, and concludes itself by
//! its stop rule; webhook deliveries are retried until delivered (and then never again) and
//! survive a restart of the server; bad settings are 422 and change nothing.

use crate::helpers::eventually::eventually;
use crate::helpers::http_server::{self, TestApp, error_code, test_options};
use crate::helpers::postgres;
use axum::http::{HeaderMap, StatusCode as AxumStatus};
use hmac::{Hmac, Mac};
use joust::sim::{PrefMatrix, resolve_matrix};
use rand::{Rng, SeedableRng};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::Sha256;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) const SECRET: &str = "test-secret-0123456789abcdef";

/// One request the receiver got: its headers of interest, its body and what it answered.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    pub(crate) signature: String,
    pub(crate) event: String,
    pub(crate) event_id: String,
    pub(crate) body: String,
    pub(crate) answered: u16,
}

impl Received {
    /// What a receiver got in one request, and the status it answered.
    pub(crate) fn of(headers: &HeaderMap, body: String, answered: u16) -> Received {
        let header = |n: &str| {
            headers
                .get(n)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        };
        Received {
            signature: header("joust-signature"),
            event: header("joust-event"),
            event_id: header("joust-event-id"),
            body,
            answered,
        }
    }
}

/// A webhook receiver on a local port: it answers 503 to the first `fail_first` requests (or to
/// every request while `failing` is set) and 200 after, and records every request.
#[derive(Clone, Default)]
pub(crate) struct Receiver {
    got: Arc<Mutex<Vec<Received>>>,
    fail_first: Arc<Mutex<usize>>,
    pub(crate) failing: Arc<Mutex<bool>>,
}

impl Receiver {
    pub(crate) async fn start(fail_first: usize) -> (Receiver, String) {
        let r = Receiver {
            fail_first: Arc::new(Mutex::new(fail_first)),
            ..Default::default()
        };
        let state = r.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: String| {
                let state = state.clone();
                async move {
                    let fail = {
                        let mut left = state.fail_first.lock().unwrap();
                        let fail = *left > 0 || *state.failing.lock().unwrap();
                        *left = left.saturating_sub(1);
                        fail
                    };
                    let answered = if fail { 503 } else { 200 };
                    state
                        .got
                        .lock()
                        .unwrap()
                        .push(Received::of(&headers, body, answered));
                    AxumStatus::from_u16(answered).unwrap()
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (r, url)
    }

    pub(crate) fn got(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    pub(crate) fn delivered(&self) -> Vec<Received> {
        self.got()
            .into_iter()
            .filter(|r| r.answered == 200)
            .collect()
    }
}

/// Checks a request's `Joust-Signature` as docs/api.md tells a receiver to: HMAC-SHA256 keyed
/// with the secret over `"<t>.<body>"`, compared with `v1`, and `t` recent.
pub(crate) fn verify_signature(r: &Received, secret: &str) {
    let (t, v1) = r
        .signature
        .split_once(',')
        .and_then(|(t, v)| Some((t.strip_prefix("t=")?, v.strip_prefix("v1=")?)))
        .unwrap_or_else(|| panic!("malformed signature header {:?}", r.signature));
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.{}", r.body).as_bytes());
    let expected: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(v1, expected, "signature of {}", r.body);
    let age = chrono::Utc::now().timestamp() - t.parse::<i64>().unwrap();
    assert!((0..300).contains(&age), "timestamp {t} is {age} s old");
}

/// Options of a server that retries webhooks within milliseconds, so tests see retries soon,
/// and posts to loopback addresses, where the tests' receivers listen (an operator's
/// `--webhook-allow-networks 127.0.0.0/8`; without it they are refused, see webhook_egress.rs).
pub(crate) fn fast_webhooks() -> joust::engine::EngineOptions {
    joust::engine::EngineOptions {
        webhooks: joust::engine::RetryPolicy {
            base_delay: Duration::from_millis(50),
            max_delay: Duration::from_millis(200),
            max_attempts: 8,
            attempt_timeout: Duration::from_secs(5),
            poll_interval: Duration::from_millis(20),
            ..Default::default()
        },
        webhook_egress: loopback_allowed(),
        ..test_options()
    }
}

/// The egress rule of an operator who allows loopback addresses.
pub(crate) fn loopback_allowed() -> joust::engine::Egress {
    joust::engine::Egress::allowing(joust::engine::Egress::parse_networks("127.0.0.0/8").unwrap())
}

/// A subset of MSLR-Navigational's 136 rankers, to keep the test quick: its Condorcet winner
/// and the first seven rankers it beats with probability at least 0.6 (gaps of 0.1 or more,
/// so that a decision at delta 0.05 needs thousands of outcomes, not hundreds of thousands).
fn mslr_subset() -> (PrefMatrix, Vec<usize>, usize) {
    let m = resolve_matrix(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/mslr-navigational.txt"
    ))
    .unwrap();
    let w = m
        .condorcet_winner()
        .expect("MSLR-Navigational has a Condorcet winner");
    let mut arms = vec![w];
    arms.extend((0..m.k()).filter(|&j| j != w && m.p(w, j) >= 0.6).take(7));
    assert_eq!(arms.len(), 8);
    (m, arms, w)
}

fn ranker_name(arm: usize) -> String {
    format!("mslr-{arm}")
}

/// Plays `n` duels of experiment `id` with outcomes drawn from `m`, posted in one batch.
async fn play(app: &TestApp, id: i64, m: &PrefMatrix, n: usize, rng: &mut impl Rng) {
    let arm_of = |name: &str| {
        name.strip_prefix("mslr-")
            .unwrap()
            .parse::<usize>()
            .unwrap()
    };
    let mut outcomes = Vec::with_capacity(n);
    for _ in 0..n {
        let (token, pair) = app.duel(id).await;
        let (i, j) = (arm_of(&pair[0]), arm_of(&pair[1]));
        let winner = if i == j {
            "tie".to_string()
        } else if rng.random::<f64>() < m.p(i, j) {
            pair[0].clone()
        } else {
            pair[1].clone()
        };
        outcomes.push(json!({"duel_token": token, "winner": winner}));
    }
    let (s, b) = app
        .post("/v1/outcomes/batch", json!({"outcomes": outcomes}))
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["rejected"], 0, "{b}");
}

#[tokio::test]
async fn an_mslr_experiment_decides_posts_a_signed_decided_event_and_concludes_itself() {
    let db = postgres::fresh_database().await;
    let app = http_server::spawn_app_with(&db, "", fast_webhooks()).await;
    let (receiver, url) = Receiver::start(0).await;
    let (m, arms, best) = mslr_subset();
    let names: Vec<String> = arms.iter().map(|&a| ranker_name(a)).collect();
    let min_outcomes = 1000;
    let (s, created) = app
        .post(
            "/v1/experiments",
            json!({
                "name": "mslr navigational, 8 rankers",
                "rankers": names,
                "seed": 23,
                "stop_rule": {"min_outcomes": min_outcomes},
                "webhook": {"url": url, "secret": SECRET},
            }),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{created}");
    let id = created["id"].as_i64().unwrap();
    // The secret is write-only.
    assert_eq!(created["webhook"], json!({"url": url}));
    assert!(!created.to_string().contains(SECRET));
    assert_eq!(created["stop_rule"], json!({"min_outcomes": min_outcomes}));
    let fresh = &created["decision"];
    assert_eq!(fresh["decided"], false, "{fresh}");
    assert_eq!(fresh["champion"], Value::Null);
    assert_eq!(fresh["possible_best_total"], 8, "{fresh}");

    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
    let mut played = 0;
    let mut saw_undecided_with_missing = false;
    let e = loop {
        play(&app, id, &m, 500, &mut rng).await;
        played += 500;
        let e = app.experiment(id).await;
        let d = &e["decision"];
        if !d["decided"].as_bool().unwrap() {
            // Until decided, every possible best ranker says what it still lacks.
            let contenders = d["possible_best"].as_array().unwrap();
            assert!(!contenders.is_empty(), "{d}");
            saw_undecided_with_missing |= contenders
                .iter()
                .any(|c| !c["missing"].as_array().unwrap().is_empty());
            assert_eq!(e["status"], "running");
        }
        if e["status"] == "concluded" {
            break e;
        }
        // It concluded after 4,500 to 5,500 duels in five runs (the policy soon self-duels its
        // champion, which is no evidence, and the confirmation layer takes half the steps for
        // comparisons with the rivals it lacks evidence against); ten times that leaves room for
        // slower draws, and fails in some ten seconds when the decision never comes.
        assert!(
            played < 60_000,
            "not concluded after {played} duels: {d} {}",
            e["rankers"]
        );
    };
    assert!(saw_undecided_with_missing);
    let d = &e["decision"];
    assert_eq!(d["decided"], true, "{d}");
    assert_eq!(d["kind"], "condorcet", "{d}");
    assert_eq!(d["champion"], ranker_name(best), "{d}");
    assert_eq!(d["winners"], json!([ranker_name(best)]), "{d}");
    assert!(e["outcomes_applied"].as_i64().unwrap() >= min_outcomes);
    let (_, list) = app.get("/v1/experiments").await;
    assert_eq!(list["experiments"][0]["decided"], true, "{list}");
    // A concluded experiment serves its decided champion on both sides, without a token.
    let (s, duel) = app
        .post(&format!("/v1/experiments/{id}/duels"), json!({}))
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(duel["concluded"], true);
    assert_eq!(
        duel["rankers"],
        json!([ranker_name(best), ranker_name(best)])
    );

    eventually(
        "the decided and concluded events",
        Duration::from_secs(10),
        || {
            let got = receiver.delivered();
            async move { got.iter().any(|r| r.event == "concluded") }
        },
    )
    .await;
    let got = receiver.delivered();
    let events: Vec<&str> = got.iter().map(|r| r.event.as_str()).collect();
    assert!(events.contains(&"decided"), "{events:?}");
    let ids: HashSet<&str> = got.iter().map(|r| r.event_id.as_str()).collect();
    assert_eq!(ids.len(), got.len(), "each event once: {events:?}");
    for r in &got {
        verify_signature(r, SECRET);
        let body: Value = serde_json::from_str(&r.body).unwrap();
        assert_eq!(body["event"], r.event.as_str());
        assert_eq!(body["event_id"], r.event_id.as_str());
        assert_eq!(body["experiment_id"], id);
        assert!(body["at"].as_str().is_some(), "{body}");
        if r.event != "champion_changed" {
            assert_eq!(body["champion"], ranker_name(best), "{body}");
        }
    }
    let decided: Value = serde_json::from_str(&got[0].body).unwrap();
    assert_eq!(decided["event"], "decided", "the first event: {events:?}");
    // Duels issued before the conclusion may still report; they announce nothing more.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.got().len(), got.len());
    app.stop().await;
}

/// Issues `n` duels of a fresh experiment before any outcome is posted and keeps the tokens of
/// those between two different rankers: outcomes that can arrive at any later time, whatever
/// happened to the experiment meanwhile.
pub(crate) async fn issue_early(app: &TestApp, id: i64, n: usize) -> Vec<String> {
    let mut tokens = Vec::new();
    for _ in 0..n {
        let (token, pair) = app.duel(id).await;
        if pair[0] != pair[1] {
            tokens.push(token);
        }
    }
    tokens
}

/// Posts `tokens`' outcomes, all won by `winner`, and waits until they are applied.
pub(crate) async fn report_all(app: &TestApp, id: i64, tokens: &[String], winner: &str) {
    let before = app.experiment(id).await["outcomes_applied"]
        .as_i64()
        .unwrap();
    let outcomes: Vec<Value> = tokens
        .iter()
        .map(|t| json!({"duel_token": t, "winner": winner}))
        .collect();
    let (s, b) = app
        .post("/v1/outcomes/batch", json!({"outcomes": outcomes}))
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["rejected"], 0, "{b}");
    let expected = before + tokens.len() as i64;
    eventually(
        "the outcomes applied",
        Duration::from_secs(10),
        || async move {
            app.experiment(id).await["outcomes_applied"]
                .as_i64()
                .unwrap()
                == expected
        },
    )
    .await;
}

/// Two rankers with a webhook to `url` and the stop rule `stop_rule` (none when null).
/// A two-ranker experiment (`a`, `b`, seed 3) named `name`, with the default policy.
async fn two_rankers(app: &TestApp, name: &str) -> i64 {
    let (s, b) = app
        .post(
            "/v1/experiments",
            json!({"name": name, "rankers": ["a", "b"], "seed": 3}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    b["id"].as_i64().unwrap()
}

pub(crate) async fn two_rankers_with_webhook(app: &TestApp, url: &str, stop_rule: Value) -> i64 {
    let mut body = json!({"name": "flip", "rankers": ["a", "b"], "seed": 3,
                          "webhook": {"url": url, "secret": SECRET}});
    if !stop_rule.is_null() {
        body["stop_rule"] = stop_rule;
    }
    let (s, b) = app.post("/v1/experiments", body).await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    b["id"].as_i64().unwrap()
}

/// The events the receiver got (delivered), in order, once `last` has arrived and a while after.
async fn events_after(receiver: &Receiver, last: &'static str) -> Vec<String> {
    eventually(last, Duration::from_secs(10), || {
        let got = receiver.delivered();
        async move { got.iter().any(|r| r.event == last) }
    })
    .await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    // Events of one transaction may be delivered in either order.
    let mut events: Vec<String> = receiver.delivered().into_iter().map(|r| r.event).collect();
    events.sort();
    events
}

#[tokio::test]
async fn a_concluded_decision_is_final_when_earlier_duels_report_after_the_conclusion() {
    let db = postgres::fresh_database().await;
    let app = http_server::spawn_app_with(&db, "", fast_webhooks()).await;
    let (receiver, url) = Receiver::start(0).await;
    let id = two_rankers_with_webhook(&app, &url, json!({"min_outcomes": 0})).await;
    // With no evidence yet the policy alone chooses (the confirmation layer waits for 100
    // comparisons), and about half its duels are self-duels: 2,000 give some 1,000 of two rankers.
    let tokens = issue_early(&app, id, 2000).await;
    assert!(tokens.len() >= 600, "{} distinct duels", tokens.len());
    // 150 wins of `a` decide it (the bound at delta 0.05 separates all-wins after about 100
    // comparisons): the stop rule concludes the experiment.
    report_all(&app, id, &tokens[..150], "a").await;
    let e = app.experiment(id).await;
    assert_eq!(e["status"], "concluded", "{e}");
    assert_eq!(e["decision"]["champion"], "a", "{e}");
    // The other duels, issued before the conclusion, all report wins of `b`: the counts now favour
    // `b` clearly (at least 450 to 150), yet the decision stays the one concluded with.
    report_all(&app, id, &tokens[150..], "b").await;
    let e = app.experiment(id).await;
    assert_eq!(e["status"], "concluded");
    assert_eq!(e["decision"]["decided"], true, "{e}");
    assert_eq!(e["decision"]["champion"], "a", "{e}");
    assert_eq!(e["decision"]["winners"], json!(["a"]), "{e}");
    // Not vacuous: the counts' own champion report has moved to `b`.
    assert_eq!(e["champion"]["ranker"], "b", "{}", e["champion"]);
    let (_, list) = app.get("/v1/experiments").await;
    assert_eq!(list["experiments"][0]["decided"], true, "{list}");
    // It serves the champion it concluded with.
    let (s, duel) = app
        .post(&format!("/v1/experiments/{id}/duels"), json!({}))
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(duel["rankers"], json!(["a", "a"]), "{duel}");
    let events = events_after(&receiver, "concluded").await;
    assert_eq!(events, ["concluded", "decided"]);
    app.stop().await;
}

#[tokio::test]
async fn a_decision_does_not_lapse_and_is_announced_once() {
    let db = postgres::fresh_database().await;
    let app = http_server::spawn_app_with(&db, "", fast_webhooks()).await;
    let (receiver, url) = Receiver::start(0).await;
    let id = two_rankers_with_webhook(&app, &url, Value::Null).await;
    let tokens = issue_early(&app, id, 2000).await;
    assert!(tokens.len() >= 600, "{} distinct duels", tokens.len());
    let decided = |e: &Value| e["decision"]["decided"].as_bool().unwrap();
    // Decided for `a` at 150 to 0 (the bound at delta 0.05 separates all-wins after about 100
    // comparisons).
    report_all(&app, id, &tokens[..150], "a").await;
    assert!(decided(&app.experiment(id).await));
    // At 150 to 150 the counts separate nobody, yet the decision made at 150 to 0 stands: it
    // was right with probability 1 - delta when made, and stays so.
    report_all(&app, id, &tokens[150..300], "b").await;
    let e = app.experiment(id).await;
    assert!(decided(&e), "{e}");
    assert_eq!(e["decision"]["champion"], "a", "{e}");
    assert_eq!(e["decision"]["winners"], json!(["a"]), "{e}");
    // Not vacuous: what the counts say now is still shown, and says undecided (both rankers may
    // be best, `a` missing its evidence against `b`).
    assert_eq!(e["decision"]["possible_best_total"], 2, "{e}");
    let (_, list) = app.get("/v1/experiments").await;
    let entry = &list["experiments"][0];
    assert_eq!(
        (&entry["decided"], &entry["champion"]),
        (&json!(true), &json!("a")),
        "{entry}"
    );
    report_all(&app, id, &tokens[300..600], "a").await;
    let e = app.experiment(id).await;
    assert!(decided(&e) && e["decision"]["champion"] == "a", "{e}");
    // Only the first decision is announced; a PATCH concluding it then says `concluded`.
    let (s, b) = app
        .patch_experiment(id, json!({"status": "concluded"}))
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let events = events_after(&receiver, "concluded").await;
    assert_eq!(events, ["concluded", "decided"]);
    app.stop().await;
}

/// The kept decision is part of the stored state, not only of the snapshot that made it: every
/// snapshot read from the database (another replica's, this one's after a restart, an
/// administrative change's, the cache refresh's) must hold it too. Otherwise a reload after the
/// counts evened out reads the experiment undecided (the refresh can reload the very version its
/// owner just applied, which made `a_decision_does_not_lapse_and_is_announced_once` fail under
/// load).
#[tokio::test]
async fn a_kept_decision_is_stored_and_read_back() {
    let db = postgres::fresh_database().await;
    let app = http_server::spawn_app_on(&db, "").await;
    let id = two_rankers(&app, "kept").await;
    let tokens = issue_early(&app, id, 2000).await;
    assert!(tokens.len() >= 300, "{} distinct duels", tokens.len());
    let decided = |e: &Value| e["decision"]["decided"].as_bool().unwrap();
    // Decided for `a` at 150 to 0, and kept at 150 to 150, as the process that applied them says.
    report_all(&app, id, &tokens[..150], "a").await;
    assert!(decided(&app.experiment(id).await));
    report_all(&app, id, &tokens[150..300], "b").await;
    let e = app.experiment(id).await;
    assert!(decided(&e) && e["decision"]["champion"] == "a", "{e}");
    assert_eq!(e["decision"]["possible_best_total"], 2, "{e}");
    // A process that reads the experiment from the database says the same.
    app.stop().await;
    let app = http_server::spawn_app_on(&db, "").await;
    let e = app.experiment(id).await;
    assert_eq!(e["outcomes_applied"], 300, "{e}");
    assert!(decided(&e), "{e}");
    assert_eq!(e["decision"]["champion"], "a", "{e}");
    assert_eq!(e["decision"]["winners"], json!(["a"]), "{e}");
    // Not vacuous: the counts alone decide nothing.
    assert_eq!(e["decision"]["possible_best_total"], 2, "{e}");
    // An administrative change reads the stored state too: a stop rule the decision satisfies
    // concludes the experiment with it.
    let (s, b) = app
        .patch_experiment(id, json!({"stop_rule": {"min_outcomes": 0}}))
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let e = app.experiment(id).await;
    assert_eq!(e["status"], "concluded", "{e}");
    assert_eq!(e["decision"]["champion"], "a", "{e}");
    app.stop().await;
}

#[tokio::test]
async fn a_kept_decision_is_dropped_when_a_ranker_is_added() {
    let app = http_server::spawn_app().await;
    let id = two_rankers(&app, "grows").await;
    let tokens = issue_early(&app, id, 600).await;
    assert!(tokens.len() >= 150, "{} distinct duels", tokens.len());
    report_all(&app, id, &tokens[..150], "a").await;
    assert_eq!(app.experiment(id).await["decision"]["decided"], true);
    // `c` was never compared with `a`: "a beats every other ranker" no longer stands.
    let (s, b) = app
        .post(
            &format!("/v1/experiments/{id}/rankers"),
            json!({"name": "c"}),
        )
        .await;
    assert!(s.is_success(), "{s} {b}");
    let e = app.experiment(id).await;
    assert_eq!(e["decision"]["decided"], false, "{e}");
    assert_eq!(e["decision"]["champion"], Value::Null, "{e}");
    app.stop().await;
}

/// Creates a two-ranker experiment with a webhook to `url` and concludes it by PATCH, which
/// writes a `concluded` event.
pub(crate) async fn conclude_with_webhook(app: &TestApp, url: &str) -> i64 {
    let (s, b) = app
        .post(
            "/v1/experiments",
            json!({"name": "hooked", "rankers": ["a", "b"],
                   "webhook": {"url": url, "secret": SECRET}}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    let id = b["id"].as_i64().unwrap();
    let (s, b) = app
        .patch_experiment(id, json!({"status": "concluded"}))
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    id
}

#[tokio::test]
async fn a_failing_receiver_gets_the_event_after_retries_and_no_attempt_after_delivery() {
    let db = postgres::fresh_database().await;
    let app = http_server::spawn_app_with(&db, "", fast_webhooks()).await;
    let (receiver, url) = Receiver::start(3).await;
    let id = conclude_with_webhook(&app, &url).await;
    eventually(
        "a delivery after three failures",
        Duration::from_secs(10),
        || {
            let n = receiver.delivered().len();
            async move { n == 1 }
        },
    )
    .await;
    // Well past several backoffs: nothing more is sent once delivered.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let got = receiver.got();
    let answers: Vec<u16> = got.iter().map(|r| r.answered).collect();
    assert_eq!(answers, [503, 503, 503, 200]);
    let ids: HashSet<&str> = got.iter().map(|r| r.event_id.as_str()).collect();
    assert_eq!(ids.len(), 1, "every attempt sends the same event");
    assert!(got.windows(2).all(|w| w[0].body == w[1].body));
    for r in &got {
        verify_signature(r, SECRET);
        assert_eq!(r.event, "concluded");
    }
    let body: Value = serde_json::from_str(&got[0].body).unwrap();
    assert_eq!(body["experiment_id"], id);
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let (attempts, delivered): (i32, bool) = sqlx::query_as(
        "SELECT attempts, delivered_at IS NOT NULL FROM webhook_deliveries WHERE experiment_id = $1",
    )
    .bind(id)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!((attempts, delivered), (4, true));
    app.stop().await;
}

#[tokio::test]
async fn pending_deliveries_survive_a_restart_of_the_server() {
    let db = postgres::fresh_database().await;
    let (receiver, url) = Receiver::start(0).await;
    *receiver.failing.lock().unwrap() = true;
    let first = http_server::spawn_app_with(&db, "", fast_webhooks()).await;
    conclude_with_webhook(&first, &url).await;
    eventually("a failed attempt", Duration::from_secs(10), || {
        let n = receiver.got().len();
        async move { n >= 1 }
    })
    .await;
    first.stop().await;
    // The event is a row in Postgres, not a task of the stopped server.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(receiver.delivered().is_empty());
    *receiver.failing.lock().unwrap() = false;
    let second = http_server::spawn_app_with(&db, "", fast_webhooks()).await;
    eventually(
        "the delivery by the restarted server",
        Duration::from_secs(10),
        || {
            let n = receiver.delivered().len();
            async move { n == 1 }
        },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got = receiver.got();
    assert_eq!(receiver.delivered().len(), 1, "{got:?}");
    let ids: HashSet<&str> = got.iter().map(|r| r.event_id.as_str()).collect();
    assert_eq!(ids.len(), 1);
    verify_signature(&receiver.delivered()[0], SECRET);
    second.stop().await;
}

#[tokio::test]
async fn bad_decision_settings_stop_rules_and_webhooks_are_422_and_change_nothing() {
    let app = http_server::spawn_app().await;
    let base = json!({"name": "x", "rankers": ["a", "b", "c"]});
    let with = |key: &str, value: Value| {
        let mut b = base.clone();
        b[key] = value;
        b
    };
    for (body, code) in [
        (
            with("decision", json!({"delta": 0.7})),
            "invalid_decision_settings",
        ),
        (
            with("decision", json!({"delta": 0.0})),
            "invalid_decision_settings",
        ),
        (
            with("decision", json!({"epsilon": -0.1})),
            "invalid_decision_settings",
        ),
        (
            with("decision", json!({"max_confirmation_share": 0.0})),
            "invalid_decision_settings",
        ),
        (with("decision", json!({"delta": null})), "invalid_body"),
        (with("decision", json!({"gamma": 1})), "invalid_body"),
        (
            with("stop_rule", json!({"min_outcomes": 2_000_000_000_000u64})),
            "invalid_stop_rule",
        ),
        (
            with("stop_rule", json!({"min_outcomes": -1})),
            "invalid_body",
        ),
        (
            with(
                "webhook",
                json!({"url": "https://user:pw@hooks.example.com/", "secret": SECRET}),
            ),
            "invalid_webhook",
        ),
        (
            with("webhook", json!({"url": "not a url", "secret": SECRET})),
            "invalid_webhook",
        ),
        (
            with(
                "webhook",
                json!({"url": "http://hooks.internal/", "secret": "short"}),
            ),
            "invalid_webhook",
        ),
        (
            with("webhook", json!({"url": "http://hooks.internal/"})),
            "invalid_body",
        ),
    ] {
        let (s, b) = app.post("/v1/experiments", body.clone()).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {b}");
        assert_eq!(error_code(&b), code, "{body}: {b}");
    }
    let (_, list) = app.get("/v1/experiments").await;
    assert_eq!(list["experiments"], json!([]), "nothing was created");

    let (s, created) = app
        .post(
            "/v1/experiments",
            with("decision", json!({"delta": 0.01, "confirmation": false})),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{created}");
    let id = created["id"].as_i64().unwrap();
    let settings = created["decision_settings"].clone();
    assert_eq!(settings["delta"], 0.01);
    assert_eq!(settings["epsilon"], 0.0);
    assert_eq!(settings["confirmation"], false);
    assert_eq!(created["stop_rule"], Value::Null);
    assert_eq!(created["webhook"], Value::Null);
    for (patch, code) in [
        (
            json!({"status": "paused", "decision": {"epsilon": 0.5}}),
            "invalid_decision_settings",
        ),
        (
            json!({"status": "paused", "stop_rule": {"min_outcomes": 2_000_000_000_000u64}}),
            "invalid_stop_rule",
        ),
        (
            json!({"status": "paused", "webhook": {"url": "ftp://x/", "secret": SECRET}}),
            "invalid_webhook",
        ),
    ] {
        let (s, b) = app.patch_experiment(id, patch.clone()).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{patch}: {b}");
        assert_eq!(error_code(&b), code, "{patch}: {b}");
    }
    let e = app.experiment(id).await;
    assert_eq!(e["status"], "running", "a refused change changes nothing");
    assert_eq!(e["decision_settings"], settings);
    assert_eq!(e["version"], created["version"]);

    // A good change: one setting changes, the others keep their values; the webhook's secret
    // is never shown.
    let (s, b) = app
        .patch_experiment(
            id,
            json!({"decision": {"epsilon": 0.05},
                   "stop_rule": {"min_outcomes": 10},
                   "webhook": {"url": "http://hooks.internal/joust", "secret": SECRET}}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["decision_settings"]["epsilon"], 0.05);
    assert_eq!(b["decision_settings"]["delta"], 0.01);
    assert_eq!(b["stop_rule"], json!({"min_outcomes": 10}));
    assert_eq!(b["webhook"], json!({"url": "http://hooks.internal/joust"}));
    assert!(!b.to_string().contains(SECRET));
    let (s, b) = app
        .patch_experiment(id, json!({"stop_rule": null, "webhook": null}))
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(
        (b["stop_rule"].clone(), b["webhook"].clone()),
        (Value::Null, Value::Null)
    );
}

#[tokio::test]
async fn two_replicas_deliver_each_event_once() {
    let db = postgres::fresh_database().await;
    let (receiver, url) = Receiver::start(0).await;
    let a = http_server::spawn_app_with(&db, "", fast_webhooks()).await;
    let b = http_server::spawn_app_with(&db, "", fast_webhooks()).await;
    // Both replicas poll the same outbox every 20 ms; every event is claimed by one of them.
    for i in 0..10 {
        conclude_with_webhook(if i % 2 == 0 { &a } else { &b }, &url).await;
    }
    eventually("ten deliveries", Duration::from_secs(10), || {
        let n = receiver.delivered().len();
        async move { n >= 10 }
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got = receiver.got();
    let ids: HashSet<&str> = got.iter().map(|r| r.event_id.as_str()).collect();
    assert_eq!((got.len(), ids.len()), (10, 10), "{got:?}");
    a.stop().await;
    b.stop().await;
}

/// Every `lower` and `upper` in `v`, at any depth.
fn bounds_in(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "lower" || k == "upper" {
                    out.push(x.clone());
                }
                bounds_in(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| bounds_in(x, out)),
        _ => {}
    }
}

/// The smallest delta the API accepts (5e-324, which halved is 0 as a double) still gives numeric
/// bounds: they are computed from its logarithm.
#[tokio::test]
async fn the_smallest_delta_gives_numeric_bounds() {
    let app = http_server::spawn_app().await;
    let (s, b) = app
        .post(
            "/v1/experiments",
            json!({"name": "tiny delta", "rankers": ["a", "b", "c"], "decision": {"delta": 5e-324}}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    let id = b["id"].as_i64().unwrap();
    for _ in 0..12 {
        let (token, pair) = app.duel(id).await;
        app.outcome(&token, &pair[0]).await;
    }
    let e = app.experiment(id).await;
    let mut bounds = Vec::new();
    bounds_in(&e, &mut bounds);
    assert!(!bounds.is_empty(), "{e}");
    for x in &bounds {
        let x = x.as_f64().unwrap_or_else(|| panic!("a bound is {x}: {e}"));
        assert!((0.0..=1.0).contains(&x), "{e}");
    }
    app.stop().await;
}
