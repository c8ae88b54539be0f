//! Test databases for integration tests.
//!
//! Each test gets its own database, cloned from a template that was migrated once per test binary
//! (cloning a database is a file copy: much faster than migrating each time), so tests never see
//! each other's rows and can run in parallel.
//!
//! The server is the embedded Postgres the service itself uses, started once per test binary in a
//! temporary directory, unless `DATABASE_URL` is set: then the databases are created on that server
//! (its user needs the CREATEDB privilege) and dropped again when the test binary exits.
//!
//! Each `#[tokio::test]` has its own runtime, so the shared server is started on a thread of its
//! own with a runtime of its own, once, behind a `OnceLock`. The server does not depend on that
//! runtime afterwards (see `joust::store::embedded`). It is stopped, and its directory removed, by
//! an `atexit` hook when the test binary exits; if the binary is killed instead, the server's
//! parent-death signal stops it and the next run removes the leftover directory.

use joust::store::embedded::EmbeddedPostgres;
use sqlx::{Connection, PgConnection};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Prefix of every temporary directory made here: `<prefix><pid>-<n>`.
const TEMP_PREFIX: &str = "joust-test-pg-";

/// A fresh, migrated database for one test; returns its URL.
pub async fn fresh_database() -> String {
    let shared = shared();
    let name = format!("{}_{}", shared.prefix, next_id());
    create_database(&shared.admin_url, &name, Some(&shared.template)).await;
    if shared.external {
        EXTERNAL_DATABASES.lock().unwrap().push(name.clone());
    }
    with_database(&shared.admin_url, &name)
}

/// A fresh database with no migration applied (for tests of the migrations themselves).
pub async fn empty_database() -> String {
    let shared = shared();
    let name = format!("{}_{}", shared.prefix, next_id());
    create_database(&shared.admin_url, &name, None).await;
    if shared.external {
        EXTERNAL_DATABASES.lock().unwrap().push(name.clone());
    }
    with_database(&shared.admin_url, &name)
}

/// A private server for tests that must stop and restart Postgres (not shared with other tests).
/// Returns the server, the URL of a fresh migrated database on it, and the guard of its directory.
pub async fn private_server() -> (EmbeddedPostgres, String, TempDir) {
    let dir = TempDir::new();
    let pg = EmbeddedPostgres::start(dir.path())
        .await
        .unwrap_or_else(|e| panic!("starting a private embedded postgres: {e}"));
    let url = pg.url("test");
    create_database(&pg.url("postgres"), "test", None).await;
    migrate(&url).await;
    (pg, url, dir)
}

/// `url` with its database replaced by `database`.
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    let path_start = base[after_scheme..]
        .find('/')
        .map_or(base.len(), |i| after_scheme + i);
    let mut out = format!("{}/{database}", &base[..path_start]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}

/// A directory under `std::env::temp_dir()`, removed on drop, after stopping any server still
/// running in it (a guard returned next to its server is dropped before it, see `private_server`).
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new() -> TempDir {
        let path =
            std::env::temp_dir().join(format!("{TEMP_PREFIX}{}-{}", std::process::id(), next_id()));
        std::fs::create_dir_all(&path)
            .unwrap_or_else(|e| panic!("creating {}: {e}", path.display()));
        // Whatever the umask: as root the server runs as another user, who must be able to enter.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
        TempDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        stop_server_in(&self.path.join("postgres/data"));
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

struct Shared {
    /// A database on the server to run `CREATE DATABASE` from.
    admin_url: String,
    template: String,
    /// Prefix of the databases made by this test binary.
    prefix: String,
    external: bool,
}

/// The embedded server and its directory, taken by the exit hook.
static EMBEDDED: Mutex<Option<(EmbeddedPostgres, TempDir)>> = Mutex::new(None);
/// Databases created on a `DATABASE_URL` server, dropped by the exit hook.
static EXTERNAL_DATABASES: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Result<Shared, String>> = OnceLock::new();
    let result = SHARED.get_or_init(|| {
        std::thread::spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            runtime.block_on(start_shared())
        })
        .join()
        .unwrap_or_else(|_| Err("starting the test database server panicked".into()))
    });
    match result {
        Ok(shared) => shared,
        Err(e) => panic!("test database server unavailable: {e}"),
    }
}

async fn start_shared() -> Result<Shared, String> {
    let prefix = format!("joust_test_{}", std::process::id());
    let template = format!("{prefix}_template");
    let (admin_url, external) = match std::env::var("DATABASE_URL") {
        Ok(url) if !url.is_empty() => (url, true),
        _ => {
            remove_leftover_dirs();
            let dir = TempDir::new();
            let pg = EmbeddedPostgres::start(dir.path())
                .await
                .map_err(|e| e.to_string())?;
            let url = pg.url("postgres");
            *EMBEDDED.lock().unwrap() = Some((pg, dir));
            (url, false)
        }
    };
    // SAFETY: registering a plain `extern "C" fn` has no preconditions.
    unsafe {
        libc::atexit(clean_up_at_exit);
    }
    if external {
        EXTERNAL_DATABASES.lock().unwrap().push(template.clone());
    }
    create_database(&admin_url, &template, None).await;
    // `migrate` closes its pool: a template cannot be cloned while anyone is connected to it.
    migrate(&with_database(&admin_url, &template)).await;
    Ok(Shared {
        admin_url,
        template,
        prefix,
        external,
    })
}

/// Creates `name` (from `template` if given), retrying while the template is briefly in use by
/// another clone starting at the same moment.
async fn create_database(admin_url: &str, name: &str, template: Option<&str>) {
    let sql = match template {
        Some(t) => format!("CREATE DATABASE \"{name}\" TEMPLATE \"{t}\""),
        None => format!("CREATE DATABASE \"{name}\""),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut conn = PgConnection::connect(admin_url)
        .await
        .unwrap_or_else(|e| panic!("connecting to the test database server: {e}"));
    loop {
        match sqlx::query(&sql).execute(&mut conn).await {
            Ok(_) => break,
            // 55006 object_in_use: "source database is being accessed by other users".
            Err(sqlx::Error::Database(e))
                if e.code().as_deref() == Some("55006") && Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("{sql}: {e}"),
        }
    }
    let _ = conn.close().await;
}

async fn migrate(url: &str) {
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(url)
        .await
        .unwrap_or_else(|e| panic!("connecting to {url}: {e}"));
    joust::store::migrate(&pool)
        .await
        .unwrap_or_else(|e| panic!("migrating the test database: {e}"));
    pool.close().await;
}

fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

extern "C" fn clean_up_at_exit() {
    // Dropping the server shuts it down and waits; then its directory goes.
    if let Ok(mut embedded) = EMBEDDED.lock() {
        drop(embedded.take());
    }
    let databases = EXTERNAL_DATABASES
        .lock()
        .map(|mut d| std::mem::take(&mut *d))
        .unwrap_or_default();
    if let (false, Ok(url)) = (databases.is_empty(), std::env::var("DATABASE_URL")) {
        // No runtime survives to this point; make a small one on a fresh thread.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let mut conn = PgConnection::connect(&url)
                    .await
                    .map_err(std::io::Error::other)?;
                // Tests are done, but pools may not have closed yet: FORCE (Postgres 13+).
                for name in databases.iter().rev() {
                    let sql = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
                    let _ = sqlx::query(&sql).execute(&mut conn).await;
                }
                conn.close().await.map_err(std::io::Error::other)
            })
        })
        .join();
    }
}

/// Removes the directories of earlier test binaries that were killed before their exit hook ran.
fn remove_leftover_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(TEMP_PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            stop_server_in(&entry.path().join("postgres/data"));
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Fast-shuts-down a server running on `data` (if any) and waits for it to exit.
fn stop_server_in(data: &Path) {
    let Some(pid) = std::fs::read_to_string(data.join("postmaster.pid"))
        .ok()
        .and_then(|s| s.lines().next()?.trim().parse::<libc::pid_t>().ok())
    else {
        return;
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut signalled = false;
    while process_is_postgres(pid) && Instant::now() < deadline {
        if !signalled {
            // SAFETY: kill has no memory-safety preconditions; the pid was just seen to be a live
            // postgres.
            unsafe {
                libc::kill(pid, libc::SIGINT);
            }
            signalled = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` is a live (not zombie) process named `postgres`.
fn process_is_postgres(pid: libc::pid_t) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')').is_some_and(|(head, tail)| {
            head.ends_with("(postgres") && !tail.trim_start().starts_with(['Z', 'X'])
        })
    })
}
