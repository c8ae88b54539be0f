//! Experiments in memory: a cached snapshot per experiment, pair selection from it, the outcome
//! pipeline, and refresh from Postgres (the only source of truth) when another replica changed
//! something. HTTP handlers call one function here per request.

pub mod cache;
pub mod derived;
pub mod duels;
pub mod error;
pub mod experiments;
pub mod history;
pub mod interleaving_config;
pub mod interleavings;
pub mod outcomes;
pub mod snapshot;
pub mod stats;
pub mod token;
pub mod writer;

pub use cache::Cache;
pub use error::EngineError;
pub use snapshot::{Snapshot, Status};

use rand::Rng;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;

use crate::store::{self, experiments as store_experiments};
use token::TokenSigner;

/// How often a replica looks for changes made by others. Outcomes applied by this process are
/// visible at once; those applied by another replica within this interval.
pub const REFRESH_INTERVAL: Duration = Duration::from_millis(200);
/// How often duel counts are flushed to the database.
pub const FLUSH_INTERVAL: Duration = Duration::from_secs(1);

/// Settings of the engine that `joust serve` exposes.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Least time between two history points of an experiment.
    pub history_interval: Duration,
    /// Most running experiments given their own Prometheus series (bounds the cardinality).
    pub metrics_max_experiments: usize,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            history_interval: history::DEFAULT_INTERVAL,
            metrics_max_experiments: stats::DEFAULT_MAX_EXPERIMENTS,
        }
    }
}

pub struct Engine {
    pool: sqlx::PgPool,
    options: EngineOptions,
    cache: Arc<Cache>,
    signer: TokenSigner,
    writer: mpsc::Sender<writer::WriteRequest>,
    instance_id: String,
    db_ok: Arc<AtomicBool>,
}

impl Engine {
    /// Starts the engine on a migrated database: loads (or creates) the shared token secret and
    /// spawns the outcome writer and the refresh and flush loops. The loops stop when `shutdown`
    /// resolves.
    pub async fn start(pool: sqlx::PgPool) -> Result<Arc<Engine>, EngineError> {
        Self::start_with(pool, EngineOptions::default()).await
    }

    /// [`Engine::start`] with the given options.
    pub async fn start_with(
        pool: sqlx::PgPool,
        options: EngineOptions,
    ) -> Result<Arc<Engine>, EngineError> {
        let secret = store::settings::get_or_init(&pool, "duel_token_secret", || {
            let bytes: [u8; 32] = rand::rng().random();
            bytes.iter().map(|b| format!("{b:02x}")).collect()
        })
        .await?;
        let cache = Arc::new(Cache::default());
        let history = Arc::new(history::HistoryClock::new(options.history_interval));
        let writer = writer::spawn(pool.clone(), cache.clone(), history);
        let engine = Arc::new(Engine {
            pool,
            options,
            cache,
            signer: TokenSigner::new(secret.as_bytes()),
            writer,
            instance_id: format!("{:016x}", rand::rng().random::<u64>()),
            db_ok: Arc::new(AtomicBool::new(true)),
        });
        tokio::spawn(refresh_loop(Arc::downgrade(&engine)));
        Ok(engine)
    }

    pub fn pool(&self) -> &sqlx::PgPool {
        &self.pool
    }

    /// Whether the last contact with the database worked.
    pub fn database_ok(&self) -> bool {
        self.db_ok.load(Ordering::Relaxed)
    }

    /// The cached snapshot of an experiment, loading it on first use.
    pub async fn snapshot(&self, id: i64) -> Result<Arc<Snapshot>, EngineError> {
        match self.cache.get(id) {
            Some(s) => Ok(s),
            None => self.reload(id).await,
        }
    }

    /// Reads an experiment from the database into the cache.
    pub async fn reload(&self, id: i64) -> Result<Arc<Snapshot>, EngineError> {
        let mut conn = self.pool.acquire().await.map_err(store::StoreError::from)?;
        let Some(stored) = store::state::load(&mut conn, id).await? else {
            self.cache.remove(id);
            return Err(EngineError::UnknownExperiment(id));
        };
        self.cache.put(Snapshot::from_stored(stored)?);
        self.cache.get(id).ok_or(EngineError::UnknownExperiment(id))
    }

    /// Live experiments with id greater than `after`.
    pub async fn list(&self, after: i64, limit: i64) -> Result<Vec<Arc<Snapshot>>, EngineError> {
        let rows = store_experiments::list(&self.pool, after, limit).await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            match self.snapshot(row.id).await {
                Ok(s) => out.push(s),
                // Deleted between the two reads.
                Err(EngineError::UnknownExperiment(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// Duels issued for an experiment: flushed counts of every replica plus this one's unflushed.
    pub async fn duels_issued(&self, id: i64) -> Result<i64, EngineError> {
        let mut conn = self.pool.acquire().await.map_err(store::StoreError::from)?;
        let flushed = store::state::duels_issued(&mut conn, id).await?;
        Ok(flushed + self.cache.unflushed_duels(id) as i64)
    }

    /// Database reachable and every migration applied.
    pub async fn ready(&self) -> Result<(), String> {
        match store::migrations_applied(&self.pool).await {
            Ok(true) => Ok(()),
            Ok(false) => Err("migrations are not all applied".into()),
            Err(e) => Err(format!("database unreachable: {e}")),
        }
    }

    async fn refresh_once(&self) -> Result<(), EngineError> {
        let versions = store_experiments::versions(&self.pool).await?;
        let live: std::collections::HashMap<i64, i64> = versions.into_iter().collect();
        for (id, cached) in self.cache.ids_and_versions() {
            match live.get(&id) {
                None => self.cache.remove(id),
                Some(&v) if v > cached => {
                    self.reload(id).await?;
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    async fn flush_duels(&self) -> Result<(), EngineError> {
        let counts = self.cache.take_unflushed();
        if let Err(e) = store::state::add_duels_issued(&self.pool, &self.instance_id, &counts).await
        {
            self.cache.restore_unflushed(&counts);
            return Err(e.into());
        }
        Ok(())
    }
}

/// Keeps the cache in step with the database and flushes duel counts. Holds only a weak
/// reference so the engine can be dropped.
async fn refresh_loop(engine: std::sync::Weak<Engine>) {
    let mut since_flush = Duration::ZERO;
    loop {
        tokio::time::sleep(REFRESH_INTERVAL).await;
        let Some(engine) = engine.upgrade() else {
            return;
        };
        let mut ok = engine.refresh_once().await.is_ok();
        since_flush += REFRESH_INTERVAL;
        if since_flush >= FLUSH_INTERVAL {
            since_flush = Duration::ZERO;
            ok &= engine.flush_duels().await.is_ok();
        }
        if !ok {
            metrics::counter!("joust_database_errors_total", "op" => "refresh").increment(1);
        }
        engine.db_ok.store(ok, Ordering::Relaxed);
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl Engine {
    /// Flushes what only this process knows (duel counts) before it exits.
    pub async fn shutdown(&self) {
        if let Err(e) = self.flush_duels().await {
            tracing::warn!(error = %e, "could not flush duel counts at shutdown");
        }
    }
}
