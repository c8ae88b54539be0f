//! `joust serve`: logging set up, then the service on a multi-threaded runtime. The flags
//! themselves ([`crate::service::ServeArgs`]) stay beside the startup code that reads them, with
//! the environment variables each may come from.

use crate::service::{self, ServeArgs};

/// Logs go to stderr: INFO by default (`RUST_LOG` changes it), access lines (see
/// `http::access_log`), JSON with `JOUST_LOG_FORMAT=json`. Colour only when stderr is a terminal, so
/// a log file or a collector gets plain text.
fn init_tracing() {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_http=warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    if std::env::var(service::env::LOG_FORMAT).as_deref() == Ok("json") {
        builder.json().init();
    } else {
        builder.init();
    }
}

pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    init_tracing();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(service::run(args))
}
