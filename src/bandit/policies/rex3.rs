//! `rex3`: Relative Exponential-weight algorithm for Exploration and Exploitation, REX3 (Gajane,
//! Urvoy and Clérot, ICML 2015; summarised in li-2020's related work). Designed for adversarial
//! utility-based dueling bandits; regret O(sqrt(K ln K · T)).
//!
//! One weight per arm. Each step draws both arms independently from
//! `p_i = (1 - γ) w_i / Σ_j w_j + γ / K` (they may coincide: that duel carries no information and
//! costs no regret if the arm is the best). With `ψ = +1` when the first arm wins and `-1` when it
//! loses, the relative reward of arm `i` is estimated without bias by
//! `ĝ_i = ψ/2 · (1[i = a]/p_a - 1[i = b]/p_b)` (`E[ĝ_i] = Σ_j p_j (2 P(i beats j) - 1)`), and
//! `w_i ← w_i · exp(γ ĝ_i / K)`: the winner's weight grows by `exp(γ / (2 K p_winner))`, the
//! loser's shrinks by `exp(-γ / (2 K p_loser))`.
//!
//! Details fixed here:
//! - The texts in this repository only name REX3; the sampling rule, the estimate `ĝ` and the
//!   update are those of Gajane et al.'s algorithm as published.
//! - Weights are kept as logarithms, shifted so that the largest is 0 after every update: raw
//!   exponential weights overflow on long runs.
//! - `γ` defaults to the EXP3-style tuning `min(1/2, sqrt(K ln K / ((e - 1) T)))` for the horizon
//!   `T` (default 10^6); it can be given directly.
//! - `K` is the number of active arms; retired arms get probability 0.
//! - With delayed feedback the probabilities in the estimate are those at the time the outcome
//!   arrives, not those at selection (an outcome does not carry them). Each update changes a
//!   log-weight by at most `γ / (2 K p_min) <= 1/2`, and usually by far less, so over a delay of
//!   `d` outcomes the probabilities drift little and the estimate stays close to unbiased.
//! - A tie is half a win for each side: `ψ = 0`, so it changes nothing.
//! - `arm_added`: the new arm starts with the largest current weight (optimistic, so a new ranker
//!   is tried at once). `arm_retired`: its weight is dropped from the distribution.
//! - Belief: the arm with the largest weight (lowest index on equal weights). REX3 eliminates
//!   nothing, so it reports no contenders.

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::bandit::params::{AtLeast, Open, Optional, policy_params};
use crate::bandit::{Arm, BanditRng, Pair, Policy, View, Win};

/// Horizon used to tune `γ` when neither is given.
pub const DEFAULT_HORIZON: u64 = 1_000_000;

policy_params! {
    /// Parameters of `rex3`.
    pub struct Rex3Params for Rex3 {
        /// Horizon `T` used to tune `γ` when it is not given.
        pub horizon: u64 = DEFAULT_HORIZON, AtLeast(1);
        /// Exploration rate `γ ∈ (0, 1/2]`; derived from `horizon` when absent.
        pub gamma: Option<f64> = None, Optional(Open(0.0, 0.5));
    }
}

impl Rex3Params {
    /// `γ`, given or tuned for `k` arms and the horizon.
    pub fn gamma_for(&self, k: usize) -> f64 {
        self.gamma.unwrap_or_else(|| {
            let k = k.max(2) as f64;
            let t = self.horizon.max(1) as f64;
            (k * k.ln() / ((std::f64::consts::E - 1.0) * t))
                .sqrt()
                .min(0.5)
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rex3 {
    gamma: f64,
    /// `ln w_i` by arm, the largest shifted to 0.
    log_weights: Vec<f64>,
    /// The sampling distribution `p` by arm (0 for retired arms), refreshed by every change.
    probs: Vec<f64>,
}

impl Rex3 {
    pub fn new(params: Rex3Params, k: usize, _rng: &mut BanditRng) -> Self {
        Rex3 {
            gamma: params.gamma_for(k),
            log_weights: vec![0.0; k],
            probs: vec![1.0 / k as f64; k],
        }
    }

    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// `ln w_arm`, relative to the largest weight.
    pub fn log_weight(&self, arm: Arm) -> f64 {
        self.log_weights[arm]
    }

    /// The probability that `select` draws `arm` as either side of the duel.
    pub fn probability(&self, arm: Arm) -> f64 {
        self.probs[arm]
    }

    /// Recomputes `p` from the log-weights of the active arms (a softmax shifted by its maximum,
    /// so no exponential overflows).
    fn refresh(&mut self, view: &View) {
        self.log_weights.resize(view.k(), 0.0);
        self.probs.resize(view.k(), 0.0);
        let top = view
            .active_arms()
            .map(|a| self.log_weights[a])
            .fold(f64::NEG_INFINITY, f64::max);
        for a in view.active_arms() {
            self.log_weights[a] -= top;
        }
        let total: f64 = view.active_arms().map(|a| self.log_weights[a].exp()).sum();
        let k = view.active_arms().count() as f64;
        for (a, p) in self.probs.iter_mut().enumerate() {
            *p = if view.is_active(a) {
                (1.0 - self.gamma) * self.log_weights[a].exp() / total + self.gamma / k
            } else {
                0.0
            };
        }
    }

    fn draw<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Arm {
        let mut u: f64 = rng.random::<f64>();
        let mut last = None;
        for a in view.active_arms() {
            let p = self.probs[a];
            if u < p {
                return a;
            }
            u -= p;
            last = Some(a);
        }
        // Rounding left a sliver of mass past the last arm.
        last.expect("an experiment has active arms")
    }
}

impl Policy for Rex3 {
    fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Pair {
        Pair::new(self.draw(view, rng), self.draw(view, rng))
    }

    fn update<R: Rng + ?Sized>(&mut self, view: &View, win: Win, _rng: &mut R) {
        let Win { winner, loser, .. } = win;
        let k = view.active_arms().count() as f64;
        let rate = self.gamma / k;
        self.log_weights[winner] += rate / (2.0 * self.probs[winner]);
        self.log_weights[loser] -= rate / (2.0 * self.probs[loser]);
        self.refresh(view);
    }

    // `tie`: the default (nothing): a tie is ψ = 0.

    fn arm_added(&mut self, view: &View, arm: Arm) {
        self.log_weights.resize(view.k(), 0.0);
        // The largest log-weight is 0 after every refresh.
        self.log_weights[arm] = 0.0;
        self.refresh(view);
    }

    fn arm_retired(&mut self, view: &View, _arm: Arm) {
        self.refresh(view);
    }

    /// The arm with the largest weight.
    fn belief(&self, view: &View) -> Option<Arm> {
        view.active_arms().fold(None, |best, a| match best {
            Some(b) if self.log_weights[b] >= self.log_weights[a] => Some(b),
            _ => Some(a),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::params::PolicyParams;
    use crate::bandit::testing::{Fresh, view_of};
    use crate::bandit::{TieRule, WinMatrix};
    use rand::SeedableRng;

    #[test]
    fn default_gamma_follows_the_exp3_tuning() {
        let p = Rex3Params::default();
        let expected = (6.0 * 6f64.ln() / ((std::f64::consts::E - 1.0) * 1e6)).sqrt();
        assert!((p.gamma_for(6) - expected).abs() < 1e-15);
        let short = Rex3Params {
            gamma: None,
            horizon: 1,
        };
        assert_eq!(short.gamma_for(6), 0.5);
        let bad = Rex3Params {
            gamma: Some(0.6),
            ..Default::default()
        };
        assert!(bad.validate(6).unwrap_err().contains("gamma"));
    }

    #[test]
    fn a_win_moves_both_weights_by_the_importance_weighted_reward() {
        let arms = Fresh::new(4);
        let view = arms.view(TieRule::Ignore);
        let params = Rex3Params {
            gamma: Some(0.4),
            horizon: 1000,
        };
        let mut p = Rex3::new(params, 4, &mut BanditRng::seed_from_u64(0));
        p.refresh(&view);
        assert!((p.probability(0) - 0.25).abs() < 1e-12);
        p.update(
            &view,
            Win::of(Pair::new(0, 1), true),
            &mut BanditRng::seed_from_u64(0),
        );
        // Winner: +γ/(2 K p) = 0.4 / (2 · 4 · 0.25) = 0.2; loser: -0.2; shifted so the max is 0.
        assert!((p.log_weight(0) - 0.0).abs() < 1e-12);
        assert!((p.log_weight(1) + 0.4).abs() < 1e-12);
        assert!((p.log_weight(2) + 0.2).abs() < 1e-12);
        assert_eq!(p.belief(&view), Some(0));
        let total: f64 = (0..4).map(|a| p.probability(a)).sum();
        assert!((total - 1.0).abs() < 1e-12);
    }

    #[test]
    fn log_weights_stay_finite_on_a_long_one_sided_run() {
        let arms = Fresh::new(3);
        let view = arms.view(TieRule::Ignore);
        let params = Rex3Params {
            gamma: Some(0.5),
            horizon: 1000,
        };
        let mut p = Rex3::new(params, 3, &mut BanditRng::seed_from_u64(0));
        let mut rng = BanditRng::seed_from_u64(1);
        // Raw weights would reach exp(10^5 · 0.08) and overflow long before the end.
        for _ in 0..100_000 {
            p.update(&view, Win::of(Pair::new(0, 1), true), &mut rng);
            p.update(&view, Win::of(Pair::new(0, 2), true), &mut rng);
        }
        assert!((0..3).all(|a| p.log_weight(a).is_finite() && p.probability(a).is_finite()));
        // The losers keep their exploration floor γ / K.
        assert!((p.probability(1) - 0.5 / 3.0).abs() < 1e-9);
        assert!(serde_json::to_string(&p).is_ok());
    }

    #[test]
    fn retired_arms_are_never_drawn() {
        let w = WinMatrix::new(3);
        let mut active = vec![true; 3];
        let mut p = Rex3::new(Rex3Params::default(), 3, &mut BanditRng::seed_from_u64(0));
        active[1] = false;
        p.arm_retired(&view_of(&w, &active), 1);
        let mut rng = BanditRng::seed_from_u64(2);
        for _ in 0..1000 {
            let pair = p.select(&view_of(&w, &active), &mut rng);
            assert!(pair.first != 1 && pair.second != 1);
        }
    }
}
