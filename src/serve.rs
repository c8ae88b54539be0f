//! `joust serve`: configuration, startup (embedded or given database, migrations, engine),
//! serving, and graceful shutdown.

use anyhow::Context;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::engine::{Engine, EngineOptions};
use crate::http::{self, auth::ApiKeys};
use crate::store;

/// Environment variables the service reads (also used by the Docker files' tests).
pub mod env {
    pub const LISTEN: &str = "JOUST_LISTEN";
    pub const DATA_DIR: &str = "JOUST_DATA_DIR";
    pub const DATABASE_URL: &str = "DATABASE_URL";
    pub const API_KEYS: &str = "JOUST_API_KEYS";
    pub const LOG_FORMAT: &str = "JOUST_LOG_FORMAT";
    pub const HISTORY_INTERVAL_SECS: &str = "JOUST_HISTORY_INTERVAL_SECS";
    pub const METRICS_MAX_EXPERIMENTS: &str = "JOUST_METRICS_MAX_EXPERIMENTS";
}

pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
pub const DEFAULT_DATA_DIR: &str = "./joust-data";

#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = env::LISTEN, default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// Where joust keeps its data (the embedded Postgres cluster lives in DIR/postgres).
    #[arg(long, env = env::DATA_DIR, default_value = DEFAULT_DATA_DIR)]
    pub data_dir: PathBuf,
    /// Postgres to use instead of the embedded one, e.g. postgres://user:pass@host/db.
    #[arg(long, env = env::DATABASE_URL, hide_env_values = true)]
    pub database_url: Option<String>,
    /// API keys as `scope:key` pairs separated by commas; scopes are admin, ingest and read.
    /// Required when listening on anything but loopback. Make a key with `joust keygen`.
    #[arg(long, env = env::API_KEYS, hide_env_values = true, default_value = "")]
    pub api_keys: String,
    /// Least time in seconds between two history points of an experiment (dashboards draw
    /// outcomes and the champion over time from them).
    #[arg(long, env = env::HISTORY_INTERVAL_SECS, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub history_interval_secs: u64,
    /// Most running experiments given their own series on /metrics (lowest ids first), so
    /// the number of series stays bounded.
    #[arg(long, env = env::METRICS_MAX_EXPERIMENTS, default_value_t = crate::engine::stats::DEFAULT_MAX_EXPERIMENTS)]
    pub metrics_max_experiments: usize,
}

/// Connects, retrying while the database starts up.
async fn connect(url: &str) -> anyhow::Result<sqlx::PgPool> {
    let mut last = None;
    for _ in 0..30 {
        match store::pool_options().connect(url).await {
            Ok(pool) => return Ok(pool),
            Err(e) => {
                last = Some(e);
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
    Err(last.expect("at least one attempt")).context("cannot connect to the database")
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    tracing::info!("shutting down: finishing in-flight requests");
}

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let keys = ApiKeys::parse(&args.api_keys).map_err(anyhow::Error::msg)?;
    if keys.is_empty() && !args.listen.ip().is_loopback() {
        anyhow::bail!(
            "listening on {} needs API keys: set --api-keys or {} (make a key with `joust keygen`)",
            args.listen,
            env::API_KEYS
        );
    }
    let mut embedded = None;
    let url = match &args.database_url {
        Some(url) => url.clone(),
        None => {
            std::fs::create_dir_all(&args.data_dir).with_context(|| {
                format!(
                    "cannot create the data directory {}",
                    args.data_dir.display()
                )
            })?;
            let pg = store::embedded::EmbeddedPostgres::start(&args.data_dir).await?;
            let url = pg.url("joust");
            tracing::info!(data_dir = %args.data_dir.display(), "embedded Postgres started");
            embedded = Some(pg);
            url
        }
    };
    let result = serve_on(&url, &args, keys).await;
    if let Some(mut pg) = embedded {
        if let Err(e) = pg.stop().await {
            tracing::warn!(error = %e, "stopping the embedded Postgres failed");
        }
    }
    result
}

async fn serve_on(url: &str, args: &ServeArgs, keys: ApiKeys) -> anyhow::Result<()> {
    let pool = connect(url).await?;
    store::migrate(&pool).await.context("applying migrations")?;
    let options = EngineOptions {
        history_interval: Duration::from_secs(args.history_interval_secs),
        metrics_max_experiments: args.metrics_max_experiments,
    };
    let engine = Engine::start_with(pool, options)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    tracing::info!(listen = %listener.local_addr()?, "joust is serving");
    // A line on stdout that scripts can wait for.
    println!("joust listening on http://{}", listener.local_addr()?);
    http::serve(listener, engine.clone(), keys, shutdown_signal()).await?;
    engine.shutdown().await;
    Ok(())
}
