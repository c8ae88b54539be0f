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
//! More than two rankers per query (multileaving): see [`set`].
//!
//! Speed: each of the two draws is the argmax of one Beta draw per active arm, taken exactly by
//! [`ArgmaxSampler`], which draws only the arms that can still beat the running maximum (a few
//! once the posteriors concentrate, instead of all of them). Its cache is rebuilt from the counts
//! (`warm`, or at the next outcome) and kept in step by every outcome the policy hears of; a
//! selection whose cache is missing or out of step builds a temporary one, so the choices (and
//! the random numbers consumed) never depend on the cache's history.

mod set;

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::bandit::multi::ANY_NUMBER;
use crate::bandit::params::policy_params;
use crate::bandit::stats::cached::Cached;
use crate::bandit::stats::thompson_argmax::{ArgmaxSampler, thompson_pair, with_self_duels};
use crate::bandit::{Arm, BanditRng, Pair, Policy, SetChoice, View, Win};

policy_params! {
    /// Self-Sparring has no parameters.
    pub struct SelfSparringParams for SelfSparring {}
    rankers_per_query = ANY_NUMBER;
}

/// Posterior counts per arm, prior included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfSparring {
    pub wins: Vec<f64>,
    pub losses: Vec<f64>,
    #[serde(skip)]
    sampler: Cached<Synced>,
}

/// The sampler and the [`stamp`] of the counts it was built for.
#[derive(Clone)]
struct Synced {
    stamp: Stamp,
    sampler: ArgmaxSampler,
}

/// (arms, wins + ties recorded).
type Stamp = (usize, u64);

/// A fingerprint of the win matrix, in O(1): every change the policy hears of moves it by one
/// outcome (or one arm). When it moved without the policy hearing (a tie between two arms when
/// ties are ignored, which changes no posterior), `select` compares the posteriors one by one
/// before trusting the cache. The policy's own counts change only in its hooks, which keep the
/// cache in step.
fn stamp(view: &View) -> Stamp {
    (view.k(), view.wins.total_wins() + view.wins.total_ties())
}

impl SelfSparring {
    pub fn new(_params: SelfSparringParams, k: usize, _rng: &mut BanditRng) -> Self {
        SelfSparring {
            wins: vec![1.0; k],
            losses: vec![1.0; k],
            sampler: Cached(None),
        }
    }

    /// The Beta posterior of `arm` (its self-duels count half a win and half a loss), or `None`
    /// for a retired arm.
    fn posterior(&self, view: &View, arm: Arm) -> Option<(f64, f64)> {
        with_self_duels(view, arm, true, self.wins[arm], self.losses[arm])
    }

    fn build_sampler(&self, view: &View) -> ArgmaxSampler {
        ArgmaxSampler::build(view.k(), |a| self.posterior(view, a))
    }

    /// Brings the sampler in step after one change the policy heard of: the posteriors of
    /// `arms` changed, the stamp moved by `step` (arms, outcomes). When the stamp
    /// moved otherwise, the cache was out of step before: it is checked arm by arm and rebuilt
    /// if needed (or built if missing).
    fn resync(&mut self, view: &View, arms: &[Arm], step: Stamp) {
        let now = stamp(view);
        let sampler = match self.sampler.0.take() {
            Some(Synced {
                mut sampler,
                stamp: before,
            }) => {
                for &a in arms {
                    sampler.set(a, self.posterior(view, a));
                }
                let expected = (before.0 + step.0, before.1 + step.1);
                if expected == now || sampler.matches(view.k(), |a| self.posterior(view, a)) {
                    sampler
                } else {
                    self.build_sampler(view)
                }
            }
            None => self.build_sampler(view),
        };
        self.sampler = Cached(Some(Synced {
            stamp: now,
            sampler,
        }));
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
        let cached = self.sampler.0.as_ref();
        thompson_pair(
            cached.map(|s| (&s.sampler, s.stamp == stamp(view))),
            view.k(),
            |a| self.posterior(view, a),
            rng,
        )
    }

    fn update<R: Rng + ?Sized>(&mut self, view: &View, win: Win, _rng: &mut R) {
        let Win { winner, loser, .. } = win;
        self.wins[winner] += 1.0;
        self.losses[loser] += 1.0;
        self.resync(view, &[winner, loser], (0, 1));
    }

    fn tie<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, _rng: &mut R) {
        if a != b {
            for arm in [a, b] {
                self.wins[arm] += 0.5;
                self.losses[arm] += 0.5;
            }
        }
        self.resync(view, &[a, b], (0, 1));
    }

    fn self_duel<R: Rng + ?Sized>(&mut self, view: &View, arm: Arm, _rng: &mut R) {
        self.resync(view, &[arm], (0, 1));
    }

    fn warm(&mut self, view: &View) {
        self.sampler = Cached(Some(Synced {
            stamp: stamp(view),
            sampler: self.build_sampler(view),
        }));
    }

    fn arm_added(&mut self, view: &View, arm: Arm) {
        self.wins.push(1.0);
        self.losses.push(1.0);
        self.resync(view, &[arm], (1, 0));
    }

    fn arm_retired(&mut self, view: &View, arm: Arm) {
        // Draws range over active arms only.
        self.resync(view, &[arm], (0, 0));
    }

    fn belief(&self, view: &View) -> Option<Arm> {
        crate::bandit::stats::argbest::highest_positive(view.active_arms(), |a| {
            self.times_played(view, a)
        })
    }

    /// m independent Thompson draws: see [`set`].
    fn select_set<R: Rng + ?Sized>(&self, view: &View, m: usize, rng: &mut R) -> SetChoice {
        crate::bandit::multi::check_size(m, ANY_NUMBER)?;
        Ok(set::thompson_set(self, view, m, rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::TieRule;
    use crate::bandit::testing::{Fresh, seeded};
    use rand::SeedableRng;

    #[test]
    fn counts_start_at_one_and_follow_outcomes() {
        let (mut s, mut rng) = seeded(SelfSparringParams {}, 3, 1);
        let arms = Fresh::new(3);
        let view = arms.view(TieRule::HalfWin);
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
        let (mut s, mut rng) = seeded(SelfSparringParams {}, 3, 2);
        let arms = Fresh::new(3);
        let view = arms.view(TieRule::Ignore);
        s.wins[0] = 101.0;
        s.losses[1] = 101.0;
        s.losses[2] = 101.0;
        for _ in 0..100 {
            assert_eq!(s.select(&view, &mut rng), Pair::new(0, 0));
        }
    }

    #[test]
    fn restored_states_make_the_same_choices() {
        // Ties count as half wins and self-duels occur, so every hook keeps the cache in step;
        // the restored state has no cache (then a warmed one) and must choose alike.
        use crate::bandit::{BanditState, Outcome, PolicySpec};
        let mut rng = BanditRng::seed_from_u64(6);
        let k = 8;
        for ties in [TieRule::Ignore, TieRule::HalfWin] {
            let mut state =
                BanditState::new(&PolicySpec::new("self_sparring"), k, ties, &mut rng).unwrap();
            for step in 0..3_000 {
                let pair = state.select(&mut rng);
                // Arm i beats arm j with probability 1/2 + (j - i) / 20.
                let p = 0.5 + (pair.second as f64 - pair.first as f64) / 20.0;
                let outcome = if step % 11 == 0 {
                    Outcome::Tie
                } else if rng.random::<f64>() < p {
                    Outcome::FirstWins
                } else {
                    Outcome::SecondWins
                };
                state.record(pair, outcome, &mut rng).unwrap();
            }
            let json = serde_json::to_string(&state).unwrap();
            let restored: BanditState = serde_json::from_str(&json).unwrap();
            let mut warmed = restored.clone();
            warmed.warm();
            let mut rngs = [4, 4, 4].map(BanditRng::seed_from_u64);
            for _ in 0..200 {
                let want = state.select(&mut rngs[0]);
                assert_eq!(restored.select(&mut rngs[1]), want);
                assert_eq!(warmed.select(&mut rngs[2]), want);
            }
        }
    }
}
