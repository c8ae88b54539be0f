//! Postgres: migrations, queries, acknowledging and applying outcomes and the embedded local
//! Postgres. Postgres is the only source of truth; everything else caches it.

pub(crate) mod apply;
pub(crate) mod conversions;
pub(crate) mod counts;
pub mod embedded;
pub(crate) mod experiments;
pub mod export;
pub mod export_copy;
pub(crate) mod history;
pub(crate) mod keys;
pub(crate) mod notices;
pub(crate) mod outcomes;
pub(crate) mod projects;
pub(crate) mod retention;
pub(crate) mod settings;
pub(crate) mod state;
pub(crate) mod telemetry;
pub(crate) mod unit_windows;
pub(crate) mod webhooks;

// What the tests reach besides the embedded Postgres: states written alone, the rows to apply
// read for many experiments, and two counts.
pub use apply::{Cursor, PendingRow, StateWrite, pending_many, write_states_alone};
pub use retention::outcome_rows;
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;
pub use state::duels_issued;
use std::time::Duration;

/// The migrations in `migrations/`, embedded at compile time.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Applies every pending migration.
pub async fn migrate(pool: &PgPool) -> Result<(), sqlx::migrate::MigrateError> {
    MIGRATOR.run(pool).await
}

/// Whether every migration this release knows is applied.
pub async fn migrations_applied(pool: &PgPool) -> Result<bool, StoreError> {
    let latest = MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0);
    let applied: Option<i64> =
        sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
            .fetch_one(pool)
            .await?;
    Ok(applied.unwrap_or(0) >= latest)
}

/// A pooled connection idle longer than this is pinged before it is handed out (and the outcome
/// writer's own connections, `engine/ingest/connections.rs`, before they are used).
pub const PING_IF_IDLE_FOR: Duration = Duration::from_secs(1);

/// A connection pool that fails fast when the database is away, so requests get a 503 quickly
/// instead of queueing.
///
/// sqlx pings every connection it hands out by default: a round trip to Postgres before each
/// statement or transaction, on top of the one it makes when a connection is returned. Under
/// load connections are idle for microseconds and that ping only costs (6% of the samples of a
/// single-outcome profile, half of them these). So only a connection idle for a while, the one
/// a Postgres restart or a dropped network may have broken unseen, is pinged; a busy one that
/// breaks fails its statement, which is answered 503 and retried like any database error, and is
/// then dropped from the pool.
pub fn pool_options() -> PgPoolOptions {
    PgPoolOptions::new()
        .max_connections(16)
        .acquire_timeout(Duration::from_secs(2))
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for >= PING_IF_IDLE_FOR {
                    sqlx::Connection::ping(conn).await?;
                }
                Ok(true)
            })
        })
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
}
