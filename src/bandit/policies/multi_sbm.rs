//! `multi_sbm`: MultiSBM (Ailon, Karnin and Joachims 2014, Algorithm 3). One single-armed UCB
//! box `S_x` per arm x. The left arm is the previous right arm; the right arm is proposed by
//! the left arm's box, which gets reward 1 when the right arm wins. The best arm's box learns
//! that the best arm is its best reply, so the best arm keeps coming back as the left arm, and
//! the regret is asymptotically that of one UCB (Theorem 4.2), provided the boxes are
//! alpha-robust: alpha = max(3, ln K / ln ln T), i.e. 3 for any realistic horizon, the default.
//!
//! What joust does where the paper assumes each outcome follows its own selection:
//! - The left arm is the right arm of the last outcome applied (the paper's rule, read with
//!   outcomes instead of selections), so under late feedback every selection until the next
//!   outcome has the same left arm. `window` > 1 draws the left arm uniformly from the right arms
//!   of the last `window` outcomes instead, which spreads the left arms but converges more
//!   slowly: on 1good:linear, window 16 had 2.5x the regret of the default 1 at 10^5 steps.
//!   Before any outcome, the left arm is uniform over active arms.
//! - Every outcome says which side won: the service keeps the duel's order in its token
//!   ([`crate::bandit::Outcome`]). The first (left) arm's box is credited with the second (right) arm,
//!   reward 1 if it won, and the right arm joins the window.
//! - A tie between two arms (only when ties count) gives reward 1/2. A self-duel of x can only
//!   come from `S_x` proposing x, so `S_x` reads the self-tie count of x as pulls of x with
//!   reward 1/2 (see [`super::single_armed`]).
//! - Boxes are created when their arm is first credited as a left arm, so memory grows with the
//!   arms that actually led duels, not with K^2 up front.
//! - `belief`: the arm played most often as the right arm (box pulls summed over all boxes,
//!   self-duels included), which is the best arm once the best arm's box dominates.
//! - Added arms join every box with no pulls; retired arms are never proposed nor drawn.

use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

use super::single_armed::{BoxRule, SingleArmed};
use crate::bandit::footprint::Footprint;
use crate::bandit::params::{Between, Open, policy_params};
use crate::bandit::{Arm, BanditRng, Pair, Policy, View, Win};

/// Largest accepted `window`.
pub const MAX_WINDOW: usize = 1 << 20;

policy_params! {
    /// Parameters of `multi_sbm`.
    pub struct MultiSbmParams for MultiSbm {
        /// UCB index width `sqrt((alpha + 2) ln t / (2 n))`; Theorem 4.2 needs alpha >= 3.
        pub alpha: f64 = 3.0, Open(0.0, 100.0);
        /// How many recent right arms the left arm is drawn from; 1 is the paper's rule.
        pub window: usize = 1, Between(1, MAX_WINDOW);
    }
    // A single-armed learner per left ranker, created on first use.
    memory(params, k) => Footprint::per_pair(24);
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MultiSbm {
    pub alpha: f64,
    pub window: usize,
    /// Number of arms, so that boxes created later cover all of them.
    pub k: usize,
    /// `S_x` by left arm x, created on first use.
    pub boxes: BTreeMap<Arm, SingleArmed>,
    /// Right arms of the most recent outcomes, oldest first.
    pub recent_right: VecDeque<Arm>,
}

impl MultiSbm {
    pub fn new(params: MultiSbmParams, k: usize, _rng: &mut BanditRng) -> Self {
        MultiSbm {
            alpha: params.alpha,
            window: params.window,
            k,
            boxes: BTreeMap::new(),
            recent_right: VecDeque::new(),
        }
    }

    fn draw_left<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Arm {
        let candidates: Vec<Arm> = self
            .recent_right
            .iter()
            .copied()
            .filter(|&a| view.is_active(a))
            .collect();
        if candidates.is_empty() {
            let arms: Vec<Arm> = view.active_arms().collect();
            return arms[rng.random_range(0..arms.len())];
        }
        candidates[rng.random_range(0..candidates.len())]
    }

    /// Credits the box of a duel's `left` arm with its `right` arm and the right arm's reward
    /// (1 win, 0 loss, 1/2 tie).
    fn credit(&mut self, view: &View, left: Arm, right: Arm, reward: f64) {
        let rule = BoxRule::Ucb { alpha: self.alpha };
        let k = self.k;
        self.boxes
            .entry(left)
            .or_insert_with(|| SingleArmed::new(rule, k))
            .record(right, reward, view.active);
        self.recent_right.push_back(right);
        while self.recent_right.len() > self.window {
            self.recent_right.pop_front();
        }
    }

    /// Times `arm` was the right arm: box feedback plus its self-duels.
    pub fn times_right(&self, view: &View, arm: Arm) -> f64 {
        let credited: f64 = self.boxes.values().map(|b| b.pulls(arm)).sum();
        credited + view.wins.ties(arm, arm) as f64
    }
}

impl Policy for MultiSbm {
    fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Pair {
        let left = self.draw_left(view, rng);
        let right = match self.boxes.get(&left) {
            Some(b) => {
                let self_duels = |a: Arm| {
                    if a == left {
                        view.wins.ties(a, a) as f64
                    } else {
                        0.0
                    }
                };
                b.choose(view.active, self_duels, rng)
            }
            // A box with no feedback proposes an untried arm: all are untried, so any one.
            None => {
                let arms: Vec<Arm> = view.active_arms().collect();
                arms[rng.random_range(0..arms.len())]
            }
        };
        Pair::new(left, right)
    }

    fn update<R: Rng + ?Sized>(&mut self, view: &View, win: Win, _rng: &mut R) {
        let duel = win.duel();
        let reward = if win.winner_first { 0.0 } else { 1.0 };
        self.credit(view, duel.first, duel.second, reward);
    }

    fn tie<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, _rng: &mut R) {
        if a != b {
            self.credit(view, a, b, 0.5);
        }
    }

    fn arm_added(&mut self, _view: &View, _arm: Arm) {
        self.k += 1;
        self.boxes.values_mut().for_each(SingleArmed::add_arm);
    }

    fn arm_retired(&mut self, _view: &View, _arm: Arm) {
        // Left draws and the boxes both range over active arms only.
    }

    fn belief(&self, view: &View) -> Option<Arm> {
        crate::bandit::stats::argbest::highest_positive(view.active_arms(), |a| {
            self.times_right(view, a)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::TieRule;
    use crate::bandit::params::PolicyParams;
    use crate::bandit::testing::{Fresh, seeded};
    use rand::SeedableRng;

    #[test]
    fn left_arm_is_a_previous_right_arm_and_its_box_is_credited() {
        let (mut m, mut rng) = seeded(MultiSbmParams::default(), 5, 1);
        let arms = Fresh::new(5);
        let view = arms.view(TieRule::Ignore);
        let mut last_right = None;
        for _ in 0..300 {
            let pair = m.select(&view, &mut rng);
            if let Some(r) = last_right {
                // The paper's rule: x_t = y_{t-1}.
                assert_eq!(pair.first, r);
            }
            if pair.first == pair.second {
                continue;
            }
            let before = m
                .boxes
                .get(&pair.first)
                .map_or(0.0, |b| b.pulls(pair.second));
            m.update(&view, Win::of(pair, false), &mut rng);
            assert_eq!(m.recent_right.back(), Some(&pair.second));
            assert_eq!(m.boxes[&pair.first].pulls(pair.second), before + 1.0);
            last_right = Some(pair.second);
        }
    }

    #[test]
    fn window_is_bounded_and_params_are_checked() {
        let mut rng = BanditRng::seed_from_u64(2);
        let arms = Fresh::new(3);
        let view = arms.view(TieRule::HalfWin);
        let params = MultiSbmParams {
            window: 16,
            ..MultiSbmParams::default()
        };
        let mut m = MultiSbm::new(params, 3, &mut rng);
        for _ in 0..100 {
            m.update(&view, Win::of(Pair::new(0, 1), true), &mut rng);
            m.tie(&view, 1, 2, &mut rng);
        }
        assert_eq!(m.recent_right.len(), 16);
        let bad = MultiSbmParams {
            window: 0,
            ..MultiSbmParams::default()
        };
        assert!(bad.validate(3).unwrap_err().contains("window"));
        let bad = MultiSbmParams {
            alpha: -1.0,
            ..MultiSbmParams::default()
        };
        assert!(bad.validate(3).unwrap_err().contains("alpha"));
    }
}
