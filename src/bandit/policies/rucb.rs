//! `rucb`: Relative Upper Confidence Bound (zoghi-2014, Algorithm 1).
//!
//! At every step, with u_ij the relative upper confidence bound of [`crate::bandit::stats::ucb`] at log term ln t:
//! 1. the champion c is drawn uniformly among the arms with u_cj >= 1/2 against every other
//!    active arm (the "potential champions"); if there is none, uniformly among all active arms;
//! 2. its opponent is d = argmax_j u_jc with u_cc = 1/2 (ties broken at random), i.e. the arm most
//!    likely to beat c even pessimistically for c, so c meets itself only once every other arm
//!    looks beaten.
//!
//! Conventions (chosen to follow the paper literally):
//! - Counts start at zero (no prior) and x/0 := 1 (a pair never compared has u = 1).
//! - t is the number of outcomes heard so far plus one, so ln t = 0 at the first step. It advances
//!   with outcomes (wins, counted ties and self-duels, which are ties that carry no evidence but
//!   are steps of the paper's clock), not with selections: between two outcomes `select` keeps
//!   drawing from the same bounds. Without self-duels on the clock, RUCB would stop exploring for
//!   good once it duels its champion with itself, right or wrong.
//! - "u_cj >= 1/2" is non-strict, as in the paper.
//! - Ties count as half a win when the experiment says so (through [`View::score`]).
//!
//! Parameters: `alpha` (default 0.51, the value of the paper's experiments; its analysis needs
//! alpha > 1/2). Any alpha > 0 is accepted: li-2020 tuned the alphas of the related UCB-based
//! policies to 0.8^6 and 0.8^7, below the theoretical range, and found them better in practice.
//!
//! Speed: whether u_cj >= 1/2 depends on the counts only through one threshold per pair
//! ([`crate::bandit::stats::ucb::threshold`]), so each arm's worst threshold is cached and refreshed for the two
//! arms of each outcome; a step costs O(K) (one row of bounds for d, read from a dense copy of the
//! counts kept up to [`MIRROR_LIMIT`] arms). RUCB eliminates nothing:
//! it reports no contenders and no belief.

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::bandit::footprint::Footprint;
use crate::bandit::params::{Open, policy_params};
use crate::bandit::stats::argbest::ArgMax;
use crate::bandit::stats::cached::{Cached, evidence_total};
use crate::bandit::stats::ucb::{threshold, ucb};
use crate::bandit::{Arm, BanditRng, Pair, Policy, View, Win};

policy_params! {
    /// Parameters of `rucb`.
    pub struct RucbParams for Rucb {
        /// Exploration parameter of the confidence bounds.
        pub alpha: f64 = 0.51, Open(0.0, 1e6);
    }
    // Mean, 1/n and tau per pair, as `f64`.
    memory(params, k) => Footprint::per_pair(24);
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rucb {
    alpha: f64,
    /// Outcomes heard so far.
    t: u64,
    #[serde(skip)]
    cache: Cached<Mirror>,
}

/// Dense per-pair values, laid out so that both loops of a step read contiguous memory: row c
/// holds, for every j, the mean and inverse count of u_jc (so u_jc = mean + sqrt(alpha L inv_n);
/// an unexplored pair has mean 1 and inv_n 0, i.e. u = 1), and the threshold of the pair (c, j).
/// `worst[c]` is the largest threshold of c against an active arm: c is a potential champion
/// exactly when ln t >= worst[c]. Built only up to [`MIRROR_LIMIT`] arms (24 bytes per pair).
#[derive(Clone)]
struct Mirror {
    synced: u64,
    k: usize,
    mean: Vec<f64>,
    inv_n: Vec<f64>,
    tau: Vec<f64>,
    worst: Vec<f64>,
}

/// Largest number of arms for which the dense cache is kept (1024 arms: 24 MiB). Above it every
/// step reads the win matrix directly, in O(K^2).
pub const MIRROR_LIMIT: usize = 1024;

impl Mirror {
    fn build(view: &View, alpha: f64) -> Self {
        let k = view.k();
        let mut m = Mirror {
            synced: evidence_total(view),
            k,
            mean: vec![1.0; k * k],
            inv_n: vec![0.0; k * k],
            tau: vec![f64::NEG_INFINITY; k * k],
            worst: vec![f64::NEG_INFINITY; k],
        };
        for c in 0..k {
            for j in 0..k {
                if j != c && view.active[j] && view.active[c] {
                    m.set_cell(view, c, j, alpha);
                }
            }
        }
        for c in 0..k {
            m.worst[c] = m.worst_of(c);
        }
        m
    }

    /// Row c, column j: u_jc's parts and the threshold of (c, j).
    fn set_cell(&mut self, view: &View, c: Arm, j: Arm, alpha: f64) {
        let n = view.count(c, j);
        let idx = c * self.k + j;
        if n > 0.0 {
            self.mean[idx] = view.score(j, c) / n;
            self.inv_n[idx] = 1.0 / n;
        }
        self.tau[idx] = threshold(view.score(c, j), n, alpha);
    }

    fn worst_of(&self, c: Arm) -> f64 {
        self.tau[c * self.k..(c + 1) * self.k]
            .iter()
            .fold(f64::NEG_INFINITY, |w, &t| w.max(t))
    }

    /// Copies the evidence between `a` and `b` from the win matrix. A row's maximum needs a scan
    /// only when the cell that held it went down.
    fn refresh_pair(&mut self, view: &View, a: Arm, b: Arm, alpha: f64) {
        for (c, j) in [(a, b), (b, a)] {
            let old = self.tau[c * self.k + j];
            self.set_cell(view, c, j, alpha);
            let new = self.tau[c * self.k + j];
            if new >= self.worst[c] {
                self.worst[c] = new;
            } else if old >= self.worst[c] {
                self.worst[c] = self.worst_of(c);
            }
        }
        self.synced = evidence_total(view);
    }
}

impl Rucb {
    pub fn new(params: RucbParams, _k: usize, _rng: &mut BanditRng) -> Self {
        Rucb {
            alpha: params.alpha,
            t: 0,
            cache: Cached(None),
        }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// ln t for the next step.
    pub fn log_term(&self) -> f64 {
        ((self.t + 1) as f64).ln()
    }

    /// The worst pair threshold of c, read from the win matrix.
    fn worst_direct(&self, view: &View, c: Arm) -> f64 {
        view.active_arms()
            .filter(|&j| j != c)
            .map(|j| threshold(view.score(c, j), view.count(c, j), self.alpha))
            .fold(f64::NEG_INFINITY, f64::max)
    }

    fn fresh<'a>(&'a self, view: &View) -> Option<&'a Mirror> {
        self.cache
            .0
            .as_ref()
            .filter(|m| m.synced == evidence_total(view) && m.k == view.k())
    }

    pub(crate) fn warm_cache(&mut self, view: &View) {
        self.rebuild(view);
    }

    fn rebuild(&mut self, view: &View) {
        self.cache = Cached((view.k() <= MIRROR_LIMIT).then(|| Mirror::build(view, self.alpha)));
    }

    /// Refreshes the cache after one outcome between `a` and `b`.
    fn refresh(&mut self, view: &View, a: Arm, b: Arm) {
        let total = evidence_total(view);
        let alpha = self.alpha;
        match self.cache.0.as_mut() {
            Some(m) if m.synced + 1 == total && m.k == view.k() => {
                m.refresh_pair(view, a, b, alpha)
            }
            _ => self.rebuild(view),
        }
    }

    /// The champion: uniform among potential champions, else among all active arms.
    fn champion<R: Rng + ?Sized>(&self, view: &View, worst: &[f64], rng: &mut R) -> Arm {
        let log_term = self.log_term();
        let is_candidate = |c: Arm| view.active[c] && log_term >= worst[c];
        let candidates = (0..view.k()).filter(|&c| is_candidate(c)).count();
        if candidates > 0 {
            let pick = rng.random_range(0..candidates);
            (0..view.k()).filter(|&c| is_candidate(c)).nth(pick)
        } else {
            let active = view.active_arms().count();
            let pick = rng.random_range(0..active);
            view.active_arms().nth(pick)
        }
        .expect("at least one active arm")
    }
}

impl Policy for Rucb {
    fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Pair {
        let log_term = self.log_term();
        let mut best = ArgMax::new();
        if let Some(m) = self.fresh(view) {
            let c = self.champion(view, &m.worst, rng);
            let row = c * m.k..(c + 1) * m.k;
            let bonus = self.alpha * log_term;
            for (j, (&mean, &inv_n)) in m.mean[row.clone()].iter().zip(&m.inv_n[row]).enumerate() {
                if view.active[j] {
                    let u = if j == c {
                        0.5
                    } else {
                        mean + (bonus * inv_n).sqrt()
                    };
                    best.offer(j, u, rng);
                }
            }
            return Pair::new(c, best.arm().expect("c itself is active"));
        }
        let worst: Vec<f64> = (0..view.k()).map(|c| self.worst_direct(view, c)).collect();
        let c = self.champion(view, &worst, rng);
        for j in view.active_arms() {
            let u = if j == c {
                0.5
            } else {
                ucb(view.score(j, c), view.count(j, c), self.alpha, log_term)
            };
            best.offer(j, u, rng);
        }
        Pair::new(c, best.arm().expect("c itself is active"))
    }

    fn update<R: Rng + ?Sized>(&mut self, view: &View, win: Win, _rng: &mut R) {
        let Win { winner, loser, .. } = win;
        self.t += 1;
        self.refresh(view, winner, loser);
    }

    fn tie<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, _rng: &mut R) {
        self.t += 1;
        self.refresh(view, a, b);
    }

    fn self_duel<R: Rng + ?Sized>(&mut self, _view: &View, _arm: Arm, _rng: &mut R) {
        // Nothing was learnt, but time passed: ln t grows, so the bounds of the arms the
        // champion has beaten widen again and they get re-examined, as in the paper, where a
        // self-duel is a step like any other.
        self.t += 1;
    }

    fn warm(&mut self, view: &View) {
        self.warm_cache(view);
    }

    fn arm_added(&mut self, view: &View, _arm: Arm) {
        // The layout depends on K: rebuild (rare). The new arm has no comparisons.
        self.rebuild(view);
    }

    fn arm_retired(&mut self, view: &View, _arm: Arm) {
        // Arms whose worst opponent was the retired arm need their maximum recomputed.
        self.rebuild(view);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::params::PolicyParams;
    use crate::bandit::{TieRule, WinMatrix};
    use rand::SeedableRng;

    fn policy(alpha: f64) -> Rucb {
        let mut rng = BanditRng::seed_from_u64(0);
        Rucb::new(RucbParams { alpha }, 4, &mut rng)
    }

    /// Two arms, arm 0 ahead 10-0: at t = 11, u_10 = sqrt(0.51 ln 11 / 10) = 0.35 < 1/2, so arm 0
    /// is the only potential champion and its strongest challenger is itself. Self-duels must
    /// move the clock: once ln t >= 10 / (4 * 0.51) (t >= 135), u_10 >= 1/2 and arm 1 is
    /// examined again.
    #[test]
    fn self_duels_advance_the_clock_when_ties_are_ignored() {
        use crate::bandit::{BanditState, Outcome, PolicySpec};
        let mut rng = BanditRng::seed_from_u64(2);
        let spec = PolicySpec::parse_cli("rucb").unwrap();
        let mut state = BanditState::new(&spec, 2, TieRule::Ignore, &mut rng).unwrap();
        // RUCB's own choices: the decision's confirmation layer would take some of its steps.
        state.set_decision_settings(
            crate::bandit::DecisionSettings::default().without_confirmation(),
        );
        for _ in 0..10 {
            state
                .record(Pair::new(0, 1), Outcome::FirstWins, &mut rng)
                .unwrap();
        }
        assert_eq!(state.select(&mut rng), Pair::new(0, 0));
        for _ in 0..120 {
            state
                .record(Pair::new(0, 0), Outcome::Tie, &mut rng)
                .unwrap();
        }
        assert_eq!(
            state.select(&mut rng),
            Pair::new(0, 0),
            "t = 131 is too early"
        );
        for _ in 0..10 {
            state
                .record(Pair::new(0, 0), Outcome::Tie, &mut rng)
                .unwrap();
        }
        // Arm 1 is back in play (as challenger, or as a potential champion itself).
        let pair = state.select(&mut rng);
        assert_ne!(pair.first, pair.second, "{pair:?}");
    }

    #[test]
    fn alpha_must_be_positive() {
        assert!(RucbParams { alpha: 0.0 }.validate(4).is_err());
        assert!(RucbParams { alpha: f64::NAN }.validate(4).is_err());
        assert!(RucbParams { alpha: 0.26 }.validate(4).is_ok());
        assert!(RucbParams::default().validate(4).is_ok());
    }

    #[test]
    fn cached_thresholds_match_a_fresh_computation() {
        let mut w = WinMatrix::new(4);
        let active = [true; 4];
        let mut p = policy(0.51);
        let mut rng = BanditRng::seed_from_u64(1);
        for step in 0..500u32 {
            let (a, b) = ((step % 4) as usize, ((step * 7 + 1) % 4) as usize);
            if a == b {
                continue;
            }
            w.record_win(a, b);
            let view = View::new(&w, &active, TieRule::Ignore);
            p.update(&view, Win::of(Pair::new(a, b), true), &mut rng);
            let fresh = p.fresh(&view).expect("cache in step").worst.clone();
            let direct: Vec<f64> = (0..4).map(|c| p.worst_direct(&view, c)).collect();
            assert_eq!(fresh, direct);
        }
    }
}
