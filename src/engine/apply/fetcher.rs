//! Reading the rows to apply for many experiments at once.
//!
//! Each owned experiment's applier reads its final rows after its cursor before every
//! application. With checkpoints ([`super::checkpoint`]) an application rarely writes, so on many
//! experiments that each get a few outcomes per pause that read became most of what an outcome
//! cost the database: a statement and a transaction per experiment per pause. The appliers now
//! ask one fetcher, a [`Gatherer`], which reads for every experiment that asked in one statement
//! ([`store_apply::pending_many`]). A read waits up to [`GATHER`] after the first request for
//! others to join it (an applier has just paused for 20 ms, so a few more do not matter), unless
//! a request comes from a client's read waiting for its own outcomes, which goes at once with
//! whatever has gathered. Each experiment gets exactly the rows its own read would have returned
//! at that moment (one statement, one snapshot, one horizon), so exactly-once rests on the same
//! argument.

use std::time::Duration;

use super::gatherer::{Gatherer, Limits};
use crate::engine::EngineError;
use crate::store::apply::{self as store_apply, Cursor, PendingRow};

/// Reads running at once: a large experiment's backlog in one read does not hold up the others'.
const IN_FLIGHT: usize = 4;

/// Most experiments read by one statement.
const MAX_BATCH: usize = 500;

/// Longest wait for other experiments' requests to join a read. Without it, 8 s of 100
/// experiments ran 6,907 reads of 2.8 rows each (0.084 ms of execution each, so four in flight
/// rarely filled); with it, 820 reads of 28 rows (docs/benchmarks.md).
const GATHER: Duration = Duration::from_millis(5);

/// The replica's reader of rows to apply.
pub struct Fetcher(Gatherer<(i64, Cursor), Vec<PendingRow>>);

impl Fetcher {
    /// Starts the reader; it stops when the fetcher is dropped.
    pub fn start(pool: sqlx::PgPool, limit: i64) -> Fetcher {
        let limits = Limits {
            in_flight: IN_FLIGHT,
            max_batch: MAX_BATCH,
            window: GATHER,
        };
        Fetcher(Gatherer::start(
            limits,
            "reading rows to apply",
            move |after: Vec<(i64, Cursor)>| {
                let pool = pool.clone();
                async move {
                    metrics::histogram!("joust_apply_read_experiments").record(after.len() as f64);
                    Ok(store_apply::pending_many(&pool, &after, limit).await?)
                }
            },
        ))
    }

    /// The experiment's final rows after `after`, in apply order (at most the fetcher's limit);
    /// `urgent` when a client's read waits for them.
    pub async fn pending(
        &self,
        experiment: i64,
        after: Cursor,
        urgent: bool,
    ) -> Result<Vec<PendingRow>, EngineError> {
        self.0.ask((experiment, after), urgent).await
    }
}
