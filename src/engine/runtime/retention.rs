//! The background pruner of raw outcome rows (see `store::retention` for which rows may go) and
//! of webhook deliveries delivered or abandoned longer than the retention ago.
//! It deletes in small batches and pauses after each as long as the batch took, so it never holds
//! many locks, uses at most half of one connection, and still keeps up with a busy writer (1,000
//! rows take milliseconds). It runs on every replica (batches skip rows another replica is
//! deleting).

use std::time::Duration;

use crate::store;

/// How long raw outcome rows are kept after their duel's attribution window ends, by default.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(90 * 24 * 3600);
/// Rows deleted per statement.
pub const DEFAULT_BATCH: i64 = 1_000;
/// Pause between two passes over the table.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Copy)]
pub struct Retention {
    pub keep: Duration,
    pub batch: i64,
    pub interval: Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            keep: DEFAULT_RETENTION,
            batch: DEFAULT_BATCH,
            interval: DEFAULT_INTERVAL,
        }
    }
}

/// Prunes until no row is due; returns how many went.
pub async fn prune_pass(pool: &sqlx::PgPool, r: Retention) -> Result<u64, store::StoreError> {
    let mut total = 0;
    loop {
        let started = std::time::Instant::now();
        let n = store::retention::prune_outcomes(pool, r.keep, r.batch).await?;
        let applies = store::retention::prune_applies(pool, r.keep, r.batch).await?;
        let deliveries = store::webhooks::prune_done(pool, r.keep, r.batch).await?;
        total += n;
        metrics::counter!("joust_outcome_rows_pruned_total").increment(n);
        metrics::counter!("joust_webhook_deliveries_pruned_total").increment(deliveries);
        if n < r.batch as u64 && applies < r.batch as u64 && deliveries < r.batch as u64 {
            return Ok(total);
        }
        tokio::time::sleep(started.elapsed()).await;
    }
}

/// Runs a pass every `interval` until the task is aborted; a database error waits for the next.
pub fn spawn(pool: sqlx::PgPool, r: Retention) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(r.interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            match prune_pass(&pool, r).await {
                Ok(0) => {}
                Ok(n) => tracing::debug!(rows = n, "pruned raw outcome rows"),
                Err(e) => tracing::warn!(error = %e, "pruning raw outcome rows failed"),
            }
        }
    })
}
