//! Experiments in memory, organised as the life of an outcome: `requests/` (one `impl Engine`
//! file per resource of the API), `ingest/` (the acknowledgement: durable inserts in groups),
//! `apply/` (the owner's side: applying acknowledged outcomes exactly once), `model/` (one
//! experiment as data: snapshot, derived results, tokens), `settings/` (an experiment's settings
//! checked), `runtime/` (cache and refresh, database health, clock, retention) and `webhooks/`.
//! Imports run one way: `requests` uses every other stage; `apply` uses `model`, `settings` and
//! `runtime`; `ingest` and `runtime` use `model`, which uses `settings`. `ingest` and `apply`
//! never import each other and meet only here, where the writer's acknowledgement callback is
//! pointed at the owners. HTTP handlers call one `Engine` method per request.

mod apply;
mod error;
mod ingest;
mod model;
mod requests;
mod runtime;
mod settings;
mod webhooks;

pub use crate::store::history::HistoryPoint;
pub use apply::{DEFAULT_APPLY_PAUSE, DEFAULT_CHECKPOINT_INTERVAL};
pub use error::{EngineError, InternalError};
pub use model::ExportCursor;
pub use model::{
    MAX_MATRIX_RANKERS, SegmentVerdict, Snapshot, VersionTag, agree, segment_verdicts,
    tie_rule_str, verdicts,
};
pub use requests::{
    DEFAULT_MAX_EXPERIMENTS, ExperimentCounters, IssuedDuel, IssuedInterleaving, KEY_MARK,
    MAX_BATCH, MAX_CONVERSION_BATCH, MAX_POINTS, MetricCounters, check_batch, new_key,
};
pub use requests::{ExportLabels, ExportPage, export_page, kind_name as export_kind_name};
pub use runtime::{
    DEFAULT_BUDGET_BYTES, KEY_REFRESH, KeyGrant, KeyHash, KeyRing, Reach, Retention, key_hash,
    offload, spawn_retention,
};
pub use webhooks::{DeliveryLimits, Egress, NameLookup, RetryPolicy, TrustedRoots};

use rand::Rng;
use std::sync::Arc;
use std::time::Duration;

use crate::store;
use apply::{HistoryClock, Owners};
use model::TokenSigner;
use requests::{UnitKey, WindowStates};
use runtime::{Cache, Clock, DbHealth, OriginRegistry, SegmentLabels};

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
    /// Least time between two flushes of the duel counts (checked every
    /// `runtime::REFRESH_INTERVAL`). Not a `joust serve` setting: tests shorten it to see the
    /// counts soon.
    pub duel_count_flush_interval: Duration,
    /// How webhook events are retried, and how often the outbox is polled.
    pub webhooks: webhooks::RetryPolicy,
    /// Certificates of private CAs webhook receivers' certificates may be issued by
    /// (`--webhook-ca-file`), trusted besides the public roots.
    pub webhook_roots: webhooks::TrustedRoots,
    /// Where webhook events may be posted: public addresses and the networks of
    /// `--webhook-allow-networks`.
    pub webhook_egress: webhooks::Egress,
    /// Whether an admin may move the service clock forward (`--test-clock`; off by default).
    pub test_clock: bool,
    /// Least time between two applications of one experiment's outcomes (`--apply-pause-ms`).
    pub apply_pause: Duration,
    /// Longest time an owner holds applied outcomes unwritten (`--checkpoint-ms`; zero writes
    /// every application).
    pub checkpoint_interval: Duration,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            history_interval: apply::DEFAULT_HISTORY_INTERVAL,
            metrics_max_experiments: requests::DEFAULT_MAX_EXPERIMENTS,
            duel_count_flush_interval: FLUSH_INTERVAL,
            webhooks: webhooks::RetryPolicy::default(),
            webhook_roots: webhooks::TrustedRoots::default(),
            webhook_egress: webhooks::Egress::default(),
            test_clock: false,
            apply_pause: apply::DEFAULT_APPLY_PAUSE,
            checkpoint_interval: apply::DEFAULT_CHECKPOINT_INTERVAL,
        }
    }
}

pub struct Engine {
    pool: sqlx::PgPool,
    options: EngineOptions,
    cache: Arc<Cache>,
    signer: TokenSigner,
    writer: ingest::WriterHandle,
    /// The experiments this replica owns and applies outcomes to.
    owners: Arc<Owners>,
    instance_id: String,
    db: Arc<DbHealth>,
    /// Per-experiment memory budget in bytes (see `runtime::memory_budget`).
    memory_budget: std::sync::atomic::AtomicU64,
    /// The origins some live experiment lists for browser clicks (CORS preflights).
    origins: OriginRegistry,
    /// Held (shared) while reading the flushed and unflushed duel counts and (exclusive) while
    /// a flush moves counts from memory to the database, so that a reader never sees a count in
    /// neither place, nor in both.
    duel_count_flush: tokio::sync::RwLock<()>,
    /// The clock conversion windows are judged by (`runtime::clock`).
    clock: Arc<Clock>,
    /// Hashes unit ids and seeds units' duels (`requests::unit_duels`).
    unit_key: UnitKey,
    /// Each experiment's state pinned for the current window of units' duels.
    window_states: WindowStates,
    /// Each experiment's segment labels known to this replica (`requests::segments`).
    segment_labels: SegmentLabels,
    /// The API keys stored in the database (`runtime::key_ring`).
    key_ring: KeyRing,
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
        let history = Arc::new(HistoryClock::new(options.history_interval));
        let clock = Arc::new(Clock::new(options.test_clock));
        let owners = Owners::start(
            pool.clone(),
            cache.clone(),
            history,
            clock.clone(),
            options.apply_pause,
            options.checkpoint_interval,
        );
        // The writer tells the owners of what it acknowledged; it knows them only as this callback.
        let acknowledged_to = owners.clone();
        let writer = ingest::spawn(
            pool.clone(),
            Arc::new(move |id, at| acknowledged_to.acknowledged(id, at)),
        );
        let db = Arc::new(DbHealth::default());
        tokio::spawn(runtime::probe_loop(Arc::downgrade(&db), pool.clone()));
        let engine = Arc::new(Engine {
            pool,
            options,
            cache,
            signer: TokenSigner::new(secret.as_bytes()),
            writer,
            owners,
            instance_id: format!("{:016x}", rand::rng().random::<u64>()),
            db,
            memory_budget: runtime::DEFAULT_BUDGET_BYTES.into(),
            origins: OriginRegistry::default(),
            duel_count_flush: tokio::sync::RwLock::new(()),
            clock,
            unit_key: UnitKey::new(unit_secret.as_bytes()),
            window_states: WindowStates::default(),
            segment_labels: SegmentLabels::default(),
            key_ring: KeyRing::default(),
        });
        // Keys are read before the first request, so that a server with stored keys is never
        // taken for one without; if the database does not answer now, nothing is open until
        // the loop reads them.
        if let Err(e) = engine.key_ring.reload(&engine.pool).await {
            tracing::warn!(error = %e, "could not read the API keys at startup");
        }
        tokio::spawn(runtime::key_refresh_loop(Arc::downgrade(&engine)));
        // A fresh replica knows every listed origin before it serves a preflight; if the
        // database does not answer now, the refresh loop reads them once it does.
        if let Err(e) = engine.refresh_once().await {
            tracing::warn!(error = %e, "could not read the browser-click origins at startup");
        }
        tokio::spawn(runtime::refresh_loop(Arc::downgrade(&engine)));
        tokio::spawn(webhooks::delivery::run(
            Arc::downgrade(&engine),
            engine.options.webhooks.clone(),
            engine.options.webhook_roots.clone(),
            engine.options.webhook_egress.clone(),
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
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    pub fn pool(&self) -> &sqlx::PgPool {
        &self.pool
    }

    /// Whether the database is reachable as far as this process knows (see `runtime::db_health`).
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
        runtime::observe(&self.db, &result);
        result
    }

    /// The cached snapshot of an experiment, loading it on first use. An experiment out of the
    /// current request's reach is answered as unknown ([`Reach`]).
    pub async fn snapshot(&self, id: i64) -> Result<Arc<Snapshot>, EngineError> {
        let snap = match self.cache.get(id) {
            Some(s) => s,
            None => self.reload(id).await?,
        };
        if !Reach::current().covers(snap.project_id) {
            return Err(EngineError::UnknownExperiment(id));
        }
        Ok(snap)
    }

    /// The API keys stored in the database, as this replica last read them.
    pub fn key_ring(&self) -> &KeyRing {
        &self.key_ring
    }

    /// The cached snapshot of an experiment once it reflects every outcome this replica
    /// acknowledged for it (waiting for its owner to apply them, up to
    /// `apply::READ_WAIT`): what reads of counts, the champion and the history serve, so a
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
        let snap = runtime::offload(k, move || Snapshot::from_stored(stored)).await?;
        self.origins
            .note(id, snap.version, snap.browser_click_origins.clone());
        Ok(snap)
    }

    /// Whether some live experiment lists `origin` for browser clicks (answered from memory).
    pub fn origin_listed(&self, origin: &str) -> bool {
        self.origins.contains(origin)
    }
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
