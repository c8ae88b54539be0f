//! `doubler`: Doubler (Ailon, Karnin and Joachims 2014, Algorithm 2). Time is cut into epochs
//! of length 2, 4, 8, ...; during an epoch the left arm is drawn uniformly from a fixed multiset
//! `L` and the right arm is proposed by a single-armed UCB box, which gets reward 1 when the
//! right arm wins. At the end of an epoch `L` becomes the multiset of right arms of that epoch
//! and the box is reset. Because the left distribution is fixed within an epoch, the box plays a
//! stationary bandit whose best arm is the best arm overall (utility-based setting, Theorem 3.1:
//! regret of the box times an extra log factor).
//!
//! What joust does where the paper assumes each outcome follows its own selection:
//! - Epochs advance with outcomes, not selections: epoch i ends after 2^i outcomes have been
//!   applied (wins, and ties when ties count). `select` is read-only.
//! - `L` is kept as counts per arm. The first epoch has no previous right arms, so its left arm
//!   is uniform over the active arms (the paper's "arbitrary singleton" would favour one arm).
//! - Every outcome says which side won: the service keeps the duel's order in its token
//!   ([`crate::bandit::Outcome`]). The second (right) arm is credited to the box and recorded in the
//!   epoch's right multiset. An outcome of an earlier epoch's duel, arriving late, is credited
//!   to the current box: it is still a reply to a left arm drawn from a past `L`, which in the
//!   utility-based setting has the same best reply.
//! - A tie between two arms (only when ties count) gives the right arm reward 1/2. A self-duel
//!   (the box proposed the left arm) is reward 1/2 for that arm: the box reads the self-tie
//!   counts of the current epoch at selection.
//! - `belief`: the most frequent arm of `L` (what the previous epoch's right box settled on),
//!   or before the first epoch ends, the box's most pulled arm.
//! - An added arm gets a box entry with no pulls and a zero count in `L`; a retired arm is never
//!   proposed nor drawn as a left arm (left draws are restricted to active arms).

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::single_armed::{BoxRule, SingleArmed};
use crate::bandit::params::{Open, policy_params};
use crate::bandit::{Arm, BanditRng, Pair, Policy, View, Win};

policy_params! {
    /// Parameters of `doubler`.
    pub struct DoublerParams for Doubler {
        /// UCB index width `sqrt((alpha + 2) ln t / (2 n))`; 2 is Auer et al.'s UCB1.
        pub alpha: f64 = 2.0, Open(0.0, 100.0);
    }
}

/// Epochs stop doubling here so that 2^epoch fits comfortably in a u64.
const MAX_EPOCH: u32 = 62;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Doubler {
    /// The right arm's box, reset at each epoch.
    pub right_box: SingleArmed,
    /// Current epoch i (from 1); it lasts 2^i outcomes.
    pub epoch: u32,
    pub outcomes_in_epoch: u64,
    /// The left multiset `L`: right arms recorded in the previous epoch.
    pub left: Vec<u64>,
    /// Right arms recorded so far in this epoch.
    pub right: Vec<u64>,
    /// Self-tie counts per arm when this epoch began (the box hears of later ones only).
    pub self_duels_at_epoch_start: Vec<u32>,
}

impl Doubler {
    pub fn new(params: DoublerParams, k: usize, _rng: &mut BanditRng) -> Self {
        Doubler {
            right_box: SingleArmed::new(
                BoxRule::Ucb {
                    alpha: params.alpha,
                },
                k,
            ),
            epoch: 1,
            outcomes_in_epoch: 0,
            left: vec![0; k],
            right: vec![0; k],
            self_duels_at_epoch_start: vec![0; k],
        }
    }

    pub fn epoch_length(&self) -> u64 {
        1u64 << self.epoch.min(MAX_EPOCH)
    }

    fn draw_left<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Arm {
        let total: u64 = view.active_arms().map(|a| self.left[a]).sum();
        if total == 0 {
            let arms: Vec<Arm> = view.active_arms().collect();
            return arms[rng.random_range(0..arms.len())];
        }
        let mut u = rng.random_range(0..total);
        for a in view.active_arms() {
            if u < self.left[a] {
                return a;
            }
            u -= self.left[a];
        }
        unreachable!("u is below the total of the active counts")
    }

    /// Credits a duel's right arm with its reward (1 win, 0 loss, 1/2 tie).
    fn credit(&mut self, view: &View, right_arm: Arm, reward: f64) {
        self.right_box.record(right_arm, reward, view.active);
        self.right[right_arm] += 1;
        self.outcomes_in_epoch += 1;
        if self.outcomes_in_epoch >= self.epoch_length() {
            self.left = std::mem::replace(&mut self.right, vec![0; view.k()]);
            self.right_box.reset();
            self.outcomes_in_epoch = 0;
            self.epoch = (self.epoch + 1).min(MAX_EPOCH);
            self.self_duels_at_epoch_start = (0..view.k()).map(|a| view.wins.ties(a, a)).collect();
        }
    }
}

impl Policy for Doubler {
    fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Pair {
        let left = self.draw_left(view, rng);
        let self_duels = |a: Arm| {
            let start = self.self_duels_at_epoch_start.get(a).copied().unwrap_or(0);
            view.wins.ties(a, a).saturating_sub(start) as f64
        };
        let right = self.right_box.choose(view.active, self_duels, rng);
        Pair::new(left, right)
    }

    fn update<R: Rng + ?Sized>(&mut self, view: &View, win: Win, _rng: &mut R) {
        let reward = if win.winner_first { 0.0 } else { 1.0 };
        self.credit(view, win.duel().second, reward);
    }

    fn tie<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, _rng: &mut R) {
        if a != b {
            self.credit(view, b, 0.5);
        }
    }

    fn arm_added(&mut self, _view: &View, _arm: Arm) {
        self.right_box.add_arm();
        self.left.push(0);
        self.right.push(0);
        self.self_duels_at_epoch_start.push(0);
    }

    fn arm_retired(&mut self, _view: &View, _arm: Arm) {
        // Left draws and the box both range over active arms only.
    }

    fn belief(&self, view: &View) -> Option<Arm> {
        let score = |a: Arm| -> f64 {
            if self.epoch > 1 {
                self.left[a] as f64
            } else {
                self.right_box.pulls(a)
            }
        };
        crate::bandit::stats::argbest::highest_positive(view.active_arms(), score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::TieRule;
    use crate::bandit::testing::{Fresh, seeded};

    #[test]
    fn epochs_double_and_left_arms_come_from_the_previous_epoch() {
        let (mut d, mut rng) = seeded(DoublerParams::default(), 4, 1);
        let arms = Fresh::new(4);
        let view = arms.view(TieRule::Ignore);
        let mut lengths = Vec::new();
        let mut since = 0;
        for _ in 0..10_000 {
            if lengths.len() == 4 {
                break;
            }
            let epoch = d.epoch;
            let recorded_right = d.right.clone();
            let pair = d.select(&view, &mut rng);
            if pair.first == pair.second {
                // A self-duel is a tie, not an outcome: it does not count towards the epoch.
                continue;
            }
            d.update(&view, Win::of(pair, true), &mut rng);
            since += 1;
            if d.epoch != epoch {
                lengths.push(since);
                since = 0;
                // L is exactly the right arms recorded in the epoch that just ended.
                let mut expected = recorded_right;
                expected[pair.second] += 1;
                assert_eq!(d.left, expected);
                assert_eq!(d.right, vec![0; 4]);
                assert_eq!(d.right_box.total_pulls(), 0.0);
            }
        }
        assert_eq!(lengths, vec![2, 4, 8, 16]);
        // From now on every left arm is drawn from L.
        for _ in 0..200 {
            let pair = d.select(&view, &mut rng);
            assert!(d.left[pair.first] > 0, "{pair:?} {:?}", d.left);
        }
    }

    #[test]
    fn the_box_hears_of_the_second_arm_only() {
        let (mut d, mut rng) = seeded(DoublerParams::default(), 3, 2);
        let arms = Fresh::new(3);
        let view = arms.view(TieRule::HalfWin);
        d.epoch = 5;
        // (left 0, right 2), won by the right arm; then (left 2, right 0), won by the left arm.
        d.update(&view, Win::of(Pair::new(0, 2), false), &mut rng);
        d.update(&view, Win::of(Pair::new(2, 0), true), &mut rng);
        assert_eq!(d.right_box.mean(2), Some(1.0));
        assert_eq!(d.right_box.mean(0), Some(0.0));
        assert_eq!(d.right, vec![1, 0, 1]);
        d.tie(&view, 0, 1, &mut rng);
        assert_eq!(d.right_box.mean(1), Some(0.5));
        assert_eq!(d.right, vec![1, 1, 1]);
    }
}
