//! `interleaved_filter`: Interleaved Filter (Yue, Broder, Kleinberg and Joachims, "The K-armed
//! dueling bandits problem"; summarised in the cs159 slides). Explore, then exploit.
//!
//! Explore: an incumbent `b̂` (drawn at random) plays matches against every remaining candidate
//! `b ∈ W` at once. For each pair it keeps `P̂ = P̂(b̂ beats b)` over `t` comparisons and the
//! interval `P̂ ± c_t`, `c_t = sqrt(4 ln(1/δ) / t)`, `δ = 1/(T K²)`.
//! - A candidate with `P̂ - c_t > 1/2` (worse than the incumbent with confidence) leaves `W`.
//! - A candidate `b'` with `P̂ + c_t < 1/2` (better with confidence) becomes the incumbent; first
//!   every candidate that lost more often than it won against the old incumbent (`P̂ > 1/2`) is
//!   pruned, then `b'` leaves `W` and new matches start.
//!
//! Exploit: once `W` is empty, `select` returns `(b̂, b̂)`.
//!
//! What joust does where the paper assumes a synchronous round (one duel per candidate, results
//! before the next round):
//! - The tally of a match is the shared win matrix's count for the pair (incumbent, candidate),
//!   so an outcome that arrives late, out of order or in a batch still counts. IF never compares
//!   two candidates and never brings back an old incumbent, so a new match starts from the counts
//!   of a pair IF has not compared: the paper's "reset the running tally" is implicit. (Counts
//!   that exist anyway, e.g. after an exploration re-opens, are i.i.d. comparisons of the same
//!   pair and only sharpen the interval.)
//! - `select` draws the candidate uniformly from `W`, not in the paper's round-robin order: a
//!   round-robin (or "fewest comparisons first") rule would have to know what was selected since
//!   the last outcome, which `select(&self)` cannot; a uniform draw gives every candidate the same
//!   expected number of comparisons whatever the delay, which is what the pruning step relies on.
//! - The checks run after every outcome between the incumbent and a candidate rather than after a
//!   full round. Only that pair's interval changed, so this is the paper's test applied as soon as
//!   its result can change. If several candidates could be promoted at once the first in index
//!   order is (the paper allows any).
//!
//! Details fixed here:
//! - `K` in `δ` is the number of arms ever added (`view.k()`), so retiring arms never loosens δ.
//! - The horizon only sets `δ`; joust keeps exploiting past `T` (an experiment runs until it is
//!   stopped).
//! - Ties (when the experiment counts them as half a win) are evidence like wins: `tie` runs the
//!   same checks as `update`.
//! - `arm_added`: the new arm joins `W`. If exploration had finished, it re-opens with `W` = {the
//!   new arm}: the chosen arm must beat the newcomer with confidence to stay.
//! - `arm_retired`: a retired candidate leaves `W`. A retired incumbent is replaced by the
//!   candidate with the best empirical record against it (lowest index on equal records); if `W`
//!   was already empty, exploration restarts over all active arms from the arm with the best mean
//!   empirical preference.

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::bandit::params::{Horizon, policy_params};
use crate::bandit::{Arm, BanditRng, Pair, Policy, View, Win};

/// Horizon assumed when none is given: long enough for the experiments joust runs, and `δ`
/// depends on it only through `ln T`.
pub const DEFAULT_HORIZON: u64 = 1_000_000;

policy_params! {
    /// Parameters of `interleaved_filter`.
    pub struct InterleavedFilterParams for InterleavedFilter {
        /// The horizon `T` (number of duels the experiment is expected to run); `δ = 1/(T K²)`.
        /// The paper's guarantee needs T >= K.
        pub horizon: u64 = DEFAULT_HORIZON, Horizon;
    }
}

/// Where a candidate stands against the incumbent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The incumbent beats it with confidence: `P̂ - c_t > 1/2`.
    Worse,
    /// It beats the incumbent with confidence: `P̂ + c_t < 1/2`.
    Better,
    /// 1/2 is still inside the interval (or there is no comparison yet).
    Open,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterleavedFilter {
    horizon: u64,
    incumbent: Arm,
    /// `W`: the candidates still to be decided, in index order.
    candidates: Vec<Arm>,
}

/// `ln(1/δ)` with `δ = 1/(T K²)`.
pub fn log_inv_delta(horizon: u64, k: usize) -> f64 {
    (horizon as f64).ln() + 2.0 * (k.max(2) as f64).ln()
}

/// The half-width `c_t = sqrt(4 ln(1/δ) / t)` of the interval after `t` comparisons.
pub fn radius(t: f64, log_inv_delta: f64) -> f64 {
    (4.0 * log_inv_delta / t).sqrt()
}

impl InterleavedFilter {
    pub fn new(params: InterleavedFilterParams, k: usize, rng: &mut BanditRng) -> Self {
        let incumbent = rng.random_range(0..k);
        InterleavedFilter {
            horizon: params.horizon,
            incumbent,
            candidates: (0..k).filter(|&a| a != incumbent).collect(),
        }
    }

    /// The incumbent `b̂`.
    pub fn incumbent(&self) -> Arm {
        self.incumbent
    }

    /// The candidates `W` still to be decided.
    pub fn candidates(&self) -> &[Arm] {
        &self.candidates
    }

    /// Whether exploration has finished (IF then only plays `(b̂, b̂)`).
    pub fn exploring(&self) -> bool {
        !self.candidates.is_empty()
    }

    /// `P̂(incumbent beats candidate)`, or `None` without comparisons.
    fn p_hat(view: &View, incumbent: Arm, candidate: Arm) -> Option<f64> {
        let n = view.count(incumbent, candidate);
        (n > 0.0).then(|| view.score(incumbent, candidate) / n)
    }

    /// The confidence verdict on `candidate` against `incumbent`.
    pub fn verdict(&self, view: &View, incumbent: Arm, candidate: Arm) -> Verdict {
        let n = view.count(incumbent, candidate);
        let Some(p) = Self::p_hat(view, incumbent, candidate) else {
            return Verdict::Open;
        };
        let c = radius(n, log_inv_delta(self.horizon, view.k()));
        if p - c > 0.5 {
            Verdict::Worse
        } else if p + c < 0.5 {
            Verdict::Better
        } else {
            Verdict::Open
        }
    }

    /// Applies the paper's removal and promotion rules until nothing changes.
    fn settle(&mut self, view: &View) {
        loop {
            let inc = self.incumbent;
            let verdicts: Vec<Verdict> = self
                .candidates
                .iter()
                .map(|&b| self.verdict(view, inc, b))
                .collect();
            let promoted = self
                .candidates
                .iter()
                .zip(&verdicts)
                .find(|(_, v)| **v == Verdict::Better)
                .map(|(b, _)| *b);
            match promoted {
                None => {
                    let mut keep = verdicts.iter().map(|v| *v != Verdict::Worse);
                    self.candidates.retain(|_| keep.next().unwrap());
                    return;
                }
                Some(winner) => {
                    // Pruning: drop every candidate that lost more often than it won against the
                    // old incumbent (this includes those worse with confidence), then promote.
                    self.candidates.retain(|&b| {
                        b != winner && Self::p_hat(view, inc, b).is_none_or(|p| p <= 0.5)
                    });
                    self.incumbent = winner;
                    // The new incumbent's pairs may already hold counts: check them at once.
                }
            }
        }
    }

    /// The outcome of a duel between `a` and `b` (either order) arrived.
    fn learn(&mut self, view: &View, a: Arm, b: Arm) {
        let other = if a == self.incumbent {
            b
        } else if b == self.incumbent {
            a
        } else {
            // A late outcome of an earlier match: it stays in the win matrix, the current
            // matches do not involve it.
            return;
        };
        if !self.candidates.contains(&other) {
            return;
        }
        // Only this pair's interval moved, so only its verdict can have changed: a removal
        // touches nobody else, and a promotion goes through the full rules.
        match self.verdict(view, self.incumbent, other) {
            Verdict::Open => {}
            Verdict::Worse => self.candidates.retain(|&b| b != other),
            Verdict::Better => self.settle(view),
        }
    }

    /// Mean empirical preference of `arm` over the other arms in `pool` (1/2 for unseen pairs).
    fn mean_preference(view: &View, arm: Arm, pool: &[Arm]) -> f64 {
        let others = pool.iter().filter(|&&j| j != arm);
        let (sum, n) = others.fold((0.0, 0usize), |(s, n), &j| {
            let c = view.count(arm, j);
            let p = if c > 0.0 { view.score(arm, j) / c } else { 0.5 };
            (s + p, n + 1)
        });
        if n == 0 { 0.5 } else { sum / n as f64 }
    }
}

impl Policy for InterleavedFilter {
    fn select<R: Rng + ?Sized>(&self, _view: &View, rng: &mut R) -> Pair {
        if self.candidates.is_empty() {
            return Pair::new(self.incumbent, self.incumbent);
        }
        let b = self.candidates[rng.random_range(0..self.candidates.len())];
        Pair::new(self.incumbent, b)
    }

    fn update<R: Rng + ?Sized>(&mut self, view: &View, win: Win, _rng: &mut R) {
        let Win { winner, loser, .. } = win;
        self.learn(view, winner, loser);
    }

    /// A tie counts as half a win for each side, so it moves the match's estimate like a win.
    fn tie<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, _rng: &mut R) {
        self.learn(view, a, b);
    }

    fn arm_added(&mut self, view: &View, arm: Arm) {
        self.candidates.push(arm);
        self.candidates.sort_unstable();
        self.settle(view);
    }

    fn arm_retired(&mut self, view: &View, arm: Arm) {
        self.candidates.retain(|&b| b != arm);
        if arm != self.incumbent {
            return;
        }
        if self.candidates.is_empty() {
            // Exploration had finished on the arm now retired: start again over all active arms.
            let pool: Vec<Arm> = view.active_arms().collect();
            let best = pool
                .iter()
                .copied()
                .fold(None, |best: Option<(Arm, f64)>, a| {
                    let m = Self::mean_preference(view, a, &pool);
                    match best {
                        Some((_, bm)) if bm >= m => best,
                        _ => Some((a, m)),
                    }
                })
                .map(|(a, _)| a)
                .expect("at least two arms stay active");
            self.incumbent = best;
            self.candidates = pool.into_iter().filter(|&a| a != best).collect();
        } else {
            // The candidate that did best against the retired incumbent takes its place.
            let old = arm;
            let p_beat = |b: Arm| Self::p_hat(view, b, old).unwrap_or(0.5);
            let mut best = self.candidates[0];
            for &b in &self.candidates[1..] {
                if p_beat(b) > p_beat(best) {
                    best = b;
                }
            }
            self.incumbent = best;
            self.candidates.retain(|&b| b != best);
        }
        self.settle(view);
    }

    /// The incumbent and the candidates still to be decided.
    fn contenders(&self, _view: &View) -> Option<Vec<Arm>> {
        let mut arms = self.candidates.clone();
        arms.push(self.incumbent);
        arms.sort_unstable();
        Some(arms)
    }

    /// The incumbent: IF's best arm so far.
    fn belief(&self, _view: &View) -> Option<Arm> {
        Some(self.incumbent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::WinMatrix;
    use crate::bandit::params::PolicyParams;
    use crate::bandit::testing::view_of;
    use rand::SeedableRng;

    fn policy(incumbent: Arm, candidates: Vec<Arm>) -> InterleavedFilter {
        InterleavedFilter {
            horizon: 1000,
            incumbent,
            candidates,
        }
    }

    // With T = 1000 and K = 5: ln(1/δ) = ln(1000 · 25) = 10.127, so after t = 400 comparisons
    // c_t = sqrt(4 · 10.127 / 400) = 0.318. "Worse with confidence" needs P̂ > 0.818 and "better
    // with confidence" needs P̂ < 0.182.

    #[test]
    fn radius_matches_the_slides_formula() {
        let l = log_inv_delta(1000, 5);
        assert!((l - (25_000f64).ln()).abs() < 1e-12);
        assert!((radius(400.0, l) - 0.3182).abs() < 1e-3);
    }

    #[test]
    fn removes_exactly_the_candidates_worse_within_their_interval() {
        let mut w = WinMatrix::new(5);
        w.add_wins(0, 1, 340); // P̂ = 0.85 > 0.818: worse with confidence
        w.add_wins(1, 0, 60);
        w.add_wins(0, 2, 320); // P̂ = 0.80: worse, but not with confidence
        w.add_wins(2, 0, 80);
        w.add_wins(0, 3, 100); // P̂ = 0.25: better, but not with confidence
        w.add_wins(3, 0, 300);
        // Arm 4: no comparison yet.
        let active = [true; 5];
        let view = view_of(&w, &active);
        let mut p = policy(0, vec![1, 2, 3, 4]);
        assert_eq!(p.verdict(&view, 0, 1), Verdict::Worse);
        p.settle(&view);
        assert_eq!(p.incumbent(), 0);
        assert_eq!(p.candidates(), &[2, 3, 4]);
    }

    #[test]
    fn promotes_a_confident_winner_after_pruning_the_empirical_losers() {
        let mut w = WinMatrix::new(5);
        w.add_wins(1, 0, 340); // P̂(0 beats 1) = 0.15 < 0.182: 1 is better with confidence
        w.add_wins(0, 1, 60);
        w.add_wins(0, 2, 210); // P̂ = 0.525: lost more often than it won -> pruned
        w.add_wins(2, 0, 190);
        w.add_wins(0, 3, 190); // P̂ = 0.475: kept
        w.add_wins(3, 0, 210);
        w.add_wins(0, 4, 200); // P̂ = 0.5 exactly: did not lose more often, kept
        w.add_wins(4, 0, 200);
        let active = [true; 5];
        let view = view_of(&w, &active);
        let mut p = policy(0, vec![1, 2, 3, 4]);
        p.settle(&view);
        assert_eq!(p.incumbent(), 1);
        assert_eq!(p.candidates(), &[3, 4]);
    }

    #[test]
    fn exploits_its_incumbent_once_no_candidate_is_left() {
        let w = WinMatrix::new(3);
        let active = [true; 3];
        let p = policy(2, vec![]);
        let mut rng = BanditRng::seed_from_u64(1);
        assert_eq!(p.select(&view_of(&w, &active), &mut rng), Pair::new(2, 2));
        assert_eq!(p.belief(&view_of(&w, &active)), Some(2));
        assert_eq!(p.contenders(&view_of(&w, &active)), Some(vec![2]));
    }

    #[test]
    fn an_added_arm_reopens_a_finished_exploration() {
        let mut w = WinMatrix::new(3);
        let mut active = vec![true; 3];
        let mut p = policy(2, vec![]);
        let arm = w.add_arm();
        active.push(true);
        p.arm_added(&view_of(&w, &active), arm);
        assert_eq!(p.candidates(), &[3]);
        assert!(p.exploring());
    }

    #[test]
    fn a_retired_incumbent_is_replaced_by_its_best_challenger() {
        let mut w = WinMatrix::new(4);
        w.add_wins(2, 0, 30);
        w.add_wins(0, 2, 10);
        w.add_wins(1, 0, 20);
        w.add_wins(0, 1, 20);
        let mut active = vec![true; 4];
        let mut p = policy(0, vec![1, 2, 3]);
        active[0] = false;
        p.arm_retired(&view_of(&w, &active), 0);
        assert_eq!(p.incumbent(), 2);
        assert_eq!(p.candidates(), &[1, 3]);
    }

    #[test]
    fn horizon_below_the_number_of_arms_is_refused() {
        let err = InterleavedFilterParams { horizon: 5 }
            .validate(10)
            .unwrap_err();
        assert!(err.contains("horizon"), "{err}");
        assert!(InterleavedFilterParams::default().validate(136).is_ok());
    }
}
