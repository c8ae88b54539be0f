//! Keeping the cache in step with the database: every replica polls the state versions, reloads
//! what another replica changed (or what a crash of Postgres lost), and flushes the duel counts
//! it has issued since the last flush.

use std::time::Duration;

use crate::engine::{Engine, EngineError};
use crate::store::{self, experiments as store_experiments};

/// How often a replica looks for changes made by others. Outcomes applied by this process are
/// visible as soon as they are applied; those applied by another replica within this interval.
pub const REFRESH_INTERVAL: Duration = Duration::from_millis(200);

impl Engine {
    pub(crate) async fn refresh_once(&self) -> Result<(), EngineError> {
        let started = std::time::Instant::now();
        // The cache as it was before the database is read: every version in it was committed
        // before the read, so one the database no longer has was lost, not written meanwhile.
        let cached = self.cache.versions();
        let versions = store_experiments::versions(&self.pool).await?;
        let stored: std::collections::HashMap<i64, (i64, i64)> = versions
            .iter()
            .map(|&(id, v, at)| (id, (v, at.timestamp_micros())))
            .collect();
        for c in cached {
            let id = c.id;
            let Some(&(v, mark)) = stored.get(&id) else {
                self.cache.remove(id);
                continue;
            };
            let (stored_version, stored_mark) = c.stored;
            if v > stored_version && !c.ahead {
                metrics::counter!("joust_cache_reloads_total", "why" => "newer").increment(1);
                self.reload(id).await?;
                continue;
            }
            // The cache goes back to the database, in place (a read waiting for this replica's
            // outcomes to be applied would take an emptied entry for a deleted experiment and
            // answer at once with the lost state), when:
            let why = if c.ahead && !self.owners.owns(id) {
                // its owner here applied versions in memory and never wrote them, and the
                // ownership is gone: the next owner applies those outcomes again;
                "unwritten"
            } else if v > stored_version {
                // a version was written over the one the owner here is applying on (an
                // administrative change): the owner applies its rows again on it;
                "newer"
            } else if v < stored_version || mark != stored_mark {
                // Postgres lost the cached version's application in a crash (the database is
                // behind), or the owner has since written that version number again (the write
                // time differs: [`Snapshot::write_mark`]).
                "lost"
            } else {
                // Otherwise the cache holds the stored version, or the owner here is ahead of it
                // and writes it at its next checkpoint.
                continue;
            };
            metrics::counter!("joust_cache_reloads_total", "why" => why).increment(1);
            let snap = self.read_stored(id).await?;
            self.cache.replace_version(c.version, snap);
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

    pub(crate) async fn flush_duels(&self) -> Result<(), EngineError> {
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
pub async fn refresh_loop(engine: std::sync::Weak<Engine>) {
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
