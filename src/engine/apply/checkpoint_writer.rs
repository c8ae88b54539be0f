//! Writing many experiments' checkpoints in one statement.
//!
//! With checkpoints ([`super::checkpoint`]) each owned experiment writes its state at most once
//! per interval, but on many experiments those writes were still a statement and a commit each:
//! on 100 experiments, most of the database's executor time (docs/benchmarks.md). The appliers
//! now send the writes that write nothing but the state row, its log and its win and tie counts
//! (a held chain coming due, or an application that cannot be held) to one writer, a
//! [`Gatherer`], which writes every experiment that asked in one statement
//! ([`store_apply::write_states_alone`]), and each applier awaits its own answer. Each write is
//! fenced by its own stored version, so a stale one writes nothing of itself and the others
//! still write; and a statement that fails answers every caller with its error, which each
//! takes as a failed write of its own (its rows are applied again, as after a lost
//! asynchronous commit). Writes that carry more (a history point, decision events, segment,
//! unit or metric counts) stay in a transaction of their own.

use std::time::Duration;

use super::gatherer::{Gatherer, Limits};
use crate::engine::EngineError;
use crate::store::apply::{self as store_apply, StateWrite};

/// Statements writing at once: the two cores of a small database, without one batch's locks
/// queueing every other.
const IN_FLIGHT: usize = 2;

/// Most experiments written by one statement: one statement holds each of their state rows'
/// locks until it commits, so an administrative change waits for at most this many writes.
const MAX_BATCH: usize = 100;

/// The share of the checkpoint interval a write waits for others to join it. A held chain is
/// written once per interval, so on many experiments the writes come in evenly spread; waiting a
/// tenth of the interval gathers about a tenth of them into each statement, and lets the state
/// other replicas read, and what a kill -9 of the owner leaves to apply again, grow by a tenth
/// of the interval at most. With no interval (every application written at once), nothing
/// waits: only the writes arriving while others run go together.
const WINDOW_SHARE: u32 = 10;

/// The replica's writer of state rows.
pub struct CheckpointWriter(Gatherer<StateWrite, Option<i64>>);

impl CheckpointWriter {
    /// Starts the writer for owners with the checkpoint `interval`; it stops when dropped.
    pub fn start(pool: sqlx::PgPool, interval: Duration) -> CheckpointWriter {
        let limits = Limits {
            in_flight: IN_FLIGHT,
            max_batch: MAX_BATCH,
            window: interval / WINDOW_SHARE,
        };
        CheckpointWriter(Gatherer::start(
            limits,
            "writing applications",
            move |writes: Vec<StateWrite>| {
                let pool = pool.clone();
                async move {
                    metrics::histogram!("joust_apply_write_experiments")
                        .record(writes.len() as f64);
                    Ok(store_apply::write_states_alone(&pool, &writes).await?)
                }
            },
        ))
    }

    /// Writes `write` with others; its new version, or `None` when its stored version changed
    /// meanwhile (nothing of it was written). `urgent` when something waits for it (a graceful
    /// stop, a read waiting for its outcomes): it goes at once with whatever has gathered.
    pub async fn write(&self, write: StateWrite, urgent: bool) -> Result<Option<i64>, EngineError> {
        self.0.ask(write, urgent).await
    }
}
