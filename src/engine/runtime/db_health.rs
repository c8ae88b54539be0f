//! Whether the database is reachable, as far as this process knows, kept current by a background
//! probe.
//!
//! While Postgres is away, a request that tries it anyway waits for the pool's acquire timeout
//! (seconds) before its 503. So once the database is known to be down, requests that need it are
//! refused at once (503 with Retry-After), and `/readyz` answers at once, while a probe on a
//! connection of its own (outside the pool, so a busy pool never looks like an outage) retries
//! every [`PROBE_INTERVAL`] and declares the database back as soon as a query succeeds.
//!
//! The database is declared down by the probe failing or by any operation failing with an
//! outage error (refused connection, shutdown, pool timeout); only the probe declares it up.

use sqlx::postgres::PgConnection;
use sqlx::{ConnectOptions, Connection};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the probe runs. Recovery is noticed within this plus one connection set-up.
pub const PROBE_INTERVAL: Duration = Duration::from_millis(100);
/// A probe that takes longer than this counts as a failure. Generous: an overloaded but working
/// database must not be declared down (refused connections fail at once anyway).
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

#[derive(Debug)]
pub struct DbHealth {
    up: AtomicBool,
    /// When the database was declared down, and why.
    down: Mutex<Option<(Instant, String)>>,
}

impl Default for DbHealth {
    fn default() -> Self {
        DbHealth {
            up: AtomicBool::new(true),
            down: Mutex::new(None),
        }
    }
}

impl DbHealth {
    pub fn is_up(&self) -> bool {
        self.up.load(Ordering::Acquire)
    }

    /// Why the database is considered down and for how long, if it is.
    pub fn down_reason(&self) -> Option<String> {
        if self.is_up() {
            return None;
        }
        let down = self.down.lock().unwrap();
        down.as_ref().map(|(since, why)| {
            format!(
                "database unreachable for {:.1}s: {why}",
                since.elapsed().as_secs_f64()
            )
        })
    }

    pub fn mark_down(&self, why: &str) {
        let mut down = self.down.lock().unwrap();
        if down.is_none() {
            tracing::warn!(
                error = why,
                "database unreachable: refusing outcomes until it returns"
            );
            metrics::counter!("joust_database_outages_total").increment(1);
            *down = Some((Instant::now(), why.to_string()));
        }
        self.up.store(false, Ordering::Release);
    }

    fn mark_up(&self) {
        let mut down = self.down.lock().unwrap();
        if let Some((since, _)) = down.take() {
            tracing::info!(
                after_secs = since.elapsed().as_secs_f64(),
                "database reachable again"
            );
        }
        self.up.store(true, Ordering::Release);
    }
}

/// Probes the pool's database every [`PROBE_INTERVAL`] until the health record is dropped by
/// everyone else. It reads the pool's connect options at each new connection, so it follows a
/// database that moved (an embedded server restarted on another port).
pub async fn probe_loop(health: std::sync::Weak<DbHealth>, pool: sqlx::PgPool) {
    let mut conn: Option<PgConnection> = None;
    loop {
        tokio::time::sleep(PROBE_INTERVAL).await;
        let Some(health) = health.upgrade() else {
            return;
        };
        match tokio::time::timeout(PROBE_TIMEOUT, probe(&pool, &mut conn)).await {
            Ok(Ok(())) => health.mark_up(),
            Ok(Err(e)) => {
                conn = None;
                health.mark_down(&e.to_string());
            }
            Err(_) => {
                conn = None;
                health.mark_down(&format!("no answer within {PROBE_TIMEOUT:?}"));
            }
        }
    }
}

async fn probe(pool: &sqlx::PgPool, conn: &mut Option<PgConnection>) -> Result<(), sqlx::Error> {
    if conn.is_none() {
        *conn = Some(pool.connect_options().connect().await?);
    }
    conn.as_mut().expect("just connected").ping().await
}

/// Keeps the health record informed by what an operation returned.
pub fn observe<T>(health: &Arc<DbHealth>, result: &Result<T, crate::engine::EngineError>) {
    if let Err(crate::engine::EngineError::Unavailable) = result {
        health.mark_down("a database operation failed");
    }
}
