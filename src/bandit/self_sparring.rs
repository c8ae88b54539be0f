//! `self_sparring`: Self-Sparring (Sui et al. 2017, as li-2020 describes it). One Beta posterior
//! per arm over "the probability that this arm wins a duel", with wins and losses both starting
//! at one (a Beta(1, 1) prior). Each step draws one sample per active arm twice, independently,
//! and duels the two argmaxes: Thompson sampling played against itself. The two draws may pick the
//! same arm; once the posteriors concentrate that is the best arm compared with itself.
//!
//! What joust does with real feedback:
//! - `select` only samples; every count changes in `update`, so late, batched and out-of-order
//!   outcomes are simply added when they arrive, and lost ones are never counted. No side is
//!   needed: the winner's Beta gets a win and the loser's a loss.
//! - A tie between two arms (only when ties count as half a win) adds half a win and half a loss
//!   to each. A self-duel has no winner and reaches the policy only through the win matrix's
//!   self-tie counts; in Sui et al. it is a fair coin, so each counts as half a win and half a
//!   loss, read from those counts at selection. Ignoring them would freeze the posteriors once
//!   both draws keep picking one arm: if that arm is not the best, its inflated mean would
//!   never come down and the best arm would never be drawn against it again.
//! - `belief` is the arm Thompson sampling settled on: the active arm that took part in the most
//!   duels (outcomes plus self-duels), lowest index among equals. The reference code's "first
//!   arm with mean above 1/2" is not the best arm, and neither is the highest posterior mean: the
//!   best arm's mean is its win rate against close rivals it keeps meeting, while an arm drawn a
//!   few times early can hold a high mean from wins against weak arms.
//! - An added arm starts at Beta(1, 1); a retired arm is never drawn.
//!
//! More than two rankers per query (multileaving): see [`super::self_sparring_set`].

use rand::Rng;
use rand_distr::{Beta, Distribution};
use serde::{Deserialize, Serialize};

use super::spec::PolicyParams;
use super::{Arm, BanditRng, Pair, Policy, View, Win};

/// Self-Sparring has no parameters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelfSparringParams {}

impl PolicyParams for SelfSparringParams {
    fn validate(&self, _k: usize) -> Result<(), String> {
        Ok(())
    }
}

/// Posterior counts per arm, prior included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfSparring {
    pub wins: Vec<f64>,
    pub losses: Vec<f64>,
}

impl SelfSparring {
    pub fn new(_params: SelfSparringParams, k: usize, _rng: &mut BanditRng) -> Self {
        SelfSparring {
            wins: vec![1.0; k],
            losses: vec![1.0; k],
        }
    }

    /// The active arm with the largest draw from its Beta posterior.
    fn thompson_draw<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Arm {
        let mut best = None;
        let mut best_draw = f64::NEG_INFINITY;
        for a in view.active_arms() {
            let half_self_duels = 0.5 * view.wins.ties(a, a) as f64;
            let draw = Beta::new(
                self.wins[a] + half_self_duels,
                self.losses[a] + half_self_duels,
            )
            .expect("posterior counts are at least 1")
            .sample(rng);
            if draw > best_draw {
                best_draw = draw;
                best = Some(a);
            }
        }
        best.expect("at least one arm is active")
    }

    pub fn posterior_mean(&self, arm: Arm) -> f64 {
        self.wins[arm] / (self.wins[arm] + self.losses[arm])
    }

    /// Duels `arm` took part in: its outcomes (prior excluded) plus its self-duels.
    pub fn times_played(&self, view: &View, arm: Arm) -> f64 {
        let self_duels = if arm < view.k() {
            view.wins.ties(arm, arm) as f64
        } else {
            0.0
        };
        self.wins[arm] + self.losses[arm] - 2.0 + self_duels
    }
}

impl Policy for SelfSparring {
    fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Pair {
        Pair::new(self.thompson_draw(view, rng), self.thompson_draw(view, rng))
    }

    fn update<R: Rng + ?Sized>(&mut self, _view: &View, win: Win, _rng: &mut R) {
        let Win { winner, loser, .. } = win;
        self.wins[winner] += 1.0;
        self.losses[loser] += 1.0;
    }

    fn tie<R: Rng + ?Sized>(&mut self, _view: &View, a: Arm, b: Arm, _rng: &mut R) {
        if a != b {
            for arm in [a, b] {
                self.wins[arm] += 0.5;
                self.losses[arm] += 0.5;
            }
        }
    }

    fn arm_added(&mut self, _view: &View, _arm: Arm) {
        self.wins.push(1.0);
        self.losses.push(1.0);
    }

    fn arm_retired(&mut self, _view: &View, _arm: Arm) {
        // Draws range over active arms only.
    }

    fn belief(&self, view: &View) -> Option<Arm> {
        super::argbest::highest_positive(view.active_arms(), |a| self.times_played(view, a))
    }

    fn max_rankers_per_query(&self) -> usize {
        super::multi::ANY_NUMBER
    }

    /// m independent Thompson draws: see [`super::self_sparring_set`].
    fn select_set<R: Rng + ?Sized>(
        &self,
        view: &View,
        m: usize,
        rng: &mut R,
    ) -> Result<Vec<Arm>, super::SetError> {
        super::multi::check_size(m, super::multi::ANY_NUMBER)?;
        Ok(super::self_sparring_set::thompson_set(self, view, m, rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::{TieRule, WinMatrix};
    use rand::SeedableRng;

    #[test]
    fn counts_start_at_one_and_follow_outcomes() {
        let mut rng = BanditRng::seed_from_u64(1);
        let w = WinMatrix::new(3);
        let active = [true; 3];
        let view = View {
            wins: &w,
            active: &active,
            ties: TieRule::HalfWin,
        };
        let mut s = SelfSparring::new(SelfSparringParams {}, 3, &mut rng);
        assert_eq!(s.belief(&view), None);
        s.update(&view, Win::of(Pair::new(2, 0), true), &mut rng);
        s.tie(&view, 0, 1, &mut rng);
        s.tie(&view, 1, 1, &mut rng);
        assert_eq!(s.wins, vec![1.5, 1.5, 2.0]);
        assert_eq!(s.losses, vec![2.5, 1.5, 1.0]);
        // Arm 0 took part in two duels (one tie), arm 2 and arm 1 in one and a half.
        assert_eq!(s.belief(&view), Some(0));
        assert!((s.posterior_mean(2) - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn the_best_posterior_is_drawn_most() {
        // Arm 0 at Beta(101, 1) against two Beta(1, 101): a draw below the others' has
        // probability far below 1e-6, so both sides pick arm 0 every time.
        let mut rng = BanditRng::seed_from_u64(2);
        let w = WinMatrix::new(3);
        let active = [true; 3];
        let view = View {
            wins: &w,
            active: &active,
            ties: TieRule::Ignore,
        };
        let mut s = SelfSparring::new(SelfSparringParams {}, 3, &mut rng);
        s.wins[0] = 101.0;
        s.losses[1] = 101.0;
        s.losses[2] = 101.0;
        for _ in 0..100 {
            assert_eq!(s.select(&view, &mut rng), Pair::new(0, 0));
        }
    }
}
