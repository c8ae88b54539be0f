//! Single-armed bandit "boxes": the classic multi-armed bandit algorithms that the reductions of
//! Ailon, Karnin and Joachims (2014) (Sparring, Doubler, MultiSBM) drive as black boxes. The paper
//! calls them Singleton Bandit Machines (SBM): `advance` proposes an arm ([`SingleArmed::choose`]),
//! `feedback` reports a reward in [0, 1] for an arm ([`SingleArmed::record`]), `reset` forgets.
//!
//! Three rules:
//! - UCB, the paper's Algorithm 1: index `mean + sqrt((alpha + 2) ln t / (2 n))`, unpulled arms
//!   first. alpha = 2 is Auer et al.'s UCB1 (`sqrt(2 ln t / n)`); larger alpha explores longer
//!   and makes the box alpha-robust (Lemma 2.2), which MultiSBM's analysis needs.
//! - Thompson sampling: one Beta(1 + rewards, 1 + failures) per arm, play the largest draw.
//! - EXP3 (Auer et al. 2002): mixes the exponential weights with gamma-uniform exploration and
//!   updates with importance-weighted rewards. Weights are kept as logarithms and only ever
//!   exponentiated relative to the largest one, so long runs never overflow.
//!
//! Differences from the paper's SBM, all forced by joust's feedback model:
//! - `choose` is read-only and feedback may come late, so a box records rewards for whichever arm
//!   an outcome names, not for "the arm it proposed last". EXP3's importance weight uses the
//!   arm's probability at the time the outcome is recorded (the probability at selection time
//!   is not carried by outcomes); with prompt feedback the two are close.
//! - Self-duels (the same arm on both sides) have no winner: joust records them only in the win
//!   matrix's tie counts. Their outcome in the paper is a fair coin, so UCB and Thompson boxes
//!   count each self-duel the caller passes in as one pull with reward 1/2, read at `choose` time.
//!   Without this a deterministic UCB box whose partner proposes the same arm would propose that
//!   self-duel forever, since no update would ever move its index. EXP3's weights can only
//!   change in `record`, so `choose` ignores the pending self-duels for it; a caller that wants
//!   EXP3 to learn from them records them itself (Sparring records each as the paper's fair
//!   coin: reward 1 in one box, 0 in the other).
//! - Arms can be added (they start with no pulls, so UCB tries them at once) and retired (the
//!   caller passes the active set, and a retired arm is never proposed again).

use rand::Rng;
use rand_distr::{Beta, Distribution};
use serde::{Deserialize, Serialize};

use crate::bandit::Arm;

/// Which single-armed algorithm a box runs, with its parameter.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum BoxRule {
    Ucb { alpha: f64 },
    Thompson,
    Exp3 { gamma: f64 },
}

/// Log-weights above this are shifted back towards zero; softmax is invariant to the shift.
const LOG_WEIGHT_SHIFT: f64 = 500.0;

/// One single-armed bandit over arms `0..k`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SingleArmed {
    rule: BoxRule,
    /// Feedback received per arm (ties count as one pull with reward 1/2).
    pulls: Vec<f64>,
    /// Sum of rewards per arm.
    rewards: Vec<f64>,
    total_pulls: f64,
    /// EXP3 only: logarithms of the exponential weights; empty for the other rules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    log_weights: Vec<f64>,
}

impl SingleArmed {
    pub fn new(rule: BoxRule, k: usize) -> Self {
        let log_weights = match rule {
            BoxRule::Exp3 { .. } => vec![0.0; k],
            _ => Vec::new(),
        };
        SingleArmed {
            rule,
            pulls: vec![0.0; k],
            rewards: vec![0.0; k],
            total_pulls: 0.0,
            log_weights,
        }
    }

    pub fn rule(&self) -> BoxRule {
        self.rule
    }

    /// Feedback this box received for `arm` (not counting self-duels).
    pub fn pulls(&self, arm: Arm) -> f64 {
        self.pulls.get(arm).copied().unwrap_or(0.0)
    }

    pub fn total_pulls(&self) -> f64 {
        self.total_pulls
    }

    /// Average reward of `arm`, if it has feedback.
    pub fn mean(&self, arm: Arm) -> Option<f64> {
        let n = self.pulls(arm);
        (n > 0.0).then(|| self.rewards[arm] / n)
    }

    /// Forgets everything (the SBM's `reset`), keeping the rule and the number of arms.
    pub fn reset(&mut self) {
        *self = SingleArmed::new(self.rule, self.pulls.len());
    }

    /// Grows the box by one arm with no pulls. An EXP3 box gives it the largest current weight,
    /// so a new arm starts as likely as the current favourite instead of being all but ignored.
    pub fn add_arm(&mut self) {
        self.pulls.push(0.0);
        self.rewards.push(0.0);
        if let BoxRule::Exp3 { .. } = self.rule {
            let top = self.log_weights.iter().copied().fold(0.0, f64::max);
            self.log_weights.push(top);
        }
    }

    /// Proposes an arm among the active ones (`active[a]`; arms beyond the box's size count as
    /// unpulled). `self_duels(a)` is how many self-duels of `a` this box took part in; UCB and
    /// Thompson count them as pulls with reward 1/2 (see the module docs).
    pub fn choose<R, F>(&self, active: &[bool], self_duels: F, rng: &mut R) -> Arm
    where
        R: Rng + ?Sized,
        F: Fn(Arm) -> f64,
    {
        match self.rule {
            BoxRule::Ucb { alpha } => self.choose_ucb(alpha, active, &self_duels, rng),
            BoxRule::Thompson => self.choose_thompson(active, &self_duels, rng),
            BoxRule::Exp3 { gamma } => self.choose_exp3(gamma, active, rng),
        }
    }

    /// Records a reward in [0, 1] for `arm`.
    pub fn record(&mut self, arm: Arm, reward: f64, active: &[bool]) {
        debug_assert!((0.0..=1.0).contains(&reward));
        self.ensure_arm(arm);
        if let BoxRule::Exp3 { gamma } = self.rule {
            // Importance weighting makes the estimate unbiased: E[reward / p] over the draw.
            let p = self.exp3_probability(gamma, arm, active);
            let k_active = active.iter().filter(|a| **a).count().max(1) as f64;
            self.log_weights[arm] += gamma * reward / p / k_active;
            if self.log_weights[arm] > LOG_WEIGHT_SHIFT {
                let shift = self.log_weights[arm];
                self.log_weights.iter_mut().for_each(|w| *w -= shift);
            }
        }
        self.pulls[arm] += 1.0;
        self.rewards[arm] += reward;
        self.total_pulls += 1.0;
    }

    fn ensure_arm(&mut self, arm: Arm) {
        while self.pulls.len() <= arm {
            self.add_arm();
        }
    }

    fn choose_ucb<R: Rng + ?Sized>(
        &self,
        alpha: f64,
        active: &[bool],
        self_duels: &dyn Fn(Arm) -> f64,
        rng: &mut R,
    ) -> Arm {
        let extra_total: f64 = active_arms(active).map(self_duels).sum();
        // Algorithm 1 starts t at 1 and increments it after each play.
        let log_t = (self.total_pulls + extra_total + 1.0).ln();
        let width = (alpha + 2.0) * log_t / 2.0;
        argmax_random_ties(active, rng, |a| {
            let extra = self_duels(a);
            let n = self.pulls(a) + extra;
            if n <= 0.0 {
                return f64::INFINITY;
            }
            let reward = self.rewards.get(a).copied().unwrap_or(0.0) + 0.5 * extra;
            reward / n + (width / n).sqrt()
        })
    }

    fn choose_thompson<R: Rng + ?Sized>(
        &self,
        active: &[bool],
        self_duels: &dyn Fn(Arm) -> f64,
        rng: &mut R,
    ) -> Arm {
        let mut best = None;
        let mut best_draw = f64::NEG_INFINITY;
        for a in active_arms(active) {
            let extra = self_duels(a);
            let reward = self.rewards.get(a).copied().unwrap_or(0.0);
            let wins = 1.0 + reward + 0.5 * extra;
            let losses = 1.0 + self.pulls(a) - reward + 0.5 * extra;
            let draw = Beta::new(wins, losses)
                .expect("Beta parameters are at least 1")
                .sample(rng);
            if draw > best_draw {
                best_draw = draw;
                best = Some(a);
            }
        }
        best.expect("a box needs at least one active arm")
    }

    fn choose_exp3<R: Rng + ?Sized>(&self, gamma: f64, active: &[bool], rng: &mut R) -> Arm {
        let top = self.top_log_weight(active);
        let k_active = active.iter().filter(|a| **a).count().max(1) as f64;
        let mass: f64 = active_arms(active)
            .map(|a| (self.log_weight(a) - top).exp())
            .sum();
        let mut u: f64 = rng.random();
        let mut last = None;
        for a in active_arms(active) {
            let p = (1.0 - gamma) * (self.log_weight(a) - top).exp() / mass + gamma / k_active;
            if u < p {
                return a;
            }
            u -= p;
            last = Some(a);
        }
        // Rounding can leave u a hair above the summed probabilities.
        last.expect("a box needs at least one active arm")
    }

    fn log_weight(&self, arm: Arm) -> f64 {
        // An arm beyond the box's size was added after the box's last record: it has the
        // weight `add_arm` would give it.
        self.log_weights
            .get(arm)
            .copied()
            .unwrap_or_else(|| self.log_weights.iter().copied().fold(0.0, f64::max))
    }

    fn top_log_weight(&self, active: &[bool]) -> f64 {
        active_arms(active)
            .map(|a| self.log_weight(a))
            .fold(f64::NEG_INFINITY, f64::max)
    }

    fn exp3_probability(&self, gamma: f64, arm: Arm, active: &[bool]) -> f64 {
        let top = self.top_log_weight(active);
        let k_active = active.iter().filter(|a| **a).count().max(1) as f64;
        let mass: f64 = active_arms(active)
            .map(|a| (self.log_weight(a) - top).exp())
            .sum();
        let own = if active.get(arm).copied().unwrap_or(false) {
            (self.log_weight(arm) - top).exp() / mass
        } else {
            0.0
        };
        // A retired arm's late outcome still gets a finite weight: the exploration share.
        (1.0 - gamma) * own + gamma / k_active
    }
}

fn active_arms(active: &[bool]) -> impl Iterator<Item = Arm> + '_ {
    active
        .iter()
        .enumerate()
        .filter(|(_, a)| **a)
        .map(|(i, _)| i)
}

/// The active arm with the largest score; exact ties are broken uniformly at random (reservoir
/// sampling), so that e.g. several unpulled arms are tried in random order.
fn argmax_random_ties<R: Rng + ?Sized>(
    active: &[bool],
    rng: &mut R,
    score: impl Fn(Arm) -> f64,
) -> Arm {
    let mut best = None;
    let mut best_score = f64::NEG_INFINITY;
    let mut tied = 0u32;
    for a in active_arms(active) {
        let s = score(a);
        if best.is_none() || s > best_score {
            best = Some(a);
            best_score = s;
            tied = 1;
        } else if s == best_score {
            tied += 1;
            if rng.random_range(0..tied) == 0 {
                best = Some(a);
            }
        }
    }
    best.expect("a box needs at least one active arm")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::BanditRng;
    use rand::SeedableRng;

    fn no_self_duels(_: Arm) -> f64 {
        0.0
    }

    /// Plays a box against fixed Bernoulli arms and returns how often each arm was chosen.
    fn play(rule: BoxRule, means: &[f64], steps: usize, seed: u64) -> Vec<f64> {
        let mut rng = BanditRng::seed_from_u64(seed);
        let active = vec![true; means.len()];
        let mut b = SingleArmed::new(rule, means.len());
        for _ in 0..steps {
            let a = b.choose(&active, no_self_duels, &mut rng);
            let r = if rng.random::<f64>() < means[a] {
                1.0
            } else {
                0.0
            };
            b.record(a, r, &active);
        }
        (0..means.len()).map(|a| b.pulls(a)).collect()
    }

    #[test]
    fn each_rule_concentrates_on_the_best_arm() {
        // Gaps of 0.3: UCB's index stops favouring an arm x once its width
        // sqrt((alpha + 2) ln t / (2 n_x)) < 0.3, i.e. after n_x ~ 4 * 8.5 / (2 * 0.09) = 190
        // pulls at t = 5000 (alpha = 2); Thompson's are of the same order; EXP3 with gamma = 0.1
        // explores 10% uniformly and its log-weight gap grows by gamma * 0.3 / 3 = 0.01 a step.
        // So the best arm gets well over half of 5000 pulls for all three.
        let means = [0.8, 0.5, 0.5];
        for rule in [
            BoxRule::Ucb { alpha: 2.0 },
            BoxRule::Thompson,
            BoxRule::Exp3 { gamma: 0.1 },
        ] {
            for seed in 0..5 {
                let pulls = play(rule, &means, 5000, seed);
                assert!(pulls[0] > 2500.0, "{rule:?} seed {seed}: {pulls:?}");
            }
        }
    }

    #[test]
    fn ucb_tries_every_arm_before_repeating_one() {
        let mut rng = BanditRng::seed_from_u64(1);
        let active = [true; 4];
        let mut b = SingleArmed::new(BoxRule::Ucb { alpha: 2.0 }, 4);
        let mut seen = Vec::new();
        for _ in 0..4 {
            let a = b.choose(&active, no_self_duels, &mut rng);
            seen.push(a);
            b.record(a, 1.0, &active);
        }
        seen.sort_unstable();
        assert_eq!(seen, vec![0, 1, 2, 3]);
    }

    #[test]
    fn retired_arms_are_never_proposed_and_new_arms_are_tried() {
        let mut rng = BanditRng::seed_from_u64(2);
        for rule in [
            BoxRule::Ucb { alpha: 2.0 },
            BoxRule::Thompson,
            BoxRule::Exp3 { gamma: 0.2 },
        ] {
            let mut b = SingleArmed::new(rule, 3);
            let mut active = vec![true, false, true];
            for _ in 0..200 {
                let a = b.choose(&active, no_self_duels, &mut rng);
                assert_ne!(a, 1, "{rule:?}");
                b.record(a, 0.5, &active);
            }
            b.add_arm();
            active.push(true);
            assert_eq!(b.pulls(3), 0.0);
            if let BoxRule::Ucb { .. } = rule {
                // An unpulled arm has an infinite index.
                assert_eq!(b.choose(&active, no_self_duels, &mut rng), 3);
            }
        }
    }

    #[test]
    fn self_duels_move_a_stuck_ucb_box() {
        // Arm 0 looks best but its partner proposes it too, so nothing is recorded: counting the
        // self-duels as reward 1/2 lowers arm 0's index until arm 1 (mean 0.9) is proposed.
        let mut rng = BanditRng::seed_from_u64(3);
        let active = [true, true];
        let mut b = SingleArmed::new(BoxRule::Ucb { alpha: 2.0 }, 2);
        for _ in 0..10 {
            b.record(0, 1.0, &active);
        }
        for _ in 0..10 {
            b.record(1, 0.9, &active);
        }
        assert_eq!(b.choose(&active, no_self_duels, &mut rng), 0);
        let many = |a: Arm| if a == 0 { 100.0 } else { 0.0 };
        assert_eq!(b.choose(&active, many, &mut rng), 1);
    }

    #[test]
    fn exp3_log_weights_stay_finite_on_long_runs() {
        let mut b = SingleArmed::new(BoxRule::Exp3 { gamma: 0.5 }, 2);
        let active = [true, true];
        for _ in 0..200_000 {
            b.record(0, 1.0, &active);
        }
        assert!(b.log_weights.iter().all(|w| w.is_finite()));
        let p = b.exp3_probability(0.5, 0, &active);
        assert!((p - 0.75).abs() < 1e-9, "{p}");
    }
}
