//! A headless Chromium driven through chromedriver (Debian packages `chromium` and
//! `chromium-driver`), for the dashboard's browser tests and its screenshots. Each `Browser`
//! has its own chromedriver process and a fresh profile directory, both removed when it drops.

use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
pub const CHROMIUM: &str = "/usr/bin/chromium";

pub struct Browser {
    pub client: Client,
    driver: Child,
    profile: std::path::PathBuf,
}

/// Only one browser at a time: the test machine has few cores and Chromium is heavy.
pub static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Browser {
    /// Starts chromedriver and a headless Chromium with a `width` x `height` window.
    pub async fn start(width: u32, height: u32) -> Browser {
        for path in [CHROMEDRIVER, CHROMIUM] {
            assert!(
                std::path::Path::new(path).exists(),
                "{path} is missing: the dashboard's browser tests need headless Chromium. \
                 Install it with `apt-get install chromium chromium-driver` (.ci/run and \
                 scripts/test do this)"
            );
        }
        let port = free_port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let profile =
            std::env::temp_dir().join(format!("joust-chromium-{}-{port}", std::process::id()));
        let caps = json!({
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--no-first-run", "--hide-scrollbars",
                    format!("--user-data-dir={}", profile.display()),
                    format!("--window-size={width},{height}"),
                ],
            },
            "goog:loggingPrefs": { "browser": "ALL" },
        });
        let Value::Object(caps) = caps else {
            unreachable!()
        };
        let url = format!("http://127.0.0.1:{port}");
        let mut last = None;
        // chromedriver takes a moment to listen.
        for _ in 0..100 {
            match ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                .capabilities(caps.clone())
                .connect(&url)
                .await
            {
                Ok(client) => {
                    return Browser {
                        client,
                        driver,
                        profile,
                    };
                }
                Err(e) => last = Some(e),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("cannot start a Chromium session: {last:?}");
    }

    pub async fn goto(&self, url: &str) {
        self.client.goto(url).await.expect("navigate");
    }

    /// Waits (up to 15 s) for an element matching `css`.
    pub async fn wait_for(&self, css: &str) -> fantoccini::elements::Element {
        self.client
            .wait()
            .at_most(Duration::from_secs(15))
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no `{css}` appeared: {e}"))
    }

    pub async fn all(&self, css: &str) -> Vec<fantoccini::elements::Element> {
        self.client.find_all(Locator::Css(css)).await.unwrap()
    }

    pub async fn text(&self, css: &str) -> String {
        self.wait_for(css).await.text().await.unwrap()
    }

    /// Runs a script in the page and returns its value.
    pub async fn js(&self, script: &str) -> Value {
        self.client
            .execute(script, vec![])
            .await
            .expect("script runs")
    }

    /// Waits (up to 15 s) until `script` returns true.
    pub async fn until(&self, what: &str, script: &str) {
        for _ in 0..150 {
            if self.js(script).await == json!(true) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("timed out waiting until {what}");
    }

    /// The browser console's messages since the last call: (level, message).
    pub async fn console(&self) -> Vec<(String, String)> {
        let logs = self
            .client
            .issue_cmd(BrowserLog)
            .await
            .expect("console log");
        logs.as_array()
            .map(|a| {
                a.iter()
                    .map(|l| {
                        (
                            l["level"].as_str().unwrap_or("").to_string(),
                            l["message"].as_str().unwrap_or("").to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Console messages at error level (including CSP violations and failed requests).
    pub async fn console_errors(&self) -> Vec<String> {
        self.console()
            .await
            .into_iter()
            .filter(|(level, _)| level == "SEVERE")
            .map(|(_, m)| m)
            .collect()
    }

    pub async fn close(mut self) {
        let _ = self.client.clone().close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
    }
}

/// chromedriver's console-log endpoint (not in the W3C standard, so not in fantoccini).
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/se/log", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(r#"{"type":"browser"}"#.to_string()),
        )
    }
}
