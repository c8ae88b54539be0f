//! The embedded local Postgres: what `joust serve` runs when no `DATABASE_URL` is given, and what
//! the test suite runs (one server per test binary).
//!
//! # Layout
//!
//! Everything lives under one cluster directory, `DIR/postgres` (`DIR` is the service's data
//! directory):
//!
//! - `data/`: the cluster itself (`PGDATA`), created once with `initdb`;
//! - `password`: the generated superuser password (mode 0600);
//! - `service_password`: the password of `joust_service`, the role the service connects as
//!   (mode 0600);
//! - `port`: the TCP port last used, reused on the next start while it is free;
//! - `server.log`: the server's output (rotated to `server.log.1` when it grows past 10 MB).
//!
//! The cluster is created through a temporary directory that is renamed into place, so a crash
//! during `initdb` never leaves a half-made cluster behind; a second start on the same directory
//! reuses the cluster and its data.
//!
//! # Security
//!
//! The service connects as `joust_service`, which owns its database and is not a superuser
//! ([`EmbeddedPostgres::service_url`]). The superuser `joust` has a random password and every
//! connection must authenticate with
//! scram-sha-256 (no `trust`, not even locally). The server listens on 127.0.0.1 only, on a free
//! port chosen at start, and has no unix socket (socket paths are limited to ~100 bytes, which deep
//! data directories exceed, and a socket would be one more way in).
//!
//! Postgres refuses to run as root. When this process is root, `initdb` and the server run as an
//! unprivileged user (`postgres` if the distribution's package created it, else `nobody`) through
//! `setpriv`, and the cluster directory is handed to that user. If that user cannot reach the
//! directory (a parent without search permission, e.g. `/root`), start fails and says so.
//!
//! # Lifetime: the server never outlives its parent
//!
//! The server (`postgres`, the postmaster) runs as a direct child of this process, started through
//! `setpriv --pdeathsig INT`, which sets the kernel's parent-death signal (`PR_SET_PDEATHSIG`) after
//! any change of user and then executes `postgres`. If this process dies for any reason, including
//! SIGKILL or an aborting panic, the kernel sends SIGINT to the postmaster, which is Postgres's
//! *fast shutdown*: clients are disconnected, a checkpoint is written, the server exits. Nothing
//! has to run in the dying process for that, which is why this is preferred over a watchdog process
//! (which could itself be killed, and would poll).
//!
//! The kernel delivers that signal when the *thread* that forked the child ends, not only the
//! process. So the child is spawned by a dedicated supervisor thread that does nothing but wait for
//! it; that thread lives exactly as long as the server, whatever async runtime (or none) called
//! [`EmbeddedPostgres::start`], so the server also survives the end of the runtime that started it.
//!
//! [`EmbeddedPostgres::stop`] and `Drop` perform the same fast shutdown and wait for it. A
//! `postmaster.pid` left behind by a killed run is removed on the next start when its process and
//! every backend it left are gone; if a previous server is still shutting down, start waits for it
//! briefly.

mod binaries;
mod cluster;
mod run_as;
mod server;
mod service_role;
mod supervisor;

pub use binaries::{BinarySearch, PgBinaries};
pub use supervisor::Supervisor;

use cluster::ClusterPaths;
use run_as::RunAs;
use server::ServerProcess;
use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, Connection};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The superuser created by `initdb`.
const SUPERUSER: &str = "joust";
/// The database created when the cluster is initialised.
const DEFAULT_DATABASE: &str = "joust";
/// Enough for a pool of 32 connections on each of a few replicas, plus maintenance sessions.
const MAX_CONNECTIONS: u32 = 200;
/// How long a server may take to accept connections. Crash recovery after a kill can take a while.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a fast shutdown may take before the server is stopped harder.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);
/// How many fresh ports to try when the chosen one was taken between choosing and binding.
const PORT_ATTEMPTS: usize = 3;

/// Why the embedded Postgres could not be started or stopped.
#[derive(Debug, thiserror::Error)]
pub enum EmbeddedError {
    #[error(
        "the PostgreSQL server binaries (initdb, postgres) were not found in PATH nor in \
         {}/*/bin. Install them (Debian/Ubuntu: `apt-get install postgresql`, or run \
         `scripts/install-postgres`), or set DATABASE_URL to use an existing PostgreSQL server",
        versioned_root.display()
    )]
    NoBinaries { versioned_root: PathBuf },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("`{command}` failed ({status}): {output}")]
    Command {
        command: String,
        status: String,
        output: String,
    },
    #[error(
        "running as root, so PostgreSQL must run as an unprivileged user, but none of {candidates} \
         exists; create one (`useradd --system postgres`) or set DATABASE_URL"
    )]
    NoUnprivilegedUser { candidates: String },
    #[error(
        "PostgreSQL must run as user `{user}` (it refuses to run as root), but `{user}` cannot \
         reach {}: a parent directory lacks search (x) permission for it. Choose a data \
         directory that user can reach (e.g. under /var/lib or /tmp), or grant it access \
         (`chmod o+x` on each parent), or set DATABASE_URL",
        dir.display()
    )]
    DirectoryNotReachable { user: String, dir: PathBuf },
    #[error(
        "another joust (pid {pid}) uses this --data-dir ({}); stop that joust first, or give \
         this one another --data-dir",
        data_dir.display()
    )]
    InUse { pid: String, data_dir: PathBuf },
    #[error(
        "a PostgreSQL server (pid {pid}) that no running joust owns is still running on {} (a \
         previous server still shutting down, or one started by hand); stop it first",
        data_dir.display()
    )]
    AlreadyRunning { pid: u32, data_dir: PathBuf },
    #[error(
        "PostgreSQL did not accept connections within {}s; end of its log {}:\n{log_tail}",
        timeout.as_secs(), log.display()
    )]
    StartTimeout {
        timeout: Duration,
        log: PathBuf,
        log_tail: String,
    },
    #[error("PostgreSQL exited while starting ({status}); end of its log {}:\n{log_tail}", log.display())]
    Exited {
        status: String,
        log: PathBuf,
        log_tail: String,
    },
    #[error("PostgreSQL did not shut down within {}s and was killed", timeout.as_secs())]
    StopTimeout { timeout: Duration },
    #[error("preparing the embedded database: {0}")]
    Sql(#[from] sqlx::Error),
}

impl EmbeddedError {
    fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> EmbeddedError {
        let context = context.into();
        move |source| EmbeddedError::Io { context, source }
    }
}

/// A private Postgres server for this process. See the module docs. (`Debug` leaves the password
/// out.)
pub struct EmbeddedPostgres {
    binaries: PgBinaries,
    paths: ClusterPaths,
    run_as: RunAs,
    password: String,
    /// The password of the service's role (`service_role`).
    service_password: String,
    port: u16,
    /// Stops the server when dropped (blocking: whoever drops the server usually removes its
    /// directory next, which must not happen under a running server).
    server: Option<ServerProcess>,
    /// This process's claim on the cluster (see `ClusterPaths::lock`), held while this value lives.
    _lock: std::fs::File,
}

impl std::fmt::Debug for EmbeddedPostgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedPostgres")
            .field("data", &self.paths.data)
            .field("run_as", &self.run_as)
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl EmbeddedPostgres {
    /// Starts (creating on first use) a private Postgres cluster under `dir` (in `dir/postgres`),
    /// using the server binaries found on this machine.
    pub async fn start(dir: &Path) -> Result<EmbeddedPostgres, EmbeddedError> {
        let binaries = BinarySearch::from_env().locate()?;
        Self::start_with(dir, binaries).await
    }

    /// Like [`start`](Self::start), with the server binaries given.
    pub async fn start_with(
        dir: &Path,
        binaries: PgBinaries,
    ) -> Result<EmbeddedPostgres, EmbeddedError> {
        let root = std::path::absolute(dir.join("postgres"))
            .map_err(EmbeddedError::io(format!("resolving {}", dir.display())))?;
        let paths = ClusterPaths::new(root);
        let run_as = RunAs::detect()?;
        paths.create_root()?;
        let lock = paths.lock()?;
        run_as.take_ownership(&paths.root)?;
        run_as.check_reachable(&paths.root)?;
        if !paths.is_initialised() {
            cluster::initialise(&paths, &binaries, &run_as, SUPERUSER).await?;
        }
        let password = paths.read_password()?;
        let service_password = paths.service_password()?;
        let mut pg = EmbeddedPostgres {
            binaries,
            paths,
            run_as,
            password,
            service_password,
            port: 0,
            server: None,
            _lock: lock,
        };
        pg.launch().await?;
        pg.ensure_database(DEFAULT_DATABASE).await?;
        service_role::ensure(
            &pg.connect_options("postgres"),
            DEFAULT_DATABASE,
            &pg.service_password,
        )
        .await?;
        Ok(pg)
    }

    /// The URL the service connects with: the `joust` database as `joust_service`, a role that
    /// owns that database and is not a superuser (see `service_role`).
    pub fn service_url(&self) -> String {
        format!(
            "postgres://{}:{}@127.0.0.1:{}/{DEFAULT_DATABASE}",
            service_role::SERVICE_ROLE,
            self.service_password,
            self.port
        )
    }

    /// The superuser's connection URL for `database` (the cluster has a `joust` database created
    /// at init). For administration and tests; the service itself uses [`service_url`](Self::service_url).
    pub fn url(&self, database: &str) -> String {
        // The password is alphanumeric (see `cluster::generate_password`), so it needs no escaping.
        format!(
            "postgres://{SUPERUSER}:{}@127.0.0.1:{}/{database}",
            self.password, self.port
        )
    }

    /// The TCP port the server listens on (on 127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The cluster's data directory (`PGDATA`).
    pub fn data_dir(&self) -> &Path {
        &self.paths.data
    }

    /// Whether the server process is running.
    pub fn is_running(&mut self) -> bool {
        self.server.as_mut().is_some_and(|s| !s.has_exited())
    }

    /// Stops the server (fast shutdown) and waits for it; idempotent. A server that runs on this
    /// cluster though this value did not start it (started by hand after ours exited) is stopped
    /// too: whoever stops joust expects its database to be stopped.
    pub async fn stop(&mut self) -> Result<(), EmbeddedError> {
        let Some(mut server) = self.server.take() else {
            return Ok(());
        };
        if server.has_exited() {
            cluster::stop_foreign_server(&self.paths.data, STOP_TIMEOUT).await;
            return Ok(());
        }
        if server.shut_down(STOP_TIMEOUT).await {
            tracing::info!(port = self.port, "embedded postgres stopped");
            Ok(())
        } else {
            Err(EmbeddedError::StopTimeout {
                timeout: STOP_TIMEOUT,
            })
        }
    }

    /// Starts it again after `stop`, on the same port if it is still free (tests simulate an
    /// outage with stop/restart). Stops it first if it is running.
    pub async fn restart(&mut self) -> Result<(), EmbeddedError> {
        self.stop().await?;
        self.launch().await
    }

    /// Chooses a port, starts the server and waits until it accepts connections.
    async fn launch(&mut self) -> Result<(), EmbeddedError> {
        cluster::clear_stale_pid_file(&self.paths.data).await?;
        self.paths.rotate_log()?;
        let mut port = self
            .paths
            .read_port()
            .filter(|&p| server::port_is_free(p))
            .map_or_else(server::free_port, Ok)
            .map_err(EmbeddedError::io("choosing a free port"))?;
        for attempt in 1..=PORT_ATTEMPTS {
            self.paths.write_port(port)?;
            let log_start = self.paths.log_len();
            let command = self.server_command(port)?;
            let server = ServerProcess::spawn(command)
                .map_err(EmbeddedError::io("starting postgres (through setpriv)"))?;
            self.server = Some(server);
            self.port = port;
            match self.wait_until_ready(log_start).await {
                Ok(()) => {
                    tracing::info!(port, data = %self.paths.data.display(), "embedded postgres ready");
                    return Ok(());
                }
                // Another process took the port between our check and the server's bind.
                Err(EmbeddedError::Exited { log_tail, .. })
                    if attempt < PORT_ATTEMPTS && log_tail.contains("already in use") =>
                {
                    self.server = None;
                    port =
                        server::free_port().map_err(EmbeddedError::io("choosing a free port"))?;
                }
                Err(e) => {
                    if let Some(mut server) = self.server.take() {
                        server.shut_down(STOP_TIMEOUT).await;
                    }
                    return Err(e);
                }
            }
        }
        unreachable!("the last attempt returns")
    }

    fn server_command(&self, port: u16) -> Result<std::process::Command, EmbeddedError> {
        let log = self.paths.open_log()?;
        let log_err = log
            .try_clone()
            .map_err(EmbeddedError::io("opening the server log"))?;
        let mut command = self.run_as.command(&self.binaries.postgres(), true);
        command
            .arg("-D")
            .arg(&self.paths.data)
            .arg("-p")
            .arg(port.to_string())
            .args(["-c", "listen_addresses=127.0.0.1"])
            .args(["-c", "unix_socket_directories="])
            .args(["-c", &format!("max_connections={MAX_CONNECTIONS}")])
            // Acknowledged outcomes must survive a crash: keep every durability setting on, even
            // if the cluster's postgresql.conf was edited.
            .args(["-c", "fsync=on", "-c", "synchronous_commit=on"])
            .args(["-c", "full_page_writes=on"])
            .args(["-c", "password_encryption=scram-sha-256"])
            .args(["-c", "logging_collector=off"])
            .current_dir(&self.paths.root)
            .stdin(std::process::Stdio::null())
            .stdout(log)
            .stderr(log_err);
        Ok(command)
    }

    async fn wait_until_ready(&mut self, log_start: u64) -> Result<(), EmbeddedError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let options = self.connect_options("postgres");
        loop {
            let server = self.server.as_mut().expect("launched");
            if let Some(status) = server.exit_status() {
                return Err(EmbeddedError::Exited {
                    status,
                    log: self.paths.log.clone(),
                    log_tail: self.paths.log_tail(log_start),
                });
            }
            match options.connect().await {
                Ok(conn) => {
                    let _ = conn.close().await;
                    return Ok(());
                }
                // A wrong password will not fix itself by waiting.
                Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some("28P01") => {
                    return Err(sqlx::Error::Database(e).into());
                }
                Err(_) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(_) => {
                    return Err(EmbeddedError::StartTimeout {
                        timeout: READY_TIMEOUT,
                        log: self.paths.log.clone(),
                        log_tail: self.paths.log_tail(log_start),
                    });
                }
            }
        }
    }

    fn connect_options(&self, database: &str) -> PgConnectOptions {
        PgConnectOptions::new()
            .host("127.0.0.1")
            .port(self.port)
            .username(SUPERUSER)
            .password(&self.password)
            .database(database)
    }

    async fn ensure_database(&self, database: &str) -> Result<(), EmbeddedError> {
        let mut conn = self.connect_options("postgres").connect().await?;
        let exists: bool =
            sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
                .bind(database)
                .fetch_one(&mut conn)
                .await?;
        if !exists {
            // Identifiers cannot be bound; `database` is one of our own constants.
            let created = sqlx::query(&format!("CREATE DATABASE \"{database}\""))
                .execute(&mut conn)
                .await;
            match created {
                Ok(_) => {}
                // Another process sharing this directory created it first.
                Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some("42P04") => {}
                Err(e) => return Err(e.into()),
            }
        }
        conn.close().await?;
        Ok(())
    }
}
