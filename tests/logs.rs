//! What `joust serve` writes to its log when the log is a file: plain text (no terminal colour
//! codes), and one access line per request with its method, route, status, latency and id.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

#[tokio::test]
async fn a_log_file_gets_plain_access_lines() {
    let db = common::pg::fresh_database().await;
    let dir = std::env::temp_dir().join(format!("joust-logs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log_path = dir.join("joust.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_joust"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("DATABASE_URL", &db)
        .env_remove("RUST_LOG")
        .env_remove("JOUST_LOG_FORMAT")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .expect("spawn joust serve");
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
    tokio::time::sleep(Duration::from_millis(50)).await;
    let log = std::fs::read_to_string(&log_path).unwrap();
    std::fs::remove_dir_all(&dir).ok();

    assert!(
        !log.contains('\u{1b}'),
        "colour codes in a log file:\n{log}"
    );
    let access: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("joust::access"))
        .collect();
    assert_eq!(access.len(), 2, "one access line per request:\n{log}");
    assert!(access[0].contains(" INFO "), "{}", access[0]);
    for (line, method, route, status) in [
        (access[0], "GET", "/healthz", 200),
        (access[1], "GET", "/v1/experiments/{id}", 404),
    ] {
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
    assert!(
        access[1].contains(&format!("request_id={request_id}")),
        "{}",
        access[1]
    );
}
