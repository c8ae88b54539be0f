//! `joust serve`: configuration, startup (embedded or given database, migrations, engine),
//! serving, and graceful shutdown.

use anyhow::Context;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::engine::{Engine, EngineOptions, TrustedRoots};
use crate::http::{self, ApiKeys};
use crate::store;

/// Environment variables the service reads (also used by the Docker files' tests).
pub mod env {
    pub const LISTEN: &str = "JOUST_LISTEN";
    pub const DATA_DIR: &str = "JOUST_DATA_DIR";
    pub const DATABASE_URL: &str = "DATABASE_URL";
    pub const API_KEYS: &str = "JOUST_API_KEYS";
    pub const API_KEYS_FILE: &str = "JOUST_API_KEYS_FILE";
    pub const METRICS_REQUIRE_KEY: &str = "JOUST_METRICS_REQUIRE_KEY";
    pub const LOG_FORMAT: &str = "JOUST_LOG_FORMAT";
    pub const HEADER_TIMEOUT: &str = "JOUST_HEADER_TIMEOUT_SECS";
    pub const BODY_TIMEOUT: &str = "JOUST_BODY_TIMEOUT_SECS";
    pub const MAX_CONNECTIONS: &str = "JOUST_MAX_CONNECTIONS";
    pub const MAX_EXPERIMENT_MEMORY: &str = "JOUST_MAX_EXPERIMENT_MEMORY_MB";
    pub const OUTCOME_RETENTION_DAYS: &str = "JOUST_OUTCOME_RETENTION_DAYS";
    pub const HISTORY_INTERVAL_SECS: &str = "JOUST_HISTORY_INTERVAL_SECS";
    pub const APPLY_PAUSE_MS: &str = "JOUST_APPLY_PAUSE_MS";
    pub const CHECKPOINT_MS: &str = "JOUST_CHECKPOINT_MS";
    pub const METRICS_MAX_EXPERIMENTS: &str = "JOUST_METRICS_MAX_EXPERIMENTS";
    pub const TEST_CLOCK: &str = "JOUST_TEST_CLOCK";
    pub const WEBHOOK_CA_FILE: &str = "JOUST_WEBHOOK_CA_FILE";
    pub const WEBHOOK_ALLOW_NETWORKS: &str = "JOUST_WEBHOOK_ALLOW_NETWORKS";
    pub const DATABASE_CA_FILE: &str = "JOUST_DATABASE_CA_FILE";
    pub const TLS_CERT: &str = "JOUST_TLS_CERT";
    pub const TLS_KEY: &str = "JOUST_TLS_KEY";
}

pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
pub const DEFAULT_DATA_DIR: &str = "./joust-data";

/// `Debug` is written out below: the database URL carries a password and the keys are secrets.
#[derive(Clone, clap::Args)]
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
    /// A file of API keys, `scope:key` a line (or separated by commas; `#` starts a comment
    /// line), added to --api-keys: keys given so do not show in `ps` or the environment. Read
    /// at startup.
    #[arg(long, env = env::API_KEYS_FILE)]
    pub api_keys_file: Option<PathBuf>,
    /// Answer /metrics only to a global read or admin key (its series cover every project).
    #[arg(long, env = env::METRICS_REQUIRE_KEY)]
    pub metrics_require_key: bool,
    /// Seconds a client has to send a request's headers, counted from when the connection is
    /// ready for a request; so also how long a keep-alive connection may stay idle.
    #[arg(long, env = env::HEADER_TIMEOUT, default_value_t = http::DEFAULT_HEADER_TIMEOUT.as_secs())]
    pub header_timeout_secs: u64,
    /// Seconds a client has to send a request's body, counted from the end of its headers;
    /// later, the request is answered 408 and the connection closed.
    #[arg(long, env = env::BODY_TIMEOUT, default_value_t = http::DEFAULT_BODY_TIMEOUT.as_secs())]
    pub body_timeout_secs: u64,
    /// Open client connections at most; more wait until one closes. Default: 10,000, or less
    /// when the open-file limit (raised to its hard limit at start) leaves less room.
    #[arg(long, env = env::MAX_CONNECTIONS)]
    pub max_connections: Option<usize>,
    /// Memory one experiment's state may take, in MiB, estimated from its policy and number of
    /// rankers; creating an experiment or adding a ranker beyond it is refused (422).
    #[arg(long, env = env::MAX_EXPERIMENT_MEMORY, default_value_t = crate::engine::DEFAULT_BUDGET_BYTES / (1024 * 1024))]
    pub max_experiment_memory_mb: u64,
    /// Days raw outcome rows are kept after their duel's attribution window ends (they only make
    /// retried outcomes exactly-once); older ones are pruned in the background. Counts, the win
    /// matrix and history are kept forever.
    #[arg(long, env = env::OUTCOME_RETENTION_DAYS, default_value_t = 90)]
    pub outcome_retention_days: u32,
    /// Least time in seconds between two history points of an experiment (dashboards draw
    /// outcomes and the champion over time from them).
    #[arg(long, env = env::HISTORY_INTERVAL_SECS, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub history_interval_secs: u64,
    /// Least milliseconds between two applications of one experiment's outcomes to its state.
    /// Longer applies more outcomes per state write, for many experiments that each get a few
    /// outcomes per pause; duels are then chosen from a state up to this old. On the replica that
    /// applies an experiment, a read that waits for its own outcomes does not wait for the pause.
    #[arg(long, env = env::APPLY_PAUSE_MS, default_value_t = crate::engine::DEFAULT_APPLY_PAUSE.as_millis() as u64, value_parser = clap::value_parser!(u64).range(0..=10_000))]
    pub apply_pause_ms: u64,
    /// Longest milliseconds the replica that applies an experiment's outcomes holds them
    /// applied in memory before writing its state: one write then carries every application
    /// since. Outcomes are durable when acknowledged, so a crash loses none (the next owner
    /// applies them again); other replicas see them up to this much later. 0 writes every
    /// application.
    #[arg(long, env = env::CHECKPOINT_MS, default_value_t = crate::engine::DEFAULT_CHECKPOINT_INTERVAL.as_millis() as u64, value_parser = clap::value_parser!(u64).range(0..=10_000))]
    pub checkpoint_ms: u64,
    /// Most running experiments given their own series on /metrics (lowest ids first), so
    /// the number of series stays bounded.
    #[arg(long, env = env::METRICS_MAX_EXPERIMENTS, default_value_t = crate::engine::DEFAULT_MAX_EXPERIMENTS)]
    pub metrics_max_experiments: usize,
    /// For integration tests only: lets an admin move the clock that conversion windows are
    /// judged by (`PUT /v1/admin/clock`). Off by default; never turn it on in production.
    #[arg(long, env = env::TEST_CLOCK)]
    pub test_clock: bool,
    /// A PEM file of CA certificates that `https://` webhook receivers' certificates may be
    /// issued by, trusted besides the public roots (a company's private CA). Read at startup: a
    /// file that cannot be read or holds no certificate stops the server.
    #[arg(long, env = env::WEBHOOK_CA_FILE)]
    pub webhook_ca_file: Option<PathBuf>,
    /// Networks webhook events may be posted to besides public addresses, comma-separated in
    /// CIDR notation (`10.0.0.0/8,127.0.0.1/32`). Without it, a webhook whose host is or
    /// resolves to a loopback, private, link-local, unique-local, multicast or otherwise
    /// non-public address is refused.
    #[arg(long, env = env::WEBHOOK_ALLOW_NETWORKS, value_delimiter = ',', value_parser = crate::engine::Egress::parse_network)]
    pub webhook_allow_networks: Vec<ipnet::IpNet>,
    /// A PEM file of the CA certificates the database server's certificate must be issued by
    /// (the same as `sslrootcert` in the database URL, which it overrides). Checked with
    /// `sslmode=verify-ca` or `verify-full` in the URL.
    #[arg(long, env = env::DATABASE_CA_FILE)]
    pub database_ca_file: Option<PathBuf>,
    /// Serve HTTPS with this PEM certificate chain (leaf first); needs --tls-key. The files are
    /// read again when they change, so a renewed certificate needs no restart.
    #[arg(long, env = env::TLS_CERT, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, env = env::TLS_KEY, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

impl std::fmt::Debug for ServeArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hidden = |set: bool| if set { "<hidden>" } else { "<none>" };
        f.debug_struct("ServeArgs")
            .field("listen", &self.listen)
            .field("data_dir", &self.data_dir)
            .field("database_url", &hidden(self.database_url.is_some()))
            .field("api_keys", &hidden(!self.api_keys.is_empty()))
            .field("header_timeout_secs", &self.header_timeout_secs)
            .field("body_timeout_secs", &self.body_timeout_secs)
            .field("max_connections", &self.max_connections)
            .field("max_experiment_memory_mb", &self.max_experiment_memory_mb)
            .field("outcome_retention_days", &self.outcome_retention_days)
            .field("history_interval_secs", &self.history_interval_secs)
            .field("apply_pause_ms", &self.apply_pause_ms)
            .field("checkpoint_ms", &self.checkpoint_ms)
            .field("metrics_max_experiments", &self.metrics_max_experiments)
            .field("test_clock", &self.test_clock)
            .field("webhook_ca_file", &self.webhook_ca_file)
            .field("webhook_allow_networks", &self.webhook_allow_networks)
            .field("database_ca_file", &self.database_ca_file)
            .field("tls_cert", &self.tls_cert)
            .field("tls_key", &self.tls_key)
            .finish()
    }
}

/// File descriptors kept free for what is not a client connection: the database pool, the
/// embedded server's log and pipes, the migrations, the metrics.
const RESERVED_FILES: u64 = 256;

/// Raises the soft limit on open files to the hard limit (the soft one is often 1,024 while the
/// hard one allows far more) and returns the limit now in force.
fn raise_file_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct we pass.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 1024;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit.rlim_cur = limit.rlim_max;
            }
        }
    }
    limit.rlim_cur
}

/// The connection cap: the one asked for, or the default, never closer to the file limit than
/// [`RESERVED_FILES`].
fn connection_cap(asked: Option<usize>, file_limit: u64) -> anyhow::Result<usize> {
    let room = file_limit.saturating_sub(RESERVED_FILES) as usize;
    match asked {
        Some(0) => anyhow::bail!("--max-connections must be at least 1"),
        Some(n) if n > room => anyhow::bail!(
            "--max-connections {n} does not fit under the open-file limit {file_limit} (at most \
             {room}: {RESERVED_FILES} files are kept for the database and logs); raise the hard \
             limit (ulimit -Hn) or ask for fewer"
        ),
        Some(n) => Ok(n),
        None => Ok(http::DEFAULT_MAX_CONNECTIONS.min(room).max(1)),
    }
}

/// How long startup keeps retrying a database that is not accepting connections yet (one just
/// starting, say) before it gives up; a wrong address or password fails well within 10 s.
const CONNECT_PATIENCE: Duration = Duration::from_secs(7);
/// Longest wait for one connection attempt (a host that drops packets never refuses).
const CONNECT_ATTEMPT_TIMEOUT: Duration = Duration::from_secs(2);

/// Connects to the database at `url` (trusting `ca_file`'s CAs for its certificate, if given),
/// retrying for a few seconds while it refuses connections or is starting up; a host name that
/// does not resolve fails at once. Errors name the host, the port and what went wrong (never the
/// password).
async fn connect(url: &str, ca_file: Option<&std::path::Path>) -> anyhow::Result<sqlx::PgPool> {
    use sqlx::ConnectOptions;
    use std::str::FromStr;
    let mut options = sqlx::postgres::PgConnectOptions::from_str(url)
        .map_err(|e| anyhow::anyhow!("the database URL is not valid: {e}"))?;
    if let Some(ca_file) = ca_file {
        options = options.ssl_root_cert(ca_file);
    }
    let target = format!("{}:{}", options.get_host(), options.get_port());
    // A name that does not resolve will not resolve a moment later: fail now, not after retrying.
    if options.get_socket().is_none() {
        let resolved = tokio::net::lookup_host((options.get_host(), options.get_port())).await;
        if let Err(e) = resolved {
            anyhow::bail!(
                "cannot connect to the database at {target}: the host name does not resolve ({e})"
            );
        }
    }
    let deadline = tokio::time::Instant::now() + CONNECT_PATIENCE;
    loop {
        let failure = match tokio::time::timeout(CONNECT_ATTEMPT_TIMEOUT, options.connect()).await {
            Ok(Ok(conn)) => {
                let _ = sqlx::Connection::close(conn).await;
                break;
            }
            Ok(Err(e)) if !worth_retrying(&e) => {
                anyhow::bail!("cannot connect to the database at {target}: {e}")
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer within {}s", CONNECT_ATTEMPT_TIMEOUT.as_secs()),
        };
        if tokio::time::Instant::now() + Duration::from_millis(500) >= deadline {
            anyhow::bail!(
                "cannot connect to the database at {target} (tried for {}s): {failure}",
                CONNECT_PATIENCE.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Ok(store::pool_options().connect_lazy_with(options))
}

/// Whether a failed connection may work a moment later: the server is not listening yet or is
/// starting up. A wrong password, user or database name will not fix itself.
fn worth_retrying(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) => true,
        // 57P03: the database system is starting up.
        sqlx::Error::Database(db) => db.code().as_deref() == Some("57P03"),
        _ => false,
    }
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

/// The keys of --api-keys and --api-keys-file, with the /metrics setting.
fn configured_keys(args: &ServeArgs) -> anyhow::Result<ApiKeys> {
    let mut text = args.api_keys.clone();
    if let Some(path) = &args.api_keys_file {
        let file = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the API keys file {}", path.display()))?;
        text.push('\n');
        text.push_str(&file);
    }
    let keys = ApiKeys::parse(&text).map_err(anyhow::Error::msg)?;
    Ok(keys.with_metrics_key(args.metrics_require_key))
}

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let keys = configured_keys(&args)?;
    if keys.is_empty() && !args.listen.ip().is_loopback() {
        anyhow::bail!(
            "listening on {} needs API keys: set --api-keys, {} or --api-keys-file (make a key \
             with `joust keygen`)",
            args.listen,
            env::API_KEYS
        );
    }
    if args.header_timeout_secs == 0 {
        anyhow::bail!("--header-timeout-secs must be at least 1");
    }
    if args.body_timeout_secs == 0 {
        anyhow::bail!("--body-timeout-secs must be at least 1");
    }
    let webhook_roots = match &args.webhook_ca_file {
        Some(path) => TrustedRoots::from_pem_file(path).map_err(anyhow::Error::msg)?,
        None => TrustedRoots::default(),
    };
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            Some(http::ServerTls::load(cert, key).map_err(anyhow::Error::msg)?)
        }
        _ => None,
    };
    let file_limit = raise_file_limit();
    let limits = http::ConnectionLimits {
        header_timeout: Duration::from_secs(args.header_timeout_secs),
        body_timeout: Duration::from_secs(args.body_timeout_secs),
        max_connections: connection_cap(args.max_connections, file_limit)?,
    };
    tracing::info!(
        file_limit,
        max_connections = limits.max_connections,
        header_timeout_secs = args.header_timeout_secs,
        body_timeout_secs = args.body_timeout_secs,
        "connection limits"
    );
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
            let url = pg.service_url();
            tracing::info!(data_dir = %args.data_dir.display(), "embedded Postgres started");
            embedded = Some(pg);
            url
        }
    };
    let pool = connect(&url, args.database_ca_file.as_deref()).await?;
    // From here on the embedded server is restarted whenever it exits, until shutdown.
    let supervisor = embedded.map(|pg| {
        let pool = pool.clone();
        store::embedded::Supervisor::start(pg, move |pg| {
            use std::str::FromStr;
            if let Ok(options) = sqlx::postgres::PgConnectOptions::from_str(&pg.service_url()) {
                pool.set_connect_options(options);
            }
        })
    });
    let result = serve_on(pool, &args, keys, limits, webhook_roots, tls.as_ref()).await;
    if let Some(supervisor) = supervisor {
        if let Err(e) = supervisor.stop().await {
            tracing::warn!(error = %e, "stopping the embedded Postgres failed");
        }
    }
    result
}

async fn serve_on(
    pool: sqlx::PgPool,
    args: &ServeArgs,
    keys: ApiKeys,
    limits: http::ConnectionLimits,
    webhook_roots: TrustedRoots,
    tls: Option<&http::ServerTls>,
) -> anyhow::Result<()> {
    store::migrate(&pool).await.context("applying migrations")?;
    let options = EngineOptions {
        history_interval: Duration::from_secs(args.history_interval_secs),
        apply_pause: Duration::from_millis(args.apply_pause_ms),
        checkpoint_interval: Duration::from_millis(args.checkpoint_ms),
        metrics_max_experiments: args.metrics_max_experiments,
        test_clock: args.test_clock,
        webhook_roots,
        webhook_egress: crate::engine::Egress::allowing(args.webhook_allow_networks.clone()),
        ..EngineOptions::default()
    };
    if !args.webhook_allow_networks.is_empty() {
        let networks: Vec<String> = args
            .webhook_allow_networks
            .iter()
            .map(|n| n.to_string())
            .collect();
        tracing::info!(networks = %networks.join(","), "webhook events may go to these networks besides public addresses");
    }
    let engine = Engine::start_with(pool, options).await?;
    engine.set_memory_budget(args.max_experiment_memory_mb.saturating_mul(1024 * 1024));
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let pruner = crate::engine::spawn_retention(
        engine.pool().clone(),
        crate::engine::Retention {
            keep: Duration::from_secs(u64::from(args.outcome_retention_days) * 24 * 3600),
            ..Default::default()
        },
    );
    let scheme = if tls.is_some() { "https" } else { "http" };
    let reload = tls.map(|tls| tls.spawn_reload(http::TLS_POLL_INTERVAL));
    tracing::info!(listen = %listener.local_addr()?, scheme, "joust is serving");
    // A line on stdout that scripts can wait for.
    println!("joust listening on {scheme}://{}", listener.local_addr()?);
    http::serve_with(
        listener,
        engine.clone(),
        keys,
        limits,
        tls,
        shutdown_signal(),
    )
    .await?;
    if let Some(reload) = reload {
        reload.abort();
    }
    pruner.abort();
    engine.shutdown().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Serve {
        #[command(flatten)]
        args: ServeArgs,
    }

    #[test]
    fn debug_output_shows_no_password_nor_key() {
        let serve = Serve::try_parse_from([
            "joust",
            "--database-url",
            "postgres://joust:hunter2-password@db/joust",
            "--api-keys",
            "admin:secret-admin-key-0123456789",
        ])
        .unwrap();
        let keys = ApiKeys::parse(&serve.args.api_keys).unwrap();
        for shown in [format!("{:?}", serve.args), format!("{keys:?}")] {
            assert!(!shown.contains("hunter2"), "{shown}");
            assert!(!shown.contains("secret-admin-key"), "{shown}");
        }
        assert!(format!("{:?}", serve.args).contains("database_url: \"<hidden>\""));
    }
}
