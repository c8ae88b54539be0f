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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// A gatherer that answers each query doubled (or fails every batch), recording the sizes
    /// of the batches it served.
    fn doubling(window: Duration, fail: bool) -> (Gatherer<u32, u32>, Arc<Mutex<Vec<usize>>>) {
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let seen = sizes.clone();
        let limits = Limits {
            in_flight: 1,
            max_batch: 10,
            window,
        };
        let gatherer = Gatherer::start(limits, "doubling", move |queries: Vec<u32>| {
            seen.lock().unwrap().push(queries.len());
            async move {
                if fail {
                    return Err(EngineError::internal(anyhow::anyhow!("the batch failed")));
                }
                Ok(queries.into_iter().map(|q| q * 2).collect())
            }
        });
        (gatherer, sizes)
    }

    #[tokio::test]
    async fn requests_within_the_window_go_in_one_batch_and_each_gets_its_own_answer() {
        let (gatherer, sizes) = doubling(Duration::from_secs(1), false);
        let answers = futures_util::future::join_all((1..=5).map(|q| gatherer.ask(q, false))).await;
        let answers: Vec<u32> = answers.into_iter().map(Result::unwrap).collect();
        assert_eq!(answers, [2, 4, 6, 8, 10]);
        assert_eq!(*sizes.lock().unwrap(), [5]);
    }

    #[tokio::test]
    async fn a_batch_holds_at_most_its_limit() {
        let (gatherer, sizes) = doubling(Duration::from_secs(1), false);
        let answers = futures_util::future::join_all((0..25).map(|q| gatherer.ask(q, false))).await;
        assert!(answers.iter().all(Result::is_ok));
        assert_eq!(*sizes.lock().unwrap(), [10, 10, 5]);
    }

    #[tokio::test]
    async fn an_urgent_request_does_not_wait_for_the_window() {
        // The window is far longer than the test may take: only going at once answers in time.
        let (gatherer, sizes) = doubling(Duration::from_secs(3600), false);
        let answer = tokio::time::timeout(Duration::from_secs(60), gatherer.ask(7, true)).await;
        assert_eq!(answer.expect("answered without the window").unwrap(), 14);
        assert_eq!(*sizes.lock().unwrap(), [1]);
    }

    #[tokio::test]
    async fn a_failed_batch_fails_every_caller_in_it() {
        let (gatherer, sizes) = doubling(Duration::from_secs(1), true);
        let answers = futures_util::future::join_all((1..=3).map(|q| gatherer.ask(q, false))).await;
        for answer in answers {
            match answer {
                Err(EngineError::Internal(cause)) => {
                    assert!(cause.to_string().contains("the batch failed"), "{cause}")
                }
                other => panic!("the batch's error for every caller: {other:?}"),
            }
        }
        assert_eq!(*sizes.lock().unwrap(), [3]);
    }
}
