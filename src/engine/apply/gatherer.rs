//! Gathering the requests of many appliers into one statement.
//!
//! Every owned experiment has its own applier, and on many experiments that each get a few
//! outcomes per pause, a statement per applier per step was most of what an outcome cost the
//! database. A gatherer serves the requests of all of them a batch at a time: a batch waits up to
//! its window after its first request for others to join it, unless a request is urgent (someone
//! waits for it), which goes at once with whatever has gathered. At most `in_flight` batches run
//! at once, and the requests that arrive while they run go together into the next, as
//! acknowledgements are grouped. The reader of rows to apply ([`super::fetcher`]) and the writer
//! of checkpoints ([`super::checkpoint_writer`]) are gatherers.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::engine::EngineError;

/// How a gatherer forms its batches.
pub struct Limits {
    /// Batches served at once: a slow one does not hold up the others.
    pub in_flight: usize,
    /// Most requests in one batch.
    pub max_batch: usize,
    /// Longest wait after a batch's first request for others to join it.
    pub window: Duration,
}

struct Asked<Q, A> {
    query: Q,
    urgent: bool,
    reply: oneshot::Sender<Result<A, EngineError>>,
}

/// Serves queries `Q` with answers `A`, a batch at a time.
pub struct Gatherer<Q, A> {
    requests: mpsc::UnboundedSender<Asked<Q, A>>,
    /// What it does, for the errors its callers get.
    doing: &'static str,
}

impl<Q: Send + 'static, A: Send + 'static> Gatherer<Q, A> {
    /// Starts serving with `serve`, which answers a batch's queries in their order, or fails for
    /// all of them (each caller then gets the error); it stops when the gatherer is dropped.
    pub fn start<S, F>(limits: Limits, doing: &'static str, serve: S) -> Gatherer<Q, A>
    where
        S: Fn(Vec<Q>) -> F + Send + 'static,
        F: Future<Output = Result<Vec<A>, EngineError>> + Send + 'static,
    {
        let (requests, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(limits, doing, serve, rx));
        Gatherer { requests, doing }
    }

    /// The answer to `query`, served with a batch; `urgent` when someone waits for it, so its
    /// batch goes at once.
    pub async fn ask(&self, query: Q, urgent: bool) -> Result<A, EngineError> {
        let (reply, answer) = oneshot::channel();
        let stopped = || EngineError::internal(anyhow::anyhow!("{}: stopped", self.doing));
        let asked = Asked {
            query,
            urgent,
            reply,
        };
        if self.requests.send(asked).is_err() {
            return Err(stopped());
        }
        answer.await.unwrap_or_else(|_| Err(stopped()))
    }
}

async fn run<Q, A, S, F>(
    limits: Limits,
    doing: &'static str,
    serve: S,
    mut rx: mpsc::UnboundedReceiver<Asked<Q, A>>,
) where
    Q: Send + 'static,
    A: Send + 'static,
    S: Fn(Vec<Q>) -> F,
    F: Future<Output = Result<Vec<A>, EngineError>> + Send + 'static,
{
    let permits = Arc::new(Semaphore::new(limits.in_flight));
    loop {
        // Wait for a free slot first: requests arriving meanwhile queue up and go together.
        let Ok(permit) = permits.clone().acquire_owned().await else {
            return;
        };
        let Some(first) = rx.recv().await else {
            return;
        };
        let mut urgent = first.urgent;
        let mut batch = vec![first];
        let until = tokio::time::Instant::now() + limits.window;
        while !urgent && batch.len() < limits.max_batch {
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
        while batch.len() < limits.max_batch {
            match rx.try_recv() {
                Ok(r) => batch.push(r),
                Err(_) => break,
            }
        }
        let (queries, replies): (Vec<Q>, Vec<_>) =
            batch.into_iter().map(|a| (a.query, a.reply)).unzip();
        let served = serve(queries);
        tokio::spawn(async move {
            match served.await {
                Ok(answers) => {
                    for (reply, answer) in replies.into_iter().zip(answers) {
                        let _ = reply.send(Ok(answer));
                    }
                }
                Err(e) => {
                    for reply in replies {
                        let _ = reply.send(Err(e.for_another_caller(doing)));
                    }
                }
            }
            drop(permit);
        });
    }
}
