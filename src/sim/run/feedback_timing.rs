//! How outcomes reach the bandit: at once (the papers' setting), or late and in groups, as in the
//! service, where outcomes arrive when users have clicked and are applied in batched transactions.

use std::collections::VecDeque;

use super::environment::Outcome;
use crate::bandit::Pair;

/// Delay and batching of feedback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedbackTiming {
    /// An outcome becomes available this many steps after its duel was selected.
    pub delay: u64,
    /// Available outcomes are applied in groups of this size (1 = as soon as available).
    pub batch: usize,
}

impl FeedbackTiming {
    pub const IMMEDIATE: FeedbackTiming = FeedbackTiming { delay: 0, batch: 1 };

    pub fn is_immediate(&self) -> bool {
        self.delay == 0 && self.batch <= 1
    }
}

/// Outcomes waiting to be applied. Its buffers are sized once (delay + batch outcomes at most are
/// ever held), so the simulation loop does not allocate per step. An item is a duel's pair and
/// outcome unless said otherwise (the tests also queue a multileaved query's set and outcomes).
#[derive(Debug)]
pub struct FeedbackQueue<T = (Pair, Outcome)> {
    feedback: FeedbackTiming,
    pending: VecDeque<(u64, T)>,
    ready: Vec<T>,
}

impl<T> FeedbackQueue<T> {
    pub fn new(feedback: FeedbackTiming) -> Self {
        let batch = feedback.batch.max(1);
        FeedbackQueue {
            feedback: FeedbackTiming { batch, ..feedback },
            pending: VecDeque::with_capacity(feedback.delay as usize + 1),
            ready: Vec::with_capacity(batch),
        }
    }

    /// Adds the feedback of the duel selected at `step`: due `delay` steps later.
    #[inline]
    pub fn send(&mut self, step: u64, item: T) {
        self.pending.push_back((step + self.feedback.delay, item));
    }

    /// Hands every item that is due at `step`, in groups of `batch`, to `apply`, oldest first.
    #[inline]
    pub fn deliver<F: FnMut(T)>(&mut self, step: u64, mut apply: F) {
        while self.pending.front().is_some_and(|&(due, _)| due <= step) {
            let (_, item) = self.pending.pop_front().expect("a front item");
            self.ready.push(item);
            if self.ready.len() >= self.feedback.batch {
                for item in self.ready.drain(..) {
                    apply(item);
                }
            }
        }
    }

    /// Outcomes selected but not applied yet.
    pub fn waiting(&self) -> usize {
        self.pending.len() + self.ready.len()
    }
}

impl FeedbackQueue {
    /// Adds the outcome of the duel selected at `step`, then hands every outcome that is due, in
    /// groups of `batch`, to `apply`, oldest first.
    #[inline]
    pub fn push<F: FnMut(Pair, Outcome)>(
        &mut self,
        step: u64,
        pair: Pair,
        outcome: Outcome,
        mut apply: F,
    ) {
        self.send(step, (pair, outcome));
        self.deliver(step, |(pair, outcome)| apply(pair, outcome));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_arrive_after_the_delay_in_batches() {
        let mut q = FeedbackQueue::new(FeedbackTiming { delay: 3, batch: 2 });
        let mut applied: Vec<(u64, usize)> = Vec::new();
        for step in 0..20u64 {
            let pair = Pair::new(step as usize, 0);
            q.push(step, pair, Outcome::FirstWins, |p, _| {
                applied.push((step, p.first))
            });
            // Nothing applied before its due step; at most delay + batch outcomes waiting.
            assert!(applied.iter().all(|&(at, sel)| at >= sel as u64 + 3));
            assert!(q.waiting() <= 3 + 2);
        }
        // Applied in selection order, two at a time.
        let order: Vec<usize> = applied.iter().map(|a| a.1).collect();
        assert_eq!(order, (0..order.len()).collect::<Vec<_>>());
        assert_eq!(applied.len() % 2, 0);
        assert!(applied.len() >= 16);
    }

    #[test]
    fn immediate_feedback_applies_at_once() {
        let mut q = FeedbackQueue::new(FeedbackTiming::IMMEDIATE);
        let mut n = 0;
        q.push(0, Pair::new(0, 1), Outcome::Tie, |_, _| n += 1);
        assert_eq!(n, 1);
        assert_eq!(q.waiting(), 0);
    }
}
