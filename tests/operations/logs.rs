//! What `joust serve` writes to its log when the log is a file: plain text (no terminal colour
//! codes), and access lines with each request's method, route, status, latency and id, at a level
//! that follows the status.

use crate::helpers::postgres;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// Serves `/healthz` (200) and an unknown experiment (404) with `RUST_LOG` set to `filter` (or
/// unset), stops the server, and returns its log file and the 404's request id.
async fn log_of_two_requests(filter: Option<&str>) -> (String, String) {
    let db = postgres::fresh_database().await;
    let dir = std::env::temp_dir().join(format!(
        "joust-logs-{}-{}",
        std::process::id(),
        filter.is_some()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let log_path = dir.join("joust.log");
    let mut command = Command::new(env!("CARGO_BIN_EXE_joust"));
    command
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("DATABASE_URL", &db)
        .env_remove("RUST_LOG")
        .env_remove("JOUST_LOG_FORMAT")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log_path).unwrap());
    if let Some(filter) = filter {
        command.env("RUST_LOG", filter);
    }
    let mut child = command.spawn().expect("spawn joust serve");
    // The first line on stdout names the address.
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("joust listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();

    let client = reqwest::Client::new();
    let ok = client.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(ok.status(), 200);
    let missing = client
        .get(format!("{base}/v1/experiments/424242"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let request_id = missing.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_string();

    // Stop it gracefully so that the log is complete.
    // SAFETY: signals a child process this test started and has not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert!(status.success(), "joust serve exited with {status}");
    let log = std::fs::read_to_string(&log_path).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        !log.contains('\u{1b}'),
        "colour codes in a log file:\n{log}"
    );
    (log, request_id)
}

fn access_lines(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains("joust::access"))
        .collect()
}

fn assert_fields(line: &str, method: &str, route: &str, status: u16) {
    for field in [
        format!("method={method}"),
        format!("route={route}"),
        format!("status={status}"),
        "latency_ms=".to_string(),
        "request_id=".to_string(),
    ] {
        assert!(line.contains(&field), "{field} missing from {line}");
    }
}

/// The default log keeps refused requests (INFO) and leaves out served ones (DEBUG).
#[tokio::test]
async fn the_default_log_has_a_plain_line_per_refused_request() {
    let (log, request_id) = log_of_two_requests(None).await;
    let access = access_lines(&log);
    assert_eq!(access.len(), 1, "only the 404 at the default level:\n{log}");
    assert!(access[0].contains(" INFO "), "{}", access[0]);
    assert_fields(access[0], "GET", "/v1/experiments/{id}", 404);
    assert!(
        access[0].contains(&format!("request_id={request_id}")),
        "{}",
        access[0]
    );
}

/// With `joust::access=debug` every request has its line.
#[tokio::test]
async fn the_debug_level_logs_every_request() {
    let (log, _) = log_of_two_requests(Some("info,joust::access=debug")).await;
    let access = access_lines(&log);
    assert_eq!(access.len(), 2, "one access line per request:\n{log}");
    assert!(access[0].contains(" DEBUG "), "{}", access[0]);
    assert_fields(access[0], "GET", "/healthz", 200);
    assert!(access[1].contains(" INFO "), "{}", access[1]);
    assert_fields(access[1], "GET", "/v1/experiments/{id}", 404);
}

/// Access lines name the key that acted: a configured key (given in a file, so not on the
/// command line) by its place, a stored key by its id, and `-` for a refused one.
#[tokio::test]
async fn access_lines_name_the_key() {
    let db = postgres::fresh_database().await;
    let dir = std::env::temp_dir().join(format!("joust-logs-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log_path = dir.join("joust.log");
    let keys_path = dir.join("keys");
    let admin = "admin-key-for-the-log-test-0123456789";
    std::fs::write(
        &keys_path,
        format!("# the log test's keys\nadmin:{admin}\n"),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_joust"))
        .args(["serve", "--listen", "127.0.0.1:0", "--api-keys-file"])
        .arg(&keys_path)
        .env("DATABASE_URL", &db)
        .env_remove("RUST_LOG")
        .env_remove("JOUST_API_KEYS")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .expect("spawn joust serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("joust listening on ")
        .unwrap()
        .to_string();
    let client = reqwest::Client::new();
    let missing = format!("{base}/v1/experiments/424242");
    let created: serde_json::Value = client
        .post(format!("{base}/v1/keys"))
        .bearer_auth(admin)
        .json(&serde_json::json!({"scope": "read"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let stored = created["key"].as_str().unwrap();
    for key in [admin, stored, "not-a-key"] {
        let s = client
            .get(&missing)
            .bearer_auth(key)
            .send()
            .await
            .unwrap()
            .status();
        assert!(s == 404 || s == 401, "{s}");
    }
    // SAFETY: signals a child process this test started and has not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert!(status.success());
    let log = std::fs::read_to_string(&log_path).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let access = access_lines(&log);
    assert_eq!(access.len(), 3, "{log}");
    assert!(access[0].contains("key=config-1"), "{}", access[0]);
    assert!(
        access[1].contains(&format!("key={}", created["id"])),
        "{}",
        access[1]
    );
    assert!(
        access[2].contains("key=-") && access[2].contains("status=401"),
        "{}",
        access[2]
    );
    assert!(
        !log.contains(admin) && !log.contains(stored),
        "a key in the log:\n{log}"
    );
}
