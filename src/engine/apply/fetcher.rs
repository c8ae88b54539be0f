//! Reading the rows to apply for many experiments at once.
//!
//! Each owned experiment's applier reads its final rows after its cursor before every
//! application. With checkpoints ([`super::checkpoint`]) an application rarely writes, so on many
//! experiments that each get a few outcomes per pause that read became most of what an outcome
//! cost the database: a statement and a transaction per experiment per pause. The appliers now
//! ask one fetcher, which reads for every experiment that asked in one statement
//! ([`store_apply::pending_many`]). A read waits up to [`GATHER`] after the first request for
//! others to join it (an applier has just paused for 20 ms, so a few more do not matter), unless
//! a request comes from a client's read waiting for its own outcomes, which goes at once with
//! whatever has gathered. At most [`IN_FLIGHT`] statements run at once, and the requests that
//! arrive while they run are read together by the next one, as acknowledgements are grouped. Each experiment gets exactly the rows its own read would have returned at that
//! moment (one statement, one snapshot, one horizon), so exactly-once rests on the same
//! argument.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Semaphore, mpsc, oneshot};

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

struct Request {
    experiment: i64,
    after: Cursor,
    /// A client's read waits for it: read at once.
    urgent: bool,
    reply: oneshot::Sender<Result<Vec<PendingRow>, EngineError>>,
}

/// The replica's reader of rows to apply.
pub struct Fetcher {
    requests: mpsc::UnboundedSender<Request>,
}

impl Fetcher {
    /// Starts the reader; it stops when the fetcher is dropped.
    pub fn start(pool: sqlx::PgPool, limit: i64) -> Fetcher {
        let (requests, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(pool, limit, rx));
        Fetcher { requests }
    }

    /// The experiment's final rows after `after`, in apply order (at most the fetcher's limit);
    /// `urgent` when a client's read waits for them.
    pub async fn pending(
        &self,
        experiment: i64,
        after: Cursor,
        urgent: bool,
    ) -> Result<Vec<PendingRow>, EngineError> {
        let (reply, answer) = oneshot::channel();
        let request = Request {
            experiment,
            after,
            urgent,
            reply,
        };
        let stopped = || EngineError::internal(anyhow::anyhow!("the row reader stopped"));
        if self.requests.send(request).is_err() {
            return Err(stopped());
        }
        answer.await.unwrap_or_else(|_| Err(stopped()))
    }
}

async fn run(pool: sqlx::PgPool, limit: i64, mut rx: mpsc::UnboundedReceiver<Request>) {
    let permits = Arc::new(Semaphore::new(IN_FLIGHT));
    loop {
        // Wait for a free read first: requests arriving meanwhile queue up and go together.
        let Ok(permit) = permits.clone().acquire_owned().await else {
            return;
        };
        let Some(first) = rx.recv().await else {
            return;
        };
        let mut urgent = first.urgent;
        let mut batch = vec![first];
        let until = tokio::time::Instant::now() + GATHER;
        while !urgent && batch.len() < MAX_BATCH {
            tokio::select! {
                r = rx.recv() => match r {
                    Some(r) => {
                        urgent = r.urgent;
                        batch.push(r);
                    }
                    None => break,
                },
                _ = tokio::time::sleep_until(until) => break,
            }
        }
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(r) => batch.push(r),
                Err(_) => break,
            }
        }
        let pool = pool.clone();
        tokio::spawn(async move {
            let after: Vec<(i64, Cursor)> = batch.iter().map(|r| (r.experiment, r.after)).collect();
            metrics::histogram!("joust_apply_read_experiments").record(after.len() as f64);
            match store_apply::pending_many(&pool, &after, limit).await {
                Ok(rows) => {
                    for (r, rows) in batch.into_iter().zip(rows) {
                        let _ = r.reply.send(Ok(rows));
                    }
                }
                Err(e) => {
                    let e = EngineError::from(e);
                    for r in batch {
                        let _ = r
                            .reply
                            .send(Err(e.for_another_caller("reading rows to apply")));
                    }
                }
            }
            drop(permit);
        });
    }
}
