//! `joust serve` as a separate process, for what only a real process shows: startup errors,
//! signals, connection handling, several replicas on one database.

use reqwest::StatusCode;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `joust serve` process on a free port of 127.0.0.1, killed when dropped.
pub struct Server {
    pub child: Child,
    pub base: String,
    pub port: u16,
}

/// A port of 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `joust serve --listen 127.0.0.1:PORT` plus `args`, without a database configured: give one
/// with `--database-url` or `--data-dir`.
pub fn serve_command(port: u16, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_joust"));
    command
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(args)
        .env_remove("DATABASE_URL")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    command
}

impl Server {
    /// A server on the given database.
    pub fn start(db_url: &str) -> Server {
        Server::start_with(&["--database-url", db_url])
    }

    /// A server with the given extra arguments.
    pub fn start_with(args: &[&str]) -> Server {
        let port = free_port();
        Server::spawn(serve_command(port, args), port)
    }

    /// A server from a prepared command listening on `port`.
    pub fn spawn(mut command: Command, port: u16) -> Server {
        let child = command.spawn().expect("spawn joust serve");
        Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
            port,
        }
    }

    pub async fn wait_ready(&self, client: &reqwest::Client) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok(r) = client.get(format!("{}/readyz", self.base)).send().await {
                if r.status() == StatusCode::OK {
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("joust serve at {} did not become ready", self.base);
    }

    /// SIGTERM, then waits (up to 30 s) for a clean exit.
    pub fn terminate(&mut self) {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "joust serve exited with {status}");
                return;
            }
            assert!(Instant::now() < deadline, "joust serve ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// POSTs `body` as JSON to `url`.
pub async fn post_json(
    client: &reqwest::Client,
    url: &str,
    body: &serde_json::Value,
) -> reqwest::Response {
    client.post(url).json(body).send().await.unwrap()
}

/// GETs `url` and returns its JSON body.
pub async fn get_json(client: &reqwest::Client, url: &str) -> serde_json::Value {
    client.get(url).send().await.unwrap().json().await.unwrap()
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
