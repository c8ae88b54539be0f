//! Experiments in memory: a cached snapshot per experiment, pair selection from it, the outcome
//! pipeline, and refresh from Postgres (the only source of truth) when another replica changed
//! something. HTTP handlers call one function here per request.

pub mod apply;
pub mod browser_clicks;
pub mod cache;
pub mod clock;
pub mod conversions;
pub mod db_health;
pub mod decision_events;
pub mod decision_settings;
pub mod derived;
pub mod duels;
pub mod error;
pub mod error_code;
pub mod experiments;
mod fine_timer;
pub mod history;
pub mod interleaving_config;
pub mod interleavings;
pub mod json_object;
pub mod json_words;
pub mod memory_budget;
pub mod metric_apply;
pub mod metric_settings;
pub mod metric_verdicts;
pub mod non_null;
pub mod offload;
pub mod outcomes;
pub mod owners;
pub mod retention;
pub mod row_cells;
pub mod segment_settings;
pub mod segments;
pub mod set_result;
pub mod snapshot;
pub mod stats;
pub mod stop_rule;
pub mod token;
pub mod unit_aggregation;
pub mod unit_duels;
pub mod unit_settings;
pub mod webhooks;
pub mod writer;
mod writer_pace;

pub use cache::Cache;
pub use error::{EngineError, InternalError};
pub use error_code::ErrorCode;
pub use snapshot::{Snapshot, Status};

use rand::Rng;
use std::sync::Arc;
use std::time::Duration;

use crate::store::{self, experiments as store_experiments};
use token::TokenSigner;

/// How often a replica looks for changes made by others. Outcomes applied by this process are
/// visible as soon as they are applied; those applied by another replica within this interval.
pub const REFRESH_INTERVAL: Duration = Duration::from_millis(200);
/// Longest a graceful shutdown waits for the experiments owned here to apply the outcomes
/// acknowledged here.
pub const SHUTDOWN_APPLY_WAIT: Duration = Duration::from_secs(2);
/// How often duel counts are flushed to the database, by default.
pub const FLUSH_INTERVAL: Duration = Duration::from_secs(1);

/// Settings of the engine that `joust serve` exposes.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Least time between two history points of an experiment.
    pub history_interval: Duration,
    /// Most running experiments given their own Prometheus series (bounds the cardinality).
    pub metrics_max_experiments: usize,
    /// Least time between two flushes of the duel counts (checked every [`REFRESH_INTERVAL`]).
    /// Not a `joust serve` setting: tests shorten it to see the counts soon.
    pub duel_count_flush_interval: Duration,
    /// How webhook events are retried, and how often the outbox is polled.
    pub webhooks: webhooks::RetryPolicy,
    /// Certificates of private CAs webhook receivers' certificates may be issued by
    /// (`--webhook-ca-file`), trusted besides the public roots.
    pub webhook_roots: webhooks::TrustedRoots,
    /// Whether an admin may move the service clock forward (`--test-clock`; off by default).
    pub test_clock: bool,
    /// Least time between two applications of one experiment's outcomes (`--apply-pause-ms`).
    pub apply_pause: Duration,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            history_interval: history::DEFAULT_INTERVAL,
            metrics_max_experiments: stats::DEFAULT_MAX_EXPERIMENTS,
            duel_count_flush_interval: FLUSH_INTERVAL,
            webhooks: webhooks::RetryPolicy::default(),
            webhook_roots: webhooks::TrustedRoots::default(),
            test_clock: false,
            apply_pause: owners::DEFAULT_APPLY_PAUSE,
        }
    }
}

pub struct Engine {
    pool: sqlx::PgPool,
    options: EngineOptions,
    cache: Arc<Cache>,
    signer: TokenSigner,
    writer: writer::WriterHandle,
    /// The experiments this replica owns and applies outcomes to.
    owners: Arc<owners::Owners>,
    instance_id: String,
    db: Arc<db_health::DbHealth>,
    /// Per-experiment memory budget in bytes (see [`memory_budget`]).
    memory_budget: std::sync::atomic::AtomicU64,
    /// The origins some live experiment lists for browser clicks (CORS preflights).
    origins: browser_clicks::OriginRegistry,
    /// Held (shared) while reading the flushed and unflushed duel counts and (exclusive) while
    /// a flush moves counts from memory to the database, so that a reader never sees a count in
    /// neither place, nor in both.
    duel_count_flush: tokio::sync::RwLock<()>,
    /// The clock conversion windows are judged by ([`clock`]).
    clock: Arc<clock::Clock>,
    /// Hashes unit ids and seeds units' duels ([`unit_duels`]).
    unit_key: unit_duels::UnitKey,
    /// Each experiment's state pinned for the current window of units' duels.
    window_states: unit_duels::WindowStates,
    /// Each experiment's segment labels known to this replica ([`segments`]).
    segment_labels: segments::SegmentLabels,
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
        // Units are hashed under their own secret, so that no token secret can be turned into
        // a way to test guesses of unit ids against stored hashes, and the other way round.
        let unit_secret = store::settings::get_or_init(&pool, "unit_hash_secret", || {
            let bytes: [u8; 32] = rand::rng().random();
            bytes.iter().map(|b| format!("{b:02x}")).collect()
        })
        .await?;
        let cache = Arc::new(Cache::default());
        let history = Arc::new(history::HistoryClock::new(options.history_interval));
        let clock = Arc::new(clock::Clock::new(options.test_clock));
        let owners = owners::Owners::start(
            pool.clone(),
            cache.clone(),
            history,
            clock.clone(),
            options.apply_pause,
        );
        let writer = writer::spawn(pool.clone(), owners.clone());
        let db = Arc::new(db_health::DbHealth::default());
        tokio::spawn(db_health::probe_loop(Arc::downgrade(&db), pool.clone()));
        let engine = Arc::new(Engine {
            pool,
            options,
            cache,
            signer: TokenSigner::new(secret.as_bytes()),
            writer,
            owners,
            instance_id: format!("{:016x}", rand::rng().random::<u64>()),
            db,
            memory_budget: memory_budget::DEFAULT_BUDGET_BYTES.into(),
            origins: browser_clicks::OriginRegistry::default(),
            duel_count_flush: tokio::sync::RwLock::new(()),
            clock,
            unit_key: unit_duels::UnitKey::new(unit_secret.as_bytes()),
            window_states: unit_duels::WindowStates::default(),
            segment_labels: segments::SegmentLabels::default(),
        });
        // A fresh replica knows every listed origin before it serves a preflight; if the
        // database does not answer now, the refresh loop reads them once it does.
        if let Err(e) = engine.refresh_once().await {
            tracing::warn!(error = %e, "could not read the browser-click origins at startup");
        }
        tokio::spawn(refresh_loop(Arc::downgrade(&engine)));
        tokio::spawn(webhooks::delivery::run(
            Arc::downgrade(&engine),
            engine.options.webhooks.clone(),
            engine.options.webhook_roots.clone(),
        ));
        Ok(engine)
    }

    /// Sets the per-experiment memory budget checked when experiments are created or grow.
    pub fn set_memory_budget(&self, bytes: u64) {
        self.memory_budget
            .store(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn memory_budget(&self) -> u64 {
        self.memory_budget
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The clock conversion windows are judged by.
    pub fn clock(&self) -> &clock::Clock {
        &self.clock
    }

    pub fn pool(&self) -> &sqlx::PgPool {
        &self.pool
    }

    /// Whether the database is reachable as far as this process knows (see [`db_health`]).
    pub fn database_ok(&self) -> bool {
        self.db.is_up()
    }

    /// Refuses at once what needs the database while it is known to be down, rather than
    /// waiting for the pool's acquire timeout.
    fn require_db(&self) -> Result<(), EngineError> {
        if self.db.is_up() {
            Ok(())
        } else {
            Err(EngineError::Unavailable)
        }
    }

    /// Notes an outage reported by an operation's result.
    fn observe<T>(&self, result: Result<T, EngineError>) -> Result<T, EngineError> {
        db_health::observe(&self.db, &result);
        result
    }

    /// The cached snapshot of an experiment, loading it on first use.
    pub async fn snapshot(&self, id: i64) -> Result<Arc<Snapshot>, EngineError> {
        match self.cache.get(id) {
            Some(s) => Ok(s),
            None => self.reload(id).await,
        }
    }

    /// The cached snapshot of an experiment once it reflects every outcome this replica
    /// acknowledged for it (waiting for its owner to apply them, up to
    /// [`owners::READ_WAIT`]): what reads of counts, the champion and the history serve, so a
    /// client that posted outcomes and then reads from the same replica sees them.
    pub async fn applied_snapshot(&self, id: i64) -> Result<Arc<Snapshot>, EngineError> {
        let snap = self.snapshot(id).await?;
        Ok(self.owners.await_applied(snap).await)
    }

    /// Reads an experiment from the database into the cache.
    pub async fn reload(&self, id: i64) -> Result<Arc<Snapshot>, EngineError> {
        self.require_db()?;
        let result = self.load(id).await;
        self.observe(result)
    }

    async fn load(&self, id: i64) -> Result<Arc<Snapshot>, EngineError> {
        let snap = self.read_stored(id).await?;
        self.cache.put(snap);
        self.cache.get(id).ok_or(EngineError::UnknownExperiment(id))
    }

    /// Reads an experiment as stored into a snapshot (not yet cached).
    async fn read_stored(&self, id: i64) -> Result<Snapshot, EngineError> {
        let Some(stored) = store::state::load_consistent(&self.pool, id).await? else {
            self.cache.remove(id);
            return Err(EngineError::UnknownExperiment(id));
        };
        let k = stored.rankers.len();
        // Parsing a large state and rebuilding its caches is CPU work: off the runtime.
        let snap = offload::cpu(k, move || Snapshot::from_stored(stored)).await?;
        self.origins
            .note(id, snap.version, snap.browser_click_origins.clone());
        Ok(snap)
    }

    /// Live experiments with id greater than `after`.
    pub async fn list(&self, after: i64, limit: i64) -> Result<Vec<Arc<Snapshot>>, EngineError> {
        self.require_db()?;
        let rows = self.observe(
            store_experiments::list(&self.pool, after, limit)
                .await
                .map_err(EngineError::from),
        )?;
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
        self.require_db()?;
        let _reading = self.duel_count_flush.read().await;
        let flushed = self.observe(self.flushed_duels(id).await)?;
        Ok(flushed + self.cache.unflushed_duels(id) as i64)
    }

    async fn flushed_duels(&self, id: i64) -> Result<i64, EngineError> {
        let mut conn = self.pool.acquire().await.map_err(store::StoreError::from)?;
        Ok(store::state::duels_issued(&mut conn, id).await?)
    }

    /// Database reachable and every migration applied; answers at once while the database is
    /// known to be down.
    pub async fn ready(&self) -> Result<(), String> {
        if let Some(why) = self.db.down_reason() {
            return Err(why);
        }
        match store::migrations_applied(&self.pool).await {
            Ok(true) => Ok(()),
            Ok(false) => Err("migrations are not all applied".into()),
            Err(e) => Err(format!("database unreachable: {e}")),
        }
    }

    async fn refresh_once(&self) -> Result<(), EngineError> {
        let started = std::time::Instant::now();
        // The cache as it was before the database is read: every version in it was committed
        // before the read, so one the database no longer has was lost, not written meanwhile.
        let cached = self.cache.versions();
        let versions = store_experiments::versions(&self.pool).await?;
        let stored: std::collections::HashMap<i64, (i64, i64)> = versions
            .iter()
            .map(|&(id, v, at)| (id, (v, at.timestamp_micros())))
            .collect();
        for (id, cached, cached_mark) in cached {
            match stored.get(&id) {
                None => self.cache.remove(id),
                Some(&(v, _)) if v > cached => {
                    metrics::counter!("joust_cache_reloads_total", "why" => "newer").increment(1);
                    self.reload(id).await?;
                }
                // Postgres lost the cached version's application in a crash (the database is
                // behind), or the owner has since written that version number again (the write
                // time differs: [`Snapshot::write_mark`]). The database is the truth, so the
                // cache goes back to it, in place: a read waiting for this replica's outcomes to
                // be applied would take an emptied entry for a deleted experiment and answer at
                // once with the lost state.
                Some(&(v, mark)) if v < cached || mark != cached_mark => {
                    metrics::counter!("joust_cache_reloads_total", "why" => "lost").increment(1);
                    let snap = self.read_stored(id).await?;
                    self.cache.replace_version(cached, snap);
                }
                Some(_) => {}
            }
        }
        // The origins of every live experiment, cached or not: a preflight may reach any replica.
        let live: std::collections::HashMap<i64, i64> =
            stored.iter().map(|(&id, &(v, _))| (id, v)).collect();
        let stale = self.origins.stale(&live);
        let rows = if stale.is_empty() {
            Vec::new()
        } else {
            store_experiments::browser_click_origins(&self.pool, &stale).await?
        };
        self.origins.merge(started, &live, rows);
        Ok(())
    }

    /// Whether some live experiment lists `origin` for browser clicks (answered from memory).
    pub fn origin_listed(&self, origin: &str) -> bool {
        self.origins.contains(origin)
    }

    /// The experiment an interleaving token was issued for, if the token is genuine and the
    /// experiment live: what decides whether clicks may come without a key. Checks only the
    /// signature; [`Engine::record_clicks`] checks the rest.
    pub async fn click_experiment(
        &self,
        token: &str,
    ) -> Result<Option<Arc<Snapshot>>, EngineError> {
        let Some(claims) = self.signer.verify_interleaving(token) else {
            return Ok(None);
        };
        match self.snapshot(claims.duel.experiment_id).await {
            Ok(snap) => Ok(Some(snap)),
            Err(EngineError::UnknownExperiment(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn flush_duels(&self) -> Result<(), EngineError> {
        let _flushing = self.duel_count_flush.write().await;
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
        // While the database is away there is nothing to refresh from; the probe watches it.
        if !engine.database_ok() {
            continue;
        }
        let mut result = engine.refresh_once().await;
        since_flush += REFRESH_INTERVAL;
        if result.is_ok() && since_flush >= engine.options.duel_count_flush_interval {
            since_flush = Duration::ZERO;
            result = engine.flush_duels().await;
        }
        if result.is_err() {
            metrics::counter!("joust_database_errors_total", "op" => "refresh").increment(1);
        }
        engine.observe(result).ok();
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl Engine {
    /// Flushes what only this process knows (duel counts) before it exits, and lets the
    /// experiments it owns apply the outcomes it acknowledged, for at most
    /// [`SHUTDOWN_APPLY_WAIT`] (the rest is applied by their next owner).
    pub async fn shutdown(&self) {
        if let Err(e) = self.flush_duels().await {
            tracing::warn!(error = %e, "could not flush duel counts at shutdown");
        }
        let behind = self.owners.settle(SHUTDOWN_APPLY_WAIT).await;
        if !behind.is_empty() {
            tracing::info!(
                experiments = ?behind,
                "outcomes acknowledged here are not all applied yet: their next owner applies them"
            );
        }
    }
}
