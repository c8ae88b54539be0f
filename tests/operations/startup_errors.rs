//! What a newcomer sees when `joust serve` cannot start: a wrong database address or password
//! fails within 10 s naming the host, the port and the reason; a host name that does not resolve
//! fails at once; a second joust on the same data directory names the joust already using it;
//! the message comes without a backtrace.

use crate::helpers::postgres;
use crate::helpers::process::{Server, free_port, serve_command};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `joust serve` with `args` until it exits (at most 30 s); returns its output and how long
/// it ran.
fn serve_until_exit(args: &[&str]) -> (Output, Duration) {
    serve_until_exit_with(args, &[])
}

/// [`serve_until_exit`] with the environment variables `env` set.
fn serve_until_exit_with(args: &[&str], env: &[(&str, &str)]) -> (Output, Duration) {
    let start = Instant::now();
    let mut command = serve_command(free_port(), args);
    command.stderr(Stdio::piped()).stdout(Stdio::piped());
    command.envs(env.iter().copied());
    let child = command.spawn().expect("spawn joust serve");
    let pid = child.id();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(30));
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    });
    let output = child.wait_with_output().unwrap();
    drop(killer);
    (output, start.elapsed())
}

#[test]
fn a_database_that_refuses_connections_fails_within_ten_seconds_naming_it() {
    // Port 1 on loopback: nothing listens, so every attempt is refused.
    let (out, took) =
        serve_until_exit(&["--database-url", "postgres://joust:pw@127.0.0.1:1/joust"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        took < Duration::from_secs(10),
        "gave up after {took:?}: {err}"
    );
    assert!(
        err.contains("127.0.0.1:1"),
        "the error names no host and port: {err}"
    );
    assert!(err.contains("refused"), "the error gives no reason: {err}");
    assert!(!err.contains("pw@"), "the error shows the password: {err}");
}

#[test]
fn a_host_name_that_does_not_resolve_fails_at_once_without_retrying() {
    let (out, took) =
        serve_until_exit(&["--database-url", "postgres://u:p@no-such-host.invalid/db"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("no-such-host.invalid:5432") && err.contains("does not resolve"),
        "the error does not say the name does not resolve: {err}"
    );
    // A retried failure says how long it was tried for.
    assert!(!err.contains("tried for"), "it was retried: {err}");
    // Far below the seconds a refused connection is retried for, however busy the machine.
    assert!(took < Duration::from_secs(6), "took {took:?}: {err}");
}

#[test]
fn a_startup_error_prints_its_message_and_causes_but_no_backtrace() {
    // A data directory inside a file: an error with a cause.
    let (out, _) = serve_until_exit_with(
        &["--data-dir", "/dev/null/joust"],
        &[("RUST_BACKTRACE", "1"), ("RUST_LIB_BACKTRACE", "1")],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("Error: cannot create the data directory /dev/null/joust"),
        "{err}"
    );
    assert!(err.contains("caused by: Not a directory"), "{err}");
    for backtrace in [
        "Stack backtrace",
        "stack backtrace",
        "backtrace::",
        "at src/",
    ] {
        assert!(!err.contains(backtrace), "a backtrace ({backtrace}): {err}");
    }
}

#[tokio::test]
async fn a_wrong_password_fails_at_once_naming_the_server_and_the_reason() {
    let db = postgres::fresh_database().await;
    let url = reqwest::Url::parse(&db).unwrap();
    let mut wrong = url.clone();
    wrong.set_password(Some("wrong-password")).unwrap();
    let (out, took) = serve_until_exit(&["--database-url", wrong.as_str()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        took < Duration::from_secs(5),
        "gave up after {took:?}: {err}"
    );
    let target = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap());
    assert!(
        err.contains(&target),
        "the error does not name {target}: {err}"
    );
    assert!(err.contains("password authentication failed"), "{err}");
}

#[tokio::test]
async fn a_second_joust_on_the_same_data_directory_names_the_first() {
    let dir = postgres::TempDir::new();
    let data = dir.path().join("data").display().to_string();
    let first = Server::start_with(&["--data-dir", &data]);
    first.wait_ready(&reqwest::Client::new()).await;
    let (out, took) = serve_until_exit(&["--data-dir", &data]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        took < Duration::from_secs(10),
        "gave up after {took:?}: {err}"
    );
    let expected = format!(
        "another joust (pid {}) uses this --data-dir",
        first.child.id()
    );
    assert!(err.contains(&expected), "expected `{expected}` in: {err}");
    // The first one is unharmed.
    let r = reqwest::get(format!("{}/readyz", first.base))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

/// `scripts/serve --database-url ...` does not install or look for the PostgreSQL package: run
/// on a copy of the script whose `install-postgres` and `cargo` only note that they ran.
#[test]
fn scripts_serve_skips_the_postgres_package_when_a_database_is_given() {
    let dir = postgres::TempDir::new();
    let root = dir.path();
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/serve"),
        root.join("scripts/serve"),
    )
    .unwrap();
    let log = root.join("ran");
    let stub = |path: std::path::PathBuf, name: &str| {
        let text = format!("#!/bin/sh\necho \"{name} $*\" >> '{}'\n", log.display());
        std::fs::write(&path, text).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    stub(root.join("scripts/install-postgres"), "install-postgres");
    stub(root.join("bin/cargo"), "cargo");
    let path = format!(
        "{}:{}",
        root.join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let run = |args: &[&str]| {
        let _ = std::fs::remove_file(&log);
        let status = Command::new(root.join("scripts/serve"))
            .args(args)
            .env("PATH", &path)
            .env_remove("DATABASE_URL")
            .status()
            .unwrap();
        assert!(status.success());
        std::fs::read_to_string(&log).unwrap()
    };
    let given = run(&["--database-url", "postgres://u:p@db:5432/joust"]);
    assert!(!given.contains("install-postgres"), "{given}");
    assert!(given.contains("cargo run"), "{given}");
    let given = run(&["--database-url=postgres://u:p@db:5432/joust"]);
    assert!(!given.contains("install-postgres"), "{given}");
    let embedded = run(&["--listen", "127.0.0.1:9999"]);
    assert!(embedded.contains("install-postgres"), "{embedded}");
}
