//! Durability and scale-out: restarts lose nothing acknowledged, two `joust serve` processes on
//! one database stay correct, and a Postgres outage refuses outcomes (503) while duels keep being
//! served, with recovery and no lost acknowledged outcome once the database returns.

use crate::helpers::eventually::eventually;
use crate::helpers::http_server::{TestApp, error_code, spawn_app, spawn_app_on, win_total};
use crate::helpers::process::{Server, get_json};
use crate::helpers::{postgres, process};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::process::Command;
use std::time::{Duration, Instant};

/// The parts of an experiment that must survive a restart or agree across replicas.
fn durable_view(e: &Value) -> Value {
    json!({
        "version": e["version"],
        "outcomes_applied": e["outcomes_applied"],
        "ties_recorded": e["ties_recorded"],
        "rankers": e["rankers"],
        "champion": e["champion"],
    })
}

#[tokio::test]
async fn restart_loses_nothing_and_resumes() {
    let app = spawn_app().await;
    let id = app
        .create_experiment(&["a", "b", "c", "d", "e"], json!({"name": "uniform"}))
        .await;
    for i in 0..60 {
        let (token, pair) = app.duel(id).await;
        let winner = if i % 7 == 0 {
            "tie"
        } else {
            pair[i % 2].as_str()
        };
        assert_eq!(app.outcome(&token, winner).await.0, StatusCode::OK);
    }
    let before = app.experiment(id).await;
    let (_, matrix_before) = app.get(&format!("/v1/experiments/{id}/matrix")).await;
    let (token, pair) = app.duel(id).await;
    let db = app.db_url.clone();
    app.stop().await;

    let app = spawn_app_on(&db, "").await;
    let after = app.experiment(id).await;
    assert_eq!(durable_view(&before), durable_view(&after));
    let (_, matrix_after) = app.get(&format!("/v1/experiments/{id}/matrix")).await;
    assert_eq!(matrix_before, matrix_after);
    // A duel issued before the restart can still get its outcome.
    let (s, b) = app.outcome(&token, &pair[0]).await;
    assert_eq!(
        (s, b["status"].as_str()),
        (StatusCode::OK, Some("recorded")),
        "{b}"
    );
    app.stop().await;
}

/// An experiment deleted through one instance while another still caches it (it reloads every
/// 200 ms): outcomes sent to the other at once, a repeat of the same outcome in one batch
/// included, are refused, and no outcome row of them stays in the database.
#[tokio::test]
async fn outcomes_for_an_experiment_deleted_elsewhere_are_refused_and_not_kept() {
    let a = spawn_app().await;
    let b = spawn_app_on(&a.db_url, "").await;
    let id = a
        .create_experiment(&["p", "q"], json!({"name": "uniform"}))
        .await;
    let (token, pair) = b.duel(id).await;
    let (s, _) = a.delete_experiment(id).await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let outcome = json!({"duel_token": token, "winner": pair[0]});
    let (s, body) = b
        .post(
            "/v1/outcomes/batch",
            json!({"outcomes": [outcome, outcome]}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(body["rejected"], 2, "{body}");
    for r in body["results"].as_array().unwrap() {
        assert_eq!(error_code(r), "unknown_experiment", "{body}");
    }
    let pool = sqlx::PgPool::connect(&a.db_url).await.unwrap();
    let kept: i64 = sqlx::query_scalar("SELECT count(*) FROM outcomes WHERE experiment_id = $1")
        .bind(id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(kept, 0);
    pool.close().await;
    b.stop().await;
    a.stop().await;
}

async fn post(client: &reqwest::Client, url: String, body: Value) -> (StatusCode, Value) {
    let r = client.post(url).json(&body).send().await.expect("request");
    let s = r.status();
    (s, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn two_processes_on_one_database_stay_correct() {
    let db = postgres::fresh_database().await;
    let servers = [Server::start(&db), Server::start(&db)];
    let client = reqwest::Client::new();
    for s in &servers {
        s.wait_ready(&client).await;
    }
    let (s, b) = post(
        &client,
        format!("{}/v1/experiments", servers[0].base),
        json!({"name": "replicas", "rankers": ["a", "b", "c", "d", "e", "f"],
               "policy": {"name": "merge_dts", "params": {"batch_size": 4}}, "seed": 1}),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    let id = b["id"].as_i64().unwrap();

    // Eight concurrent workers, each asking one server for duels and posting the outcome to the
    // other (so every replica writes outcomes for duels another issued), retrying every third.
    let mut tasks = Vec::new();
    for w in 0..8usize {
        let client = client.clone();
        let (duel_base, outcome_base) = (
            servers[w % 2].base.clone(),
            servers[(w + 1) % 2].base.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut acknowledged_wins = 0u64;
            for i in 0..60usize {
                let (s, d) = post(
                    &client,
                    format!("{duel_base}/v1/experiments/{id}/duels"),
                    json!({}),
                )
                .await;
                assert_eq!(s, StatusCode::OK, "{d}");
                let winner = if (i + w) % 9 == 0 {
                    "tie".to_string()
                } else {
                    d["rankers"][i % 2].as_str().unwrap().to_string()
                };
                let body = json!({"duel_token": d["duel_token"], "winner": winner});
                let (s, r) =
                    post(&client, format!("{outcome_base}/v1/outcomes"), body.clone()).await;
                assert_eq!(s, StatusCode::OK, "{r}");
                if i % 3 == 0 {
                    // The retry goes to the other replica: still exactly once.
                    let (s, r) = post(&client, format!("{duel_base}/v1/outcomes"), body).await;
                    assert_eq!(
                        (s, r["status"].as_str()),
                        (StatusCode::OK, Some("duplicate")),
                        "{r}"
                    );
                }
                if winner != "tie" {
                    acknowledged_wins += 1;
                }
            }
            acknowledged_wins
        }));
    }
    let mut acknowledged = 0;
    for t in tasks {
        acknowledged += t.await.unwrap();
    }

    // Both replicas converge to the same state, and the win matrix holds every acknowledged win.
    let views = |base: String| {
        let client = client.clone();
        async move {
            let e = get_json(&client, &format!("{base}/v1/experiments/{id}")).await;
            let m = get_json(&client, &format!("{base}/v1/experiments/{id}/matrix")).await;
            (durable_view(&e), m)
        }
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let a = views(servers[0].base.clone()).await;
        let b = views(servers[1].base.clone()).await;
        if a == b {
            let total: u64 = a.1["wins"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|r| r.as_array().unwrap().iter().map(|v| v.as_u64().unwrap()))
                .sum();
            assert_eq!(total, acknowledged);
            assert_eq!(a.0["outcomes_applied"], acknowledged);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "replicas did not converge:\n{a:?}\n{b:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn postgres_outage_refuses_outcomes_keeps_duels_and_recovers() {
    let (mut pg, db, _dir) = postgres::private_server().await;
    let app = spawn_app_on(&db, "").await;
    let id = app
        .create_experiment(&["a", "b", "c", "d"], json!({"name": "uniform"}))
        .await;
    let mut acknowledged = 0u64;
    for i in 0..20 {
        let (token, pair) = app.duel(id).await;
        assert_eq!(app.outcome(&token, &pair[i % 2]).await.0, StatusCode::OK);
        acknowledged += 1;
    }

    pg.stop().await.expect("stop postgres");
    // Duels are still served from memory; outcomes are refused with 503 and Retry-After.
    let mut held = Vec::new();
    for _ in 0..10 {
        let (token, pair) = app.duel(id).await;
        let resp = app
            .client
            .post(format!("{}/v1/outcomes", app.base))
            .json(&json!({"duel_token": token, "winner": pair[0]}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(resp.headers().contains_key("retry-after"));
        let body: Value = resp.json().await.unwrap();
        assert_eq!(error_code(&body), "database_unavailable");
        held.push((token, pair[0].clone()));
    }
    let (s, b) = app.get("/readyz").await;
    assert_eq!(
        (s, error_code(&b)),
        (StatusCode::SERVICE_UNAVAILABLE, "not_ready")
    );
    // The database's own error (its address, the OS error) goes to the log, not to callers.
    assert_eq!(b["error"]["message"], "the database is unreachable", "{b}");

    pg.restart().await.expect("restart postgres");
    // The service recovers by itself: the refused outcomes can now be posted.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (s, _) = app.get("/readyz").await;
        if s == StatusCode::OK {
            break;
        }
        assert!(Instant::now() < deadline, "service did not recover");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for (token, winner) in &held {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (s, b) = app.outcome(token, winner).await;
            if s == StatusCode::OK {
                assert_eq!(b["status"], "recorded");
                acknowledged += 1;
                break;
            }
            assert_eq!(s, StatusCode::SERVICE_UNAVAILABLE, "{b}");
            assert!(
                Instant::now() < deadline,
                "outcomes still refused after recovery"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    assert_eq!(win_total(&app, id).await, acknowledged);
    let db_again = app.db_url.clone();
    app.stop().await;
    // And a fresh process sees exactly what was acknowledged.
    let app: TestApp = spawn_app_on(&db_again, "").await;
    assert_eq!(app.experiment(id).await["outcomes_applied"], acknowledged);
    app.stop().await;
    pg.stop().await.unwrap();
}

fn pids_of_postgres_under(dir: &std::path::Path) -> Vec<String> {
    let out = Command::new("pgrep")
        .args(["-f", &dir.display().to_string()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(String::from)
        .collect()
}

#[tokio::test]
async fn serve_on_embedded_postgres_persists_and_shuts_down_gracefully() {
    let dir = postgres::TempDir::new();
    let data = dir.path().join("data");
    let client = reqwest::Client::new();
    let port = process::free_port();
    let base = format!("http://127.0.0.1:{port}");
    let data_arg = data.display().to_string();
    let start = || {
        Server::spawn(
            process::serve_command(port, &["--data-dir", &data_arg]),
            port,
        )
    };

    let mut server = start();
    server.wait_ready(&client).await;
    let (s, b) = post(
        &client,
        format!("{base}/v1/experiments"),
        json!({"name": "kept", "rankers": ["a", "b", "c"], "policy": {"name": "rucb"}}),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    let id = b["id"].as_i64().unwrap();
    let (_, d) = post(
        &client,
        format!("{base}/v1/experiments/{id}/duels"),
        json!({}),
    )
    .await;
    let (s, _) = post(
        &client,
        format!("{base}/v1/outcomes"),
        json!({"duel_token": d["duel_token"], "winner": d["rankers"][0]}),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert_service_role_only(&data.join("postgres")).await;
    server.terminate();
    assert!(
        pids_of_postgres_under(&data).is_empty(),
        "the embedded Postgres outlived joust"
    );

    let mut server = start();
    server.wait_ready(&client).await;
    // The acknowledged outcome is durable; the restarted process, its experiment's new owner,
    // applies it soon after it starts.
    eventually("the outcome applied", Duration::from_secs(5), || async {
        get_json(&client, &format!("{base}/v1/experiments/{id}")).await["outcomes_applied"] == 1
    })
    .await;
    let e = get_json(&client, &format!("{base}/v1/experiments/{id}")).await;
    assert_eq!(e["outcomes_applied"], 1, "{e}");
    assert_eq!(
        e["duels_issued"], 1,
        "duel counts are flushed at shutdown: {e}"
    );
    server.terminate();
}

/// As the cluster's superuser: the serving process connects as `joust_service` only, which is
/// no superuser and owns every table of the service's database.
async fn assert_service_role_only(cluster: &std::path::Path) {
    use sqlx::Connection;
    let read = |f: &str| {
        std::fs::read_to_string(cluster.join(f))
            .unwrap()
            .trim()
            .to_string()
    };
    let url = format!(
        "postgres://joust:{}@127.0.0.1:{}/joust",
        read("password"),
        read("port")
    );
    let mut conn = sqlx::PgConnection::connect(&url)
        .await
        .expect("connect as superuser");
    let users: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT usename::text FROM pg_stat_activity
         WHERE datname = 'joust' AND pid <> pg_backend_pid()",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(users, ["joust_service"]);
    let (superuser, create_role, create_db): (bool, bool, bool) = sqlx::query_as(
        "SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = 'joust_service'",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!((superuser, create_role, create_db), (false, false, false));
    let foreign: Vec<String> = sqlx::query_scalar(
        "SELECT tablename::text FROM pg_tables
         WHERE schemaname = 'public' AND tableowner <> 'joust_service'",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert!(
        foreign.is_empty(),
        "tables owned by another role: {foreign:?}"
    );
    conn.close().await.unwrap();
}

#[test]
fn serve_refuses_to_listen_beyond_loopback_without_keys() {
    let out = Command::new(env!("CARGO_BIN_EXE_joust"))
        .args([
            "serve",
            "--listen",
            "0.0.0.0:0",
            "--database-url",
            "postgres://unused@127.0.0.1:1/x",
        ])
        .env_remove("JOUST_API_KEYS")
        .output()
        .expect("run joust serve");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("JOUST_API_KEYS"), "{err}");
}
