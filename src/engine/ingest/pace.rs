//! When the outcome writer starts a small group: at once, or after the clients it just answered
//! have come back.
//!
//! Under a steady load of clients that each wait for their answer (a search backend posting one
//! outcome per query), the clients split into cohorts: those answered by one group come back
//! while the next commits, so each group holds a fraction of the clients, and every group is a
//! transaction with its own commit flush, round trip and wake-ups, whatever its size. With
//! several replicas each writer sees only its share of the clients, so its groups are smaller
//! still, and the commits per outcome grew with every replica added (docs/benchmarks.md).
//!
//! So a small group that forms right after the last one was answered waits for the clients that
//! group answered to come back (as many new requests as it held), but never longer than half of
//! the last group's commit: its latency rises by at most that, and it saves a commit. The writer
//! is woken once, by the request that completes the cohort, not by every arrival.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::fine_timer::FineTimer;

/// Groups at least this large start at once: their commit is shared widely enough, and
/// `benches/bench-http`'s 64 clients posting single outcomes form groups of tens, which a
/// linger only slowed (docs/benchmarks.md).
const LINGER_BELOW: usize = 16;
/// A group that starts within this of the last one's end counts as under load.
const UNDER_LOAD: Duration = Duration::from_millis(20);
/// Longest linger, whatever the last commit took (a commit slowed by an overloaded machine).
const LINGER_MAX: Duration = Duration::from_millis(1);

/// Requests handed to the writer, counted, and the wake-up of a writer waiting for a number of
/// them.
pub struct Arrivals {
    count: AtomicU64,
    /// The count a lingering writer waits for; `u64::MAX` when none waits.
    target: AtomicU64,
    reached: Notify,
}

impl Default for Arrivals {
    fn default() -> Self {
        Arrivals {
            count: AtomicU64::new(0),
            target: AtomicU64::new(u64::MAX),
            reached: Notify::new(),
        }
    }
}

impl Arrivals {
    /// Counts one request queued to the writer (after it is queued, so a writer that sees the
    /// count finds the request) and wakes the writer if it completes what the writer waits for.
    pub fn arrived(&self) {
        let count = self.count.fetch_add(1, Ordering::SeqCst) + 1;
        if count == self.target.load(Ordering::SeqCst) {
            self.reached.notify_one();
        }
    }

    /// Requests queued so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// Waits until `target` requests have been queued in all, or for `at_most` (on `timer`: a
    /// linger is shorter than the runtime timer's tick). A wake-up left
    /// over from a wait that ended by its bound can end a later wait early: that group then
    /// starts at once, as it would without lingering.
    pub async fn wait_for(&self, target: u64, at_most: Duration, timer: &FineTimer) {
        let reached = self.reached.notified();
        tokio::pin!(reached);
        reached.as_mut().enable();
        // Both sides use SeqCst, so either the count read here includes a request counted
        // meanwhile, or that request's `arrived` reads this target and wakes the wait.
        self.target.store(target, Ordering::SeqCst);
        if self.count() < target {
            tokio::select! {
                _ = reached => {}
                _ = timer.sleep(at_most) => {}
            }
        }
        self.target.store(u64::MAX, Ordering::SeqCst);
    }
}

/// How a small group should linger: until the arrivals reach a count, for at most a while.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Linger {
    pub until: u64,
    pub at_most: Duration,
}

/// How the last group went, for the next one's linger.
#[derive(Default)]
pub struct Pace {
    last_end: Option<Instant>,
    last_commit: Duration,
    /// Requests the last group answered.
    last_requests: u64,
    /// The arrivals counted just before it answered them.
    arrivals_at_answer: u64,
}

impl Pace {
    /// Notes a group answered: `requests` answers sent once `arrivals` had been counted, after
    /// a commit that took `commit` and ended at `end`.
    pub fn answered(&mut self, requests: u64, arrivals: u64, commit: Duration, end: Instant) {
        self.last_end = Some(end);
        self.last_commit = commit;
        self.last_requests = requests;
        self.arrivals_at_answer = arrivals;
    }

    /// Whether a group of `group` outcomes forming at `now` lingers, and how.
    pub fn linger(&self, now: Instant, group: usize) -> Option<Linger> {
        let recent = self
            .last_end
            .is_some_and(|end| now.duration_since(end) < UNDER_LOAD);
        (group < LINGER_BELOW && recent && self.last_requests > 0).then(|| Linger {
            until: self.arrivals_at_answer + self.last_requests,
            at_most: (self.last_commit / 2).min(LINGER_MAX),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_small_group_under_load_waits_for_the_answered_cohort_for_half_a_commit() {
        let now = Instant::now();
        let mut pace = Pace::default();
        assert_eq!(pace.linger(now, 3), None, "the first group");
        pace.answered(5, 40, Duration::from_micros(600), now);
        let linger = Linger {
            until: 45,
            at_most: Duration::from_micros(300),
        };
        assert_eq!(pace.linger(now, 3), Some(linger));
        assert_eq!(pace.linger(now, LINGER_BELOW), None, "a large group");
        assert_eq!(
            pace.linger(now + UNDER_LOAD, 3),
            None,
            "the last group ended a while ago"
        );
        pace.answered(5, 40, Duration::from_millis(30), now);
        assert_eq!(pace.linger(now, 3).unwrap().at_most, LINGER_MAX);
    }

    #[tokio::test]
    async fn a_wait_ends_when_the_arrivals_reach_the_target() {
        let arrivals = Arc::new(Arrivals::default());
        arrivals.arrived();
        let started = Instant::now();
        let sender = arrivals.clone();
        let senders = tokio::spawn(async move {
            for _ in 0..3 {
                tokio::task::yield_now().await;
                sender.arrived();
            }
        });
        // A bound far beyond what three yields take on any machine: the wait must end by the
        // third arrival, not by the bound.
        arrivals
            .wait_for(4, Duration::from_secs(60), &FineTimer::new())
            .await;
        senders.await.unwrap();
        assert_eq!(arrivals.count(), 4);
        assert!(started.elapsed() < Duration::from_secs(30));
    }

    #[tokio::test]
    async fn a_wait_ends_at_its_bound_when_too_few_arrive() {
        let (arrivals, timer) = (Arrivals::default(), FineTimer::new());
        // No request arrives: each wait lasts its whole bound (the timer never ends a sleep
        // early), the second too after the first ended by its bound.
        for bound in [Duration::from_micros(200), Duration::from_millis(2)] {
            let started = Instant::now();
            arrivals.wait_for(1, bound, &timer).await;
            assert!(started.elapsed() >= bound, "{bound:?}");
        }
        assert_eq!(arrivals.count(), 0);
    }
}
