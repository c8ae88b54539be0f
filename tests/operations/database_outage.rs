//! Database outages: once Postgres is known to be down, outcomes get their 503 and `/readyz` its
//! answer at once, duels keep being served, and the service is back within a second of the
//! database; the embedded Postgres, killed under load, is restarted by joust itself with no
//! acknowledged outcome lost.

use crate::helpers::eventually::eventually;
use crate::helpers::http_server::{error_code, spawn_app_on, win_total};
use crate::helpers::postgres;
use crate::helpers::process::{Server, get_json, post_json};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::Connection;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Once the outage is known, every refusal must come this fast.
const FAST: Duration = Duration::from_millis(100);

#[tokio::test]
async fn a_known_outage_is_answered_at_once_and_recovery_takes_under_a_second() {
    let (mut pg, db, _dir) = postgres::private_server().await;
    let app = spawn_app_on(&db, "").await;
    let id = app
        .create_experiment(&["a", "b", "c"], json!({"name": "uniform"}))
        .await;
    let (token, pair) = app.duel(id).await;
    assert_eq!(app.outcome(&token, &pair[0]).await.0, StatusCode::OK);

    pg.stop().await.expect("stop postgres");
    // The probe notices within its interval; an outcome posted meanwhile may still wait for the
    // pool, but gets its 503 all the same.
    let stopped = Instant::now();
    loop {
        let (s, _) = app.get("/readyz").await;
        if s == StatusCode::SERVICE_UNAVAILABLE {
            break;
        }
        assert!(
            stopped.elapsed() < Duration::from_secs(5),
            "outage not noticed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    println!("outage noticed after {:?}", stopped.elapsed());
    let mut held = Vec::new();
    let mut slowest = Duration::ZERO;
    for _ in 0..20 {
        let (token, pair) = app.duel(id).await;
        let start = Instant::now();
        let resp = app
            .client
            .post(format!("{}/v1/outcomes", app.base))
            .json(&json!({"duel_token": token, "winner": pair[1]}))
            .send()
            .await
            .unwrap();
        let status = resp.status();
        let retry_after = resp.headers().get("retry-after").cloned();
        let body: Value = resp.json().await.unwrap();
        slowest = slowest.max(start.elapsed());
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(retry_after.is_some());
        assert_eq!(error_code(&body), "database_unavailable");

        let start = Instant::now();
        let (s, b) = app.get("/readyz").await;
        slowest = slowest.max(start.elapsed());
        assert_eq!(s, StatusCode::SERVICE_UNAVAILABLE, "{b}");
        held.push((token, pair[1].clone()));
    }
    println!("slowest 503 once the outage was known: {slowest:?}");
    assert!(slowest < FAST, "a 503 took {slowest:?}");

    pg.restart().await.expect("restart postgres");
    // `restart` returns once Postgres accepts connections: from then on, within a second.
    let back = Instant::now();
    let (token, winner) = held.pop().unwrap();
    loop {
        let (s, b) = app.outcome(&token, &winner).await;
        if s == StatusCode::OK {
            assert_eq!(b["status"], "recorded", "{b}");
            break;
        }
        assert_eq!(s, StatusCode::SERVICE_UNAVAILABLE, "{b}");
        assert!(
            back.elapsed() < Duration::from_secs(1),
            "outcomes still refused {:?} after the database returned",
            back.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    println!("recovered {:?} after the database returned", back.elapsed());
    assert_eq!(win_total(&app, id).await, 2);
    app.stop().await;
    pg.stop().await.unwrap();
}

/// The pid of the postmaster running on `data` (from its `postmaster.pid`).
fn postmaster_pid(data: &std::path::Path) -> i32 {
    let text = std::fs::read_to_string(data.join("postgres/data/postmaster.pid")).unwrap();
    text.lines().next().unwrap().trim().parse().unwrap()
}

/// Four clients post duels and outcomes to `joust serve` on its embedded Postgres; the
/// postmaster is killed with SIGKILL. joust restarts it by itself: duels are served throughout,
/// outcomes are refused (503) meanwhile and accepted again within 10 s, and every acknowledged
/// outcome is in the experiment afterwards, also after joust itself is restarted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedded_postgres_killed_under_load_is_restarted() {
    let dir = postgres::TempDir::new();
    let data = dir.path().join("data");
    let data_arg = data.display().to_string();
    let client = reqwest::Client::new();
    let mut server = Server::start_with(&["--data-dir", &data_arg]);
    server.wait_ready(&client).await;
    let base = server.base.clone();
    let r = post_json(
        &client,
        &format!("{base}/v1/experiments"),
        &json!({"name": "kill", "rankers": ["a", "b", "c", "d"], "policy": {"name": "rucb"}}),
    )
    .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let id = r.json::<Value>().await.unwrap()["id"].as_i64().unwrap();

    let acknowledged = Arc::new(AtomicU64::new(0));
    let refused = Arc::new(AtomicU64::new(0));
    let last_ok_ms = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let t0 = Instant::now();
    let mut clients = Vec::new();
    for _ in 0..4 {
        let (client, base) = (client.clone(), base.clone());
        let (acknowledged, refused, last_ok_ms, stop) = (
            acknowledged.clone(),
            refused.clone(),
            last_ok_ms.clone(),
            stop.clone(),
        );
        clients.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let r = post_json(
                    &client,
                    &format!("{base}/v1/experiments/{id}/duels"),
                    &json!({}),
                )
                .await;
                assert_eq!(
                    r.status(),
                    StatusCode::OK,
                    "duels must be served throughout"
                );
                let d: Value = r.json().await.unwrap();
                let r = post_json(
                    &client,
                    &format!("{base}/v1/outcomes"),
                    &json!({"duel_token": d["duel_token"], "winner": d["rankers"][0]}),
                )
                .await;
                match r.status() {
                    StatusCode::OK => {
                        acknowledged.fetch_add(1, Ordering::Relaxed);
                        last_ok_ms.store(t0.elapsed().as_millis() as u64, Ordering::Relaxed);
                    }
                    StatusCode::SERVICE_UNAVAILABLE => {
                        refused.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    other => panic!("outcome answered {other}"),
                }
            }
        }));
    }
    // The four clients may all be inside writes that started before the outage was noticed:
    // those wait for the database and succeed once it is back, so they may never see a 503. A
    // prober gives up on each outcome after 50 ms and tries again, so some of its requests arrive
    // while the outage is known, and those must be refused at once.
    let prober = {
        let (client, base, refused, stop) =
            (client.clone(), base.clone(), refused.clone(), stop.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let r = post_json(
                    &client,
                    &format!("{base}/v1/experiments/{id}/duels"),
                    &json!({}),
                )
                .await;
                let d: Value = r.json().await.unwrap();
                let outcome = client
                    .post(format!("{base}/v1/outcomes"))
                    .json(&json!({"duel_token": d["duel_token"], "winner": "tie"}))
                    .timeout(Duration::from_millis(50))
                    .send()
                    .await;
                match outcome.map(|r| r.status()) {
                    Ok(StatusCode::SERVICE_UNAVAILABLE) => {
                        refused.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(StatusCode::OK) | Err(_) => {}
                    Ok(other) => panic!("the prober's outcome answered {other}"),
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };
    // Under load before the kill.
    eventually("outcomes acknowledged", Duration::from_secs(30), || async {
        acknowledged.load(Ordering::Relaxed) >= 20
    })
    .await;
    let before_kill = acknowledged.load(Ordering::Relaxed);
    assert!(before_kill > 0, "no outcome acknowledged before the kill");
    let pid = postmaster_pid(&data);
    // SAFETY: kill has no memory-safety preconditions.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let killed_ms = t0.elapsed().as_millis() as u64;

    // Recovered once an outcome is acknowledged after the kill.
    let deadline = Instant::now() + Duration::from_secs(10);
    while last_ok_ms.load(Ordering::Relaxed) <= killed_ms + 50
        || refused.load(Ordering::Relaxed) == 0
    {
        assert!(
            Instant::now() < deadline,
            "outcomes not accepted again within 10 s of killing the postmaster (last acknowledged \
             {} ms after the kill, {} refused)",
            last_ok_ms.load(Ordering::Relaxed) as i64 - killed_ms as i64,
            refused.load(Ordering::Relaxed)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    println!(
        "outcomes accepted again {} ms after the postmaster was killed ({} refused meanwhile)",
        last_ok_ms.load(Ordering::Relaxed) - killed_ms,
        refused.load(Ordering::Relaxed)
    );
    assert_ne!(postmaster_pid(&data), pid, "a new postmaster runs");
    // Under load after the recovery too.
    let recovered = acknowledged.load(Ordering::Relaxed);
    eventually("outcomes acknowledged", Duration::from_secs(30), || async {
        acknowledged.load(Ordering::Relaxed) >= recovered + 20
    })
    .await;
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.await.unwrap();
    }
    prober.await.unwrap();
    let acknowledged = acknowledged.load(Ordering::Relaxed);
    let applied = |base: String| {
        let client = client.clone();
        async move {
            let e = get_json(&client, &format!("{base}/v1/experiments/{id}")).await;
            e["outcomes_applied"].as_u64().unwrap()
        }
    };
    assert_eq!(applied(base.clone()).await, acknowledged);

    // joust stops the server it restarted, and a new joust finds every acknowledged outcome.
    server.terminate();
    let new_pid = postmaster_pid_if_any(&data);
    assert!(new_pid.is_none(), "the restarted Postgres outlived joust");
    let server = Server::start_with(&["--data-dir", &data_arg]);
    server.wait_ready(&client).await;
    assert_eq!(applied(server.base.clone()).await, acknowledged);
}

fn postmaster_pid_if_any(data: &std::path::Path) -> Option<i32> {
    let text = std::fs::read_to_string(data.join("postgres/data/postmaster.pid")).ok()?;
    let pid: i32 = text.lines().next()?.trim().parse().ok()?;
    std::path::Path::new(&format!("/proc/{pid}"))
        .exists()
        .then_some(pid)
}

/// Connections the database closed while they sat idle (a restart between two quiet moments, an
/// operator's `pg_terminate_backend`, a proxy's idle timeout) cost no refused request: joust
/// checks a connection idle for a second before it uses it, the outcome writer's own included.
#[tokio::test]
async fn connections_closed_while_idle_refuse_nothing() {
    let db = postgres::fresh_database().await;
    let app = spawn_app_on(&db, "").await;
    let id = app
        .create_experiment(&["a", "b", "c"], json!({"name": "uniform"}))
        .await;
    for i in 0..3 {
        let (token, pair) = app.duel(id).await;
        assert_eq!(app.outcome(&token, &pair[i % 2]).await.0, StatusCode::OK);
    }

    let mut admin = sqlx::PgConnection::connect(&db).await.unwrap();
    let closed: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()) t",
    )
    .fetch_one(&mut admin)
    .await
    .unwrap();
    assert!(closed >= 1, "no connection of the service to close");
    tokio::time::sleep(Duration::from_millis(1_200)).await;

    // Every outcome is recorded at its first post.
    for i in 0..3 {
        let (token, pair) = app.duel(id).await;
        let (s, b) = app.outcome(&token, &pair[i % 2]).await;
        assert_eq!(
            (s, &b["status"]),
            (StatusCode::OK, &json!("recorded")),
            "{b}"
        );
    }
    eventually(
        "all six outcomes applied",
        Duration::from_secs(10),
        || async { win_total(&app, id).await == 6 },
    )
    .await;
    app.stop().await;
}
