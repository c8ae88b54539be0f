//! `ucb_candidates`: show every ranker that the upper confidence bounds do not beat (li-2020
//! section 6.6, the candidate selection it runs Sample-Only Scored Multileave with; Brost et al.
//! 2016 use the same set as MDB's tighter set, see [`super::mdb`]).
//!
//! At every query, with u_ij the relative upper confidence bound of [`crate::bandit::stats::ucb`] at log term
//! ln t and exploration `alpha`, the candidates are the active arms i with u_ij >= 1/2 against
//! every other active arm: the arms that could still be the Condorcet winner. All of them are
//! compared at once; nothing is eliminated for good (a growing t widens the bounds, so an arm can
//! come back). li-2020 multileaves every candidate (hundreds, early on); here a query shows at
//! most m:
//! - more than m candidates: a uniformly random m of them, so every candidate is shown equally
//!   often and the evidence between candidates grows evenly (no candidate is starved, which a
//!   "best m by empirical preference" cap would do to arms with little evidence);
//! - exactly one candidate: it alone, a self-duel (no regret if it is the Condorcet winner), until
//!   the widening bounds of the others make them candidates again;
//! - no candidate (possible without a Condorcet winner): every active arm is one.
//!
//! Conventions (as [`super::rucb`], which this is without its pair choice):
//! - Counts start at zero and x/0 := 1 (a pair never compared has u = 1); "u_ij >= 1/2" is
//!   non-strict; ties count as half a win when the experiment says so (through [`View::score`]).
//! - t is the number of feedback steps heard plus one: each query with some result between active
//!   arms (one `update_set`, or one `update` / `tie` on the pairwise path) and each self-duel is one
//!   step, so ln t = 0 at the first query. Selections never move it, so `select_set` is
//!   read-only and late, batched and out-of-order feedback is simply counted when it arrives; lost
//!   feedback is never counted.
//! - `alpha` defaults to 0.51, the value li-2020 section 6.6 uses (its analysis needs
//!   alpha > 1/2); any alpha > 0 is accepted.
//! - Added arms start with no comparisons (u = 1 against everyone, so they are candidates at
//!   once); retired arms are never candidates and are ignored as opponents.
//! - `belief` is the single candidate when there is exactly one, else none; `contenders` is none
//!   (nothing is eliminated for good).
//!
//! Cost: each arm's worst pair threshold is cached ([`WorstThresholds`], not persisted), so a
//! selection costs O(K) and learning a query of m arms O(m K); a state loaded without `warm`
//! computes in O(K^2) until its next update.

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::bandit::multi::{self, ANY_NUMBER, SetUpdate};
use crate::bandit::params::{Open, policy_params};
use crate::bandit::stats::cached::{Cached, evidence_total};
use crate::bandit::stats::ucb::threshold;
use crate::bandit::{Arm, BanditRng, Pair, Policy, SetChoice, View, Win};

policy_params! {
    /// Parameters of `ucb_candidates`.
    pub struct UcbCandidatesParams for UcbCandidates {
        /// Exploration parameter of the confidence bounds.
        pub alpha: f64 = 0.51, Open(0.0, 1e6);
    }
    rankers_per_query = ANY_NUMBER;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UcbCandidates {
    #[serde(flatten)]
    bounds: UcbBounds,
}

/// What `ucb_candidates` and [`super::mdb`] keep between queries and how they learn: the
/// exploration parameter, the feedback steps heard (t - 1) and each arm's cached worst threshold.
/// The two differ only in the arms they choose from the thresholds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UcbBounds {
    pub alpha: f64,
    /// Feedback steps heard so far.
    pub t: u64,
    #[serde(skip)]
    cache: Cached<WorstThresholds>,
}

impl UcbBounds {
    pub fn new(alpha: f64) -> Self {
        UcbBounds {
            alpha,
            t: 0,
            cache: Cached(None),
        }
    }

    /// ln t for the next step.
    pub fn log_term(&self) -> f64 {
        ((self.t + 1) as f64).ln()
    }

    /// Every active arm with its worst threshold.
    pub fn worst_thresholds(&self, view: &View) -> Vec<(Arm, f64)> {
        worst_thresholds(view, self.alpha, &self.cache)
    }

    /// One feedback step: `results` new results between `arms` reached the win matrix.
    pub fn heard(&mut self, view: &View, arms: &[Arm], results: u64) {
        self.t += 1;
        WorstThresholds::refresh(&mut self.cache, view, self.alpha, arms, results);
    }

    /// A self-duel: a step with no evidence.
    pub fn self_duel(&mut self) {
        self.t += 1;
    }

    /// Recomputes every arm's threshold (after loading, or when arms come and go).
    pub fn rebuild(&mut self, view: &View) {
        self.cache = Cached(Some(WorstThresholds::build(view, self.alpha)));
    }
}

/// The worst pair threshold of `i` against the other active arms (see
/// [`crate::bandit::stats::ucb::threshold`]): u_ij >= 1/2 for every j exactly when the log term times the
/// bound's scale is at least that value. O(K).
fn worst_of(view: &View, alpha: f64, i: Arm) -> f64 {
    view.active_arms()
        .filter(|&j| j != i)
        .map(|j| threshold(view.score(i, j), view.count(i, j), alpha))
        .fold(f64::NEG_INFINITY, f64::max)
}

/// Every arm's worst threshold (retired arms: -infinity), valid for the evidence total `synced`.
/// A query changes only the rows of the arms it showed, so learning costs O(m K) and selecting
/// O(K) instead of O(K^2).
#[derive(Clone)]
pub struct WorstThresholds {
    synced: u64,
    worst: Vec<f64>,
}

impl WorstThresholds {
    /// Computes every row from the win matrix: O(K^2).
    pub fn build(view: &View, alpha: f64) -> Self {
        WorstThresholds {
            synced: evidence_total(view),
            worst: (0..view.k())
                .map(|i| {
                    if view.is_active(i) {
                        worst_of(view, alpha, i)
                    } else {
                        f64::NEG_INFINITY
                    }
                })
                .collect(),
        }
    }

    /// Learns that `results` new results between `arms` reached the win matrix: refreshes those
    /// rows when the cache was up to date before them, or rebuilds everything otherwise (after
    /// loading, or when the matrix changed without the policy hearing of it).
    pub fn refresh(cache: &mut Cached<Self>, view: &View, alpha: f64, arms: &[Arm], results: u64) {
        let total = evidence_total(view);
        match cache.0.as_mut() {
            Some(c) if c.worst.len() == view.k() && c.synced + results == total => {
                for &a in arms {
                    if view.is_active(a) {
                        c.worst[a] = worst_of(view, alpha, a);
                    }
                }
                c.synced = total;
            }
            _ => *cache = Cached(Some(Self::build(view, alpha))),
        }
    }
}

/// Every active arm with its worst threshold, from `cache` when it is up to date, else from the
/// win matrix (O(K^2)).
pub fn worst_thresholds(
    view: &View,
    alpha: f64,
    cache: &Cached<WorstThresholds>,
) -> Vec<(Arm, f64)> {
    match cache.0.as_ref() {
        Some(c) if c.worst.len() == view.k() && c.synced == evidence_total(view) => {
            view.active_arms().map(|i| (i, c.worst[i])).collect()
        }
        _ => view
            .active_arms()
            .map(|i| (i, worst_of(view, alpha, i)))
            .collect(),
    }
}

/// At most `m` arms: all of `first` and `second` if they fit; otherwise `first` before
/// `second`, each drawn uniformly at random without replacement. Returned in index order.
pub fn capped<R: Rng + ?Sized>(
    mut first: Vec<Arm>,
    mut second: Vec<Arm>,
    m: usize,
    rng: &mut R,
) -> Vec<Arm> {
    let mut out = Vec::with_capacity(m.min(first.len() + second.len()));
    for pool in [&mut first, &mut second] {
        let take = (m - out.len()).min(pool.len());
        if take == pool.len() {
            out.append(pool);
            continue;
        }
        for i in 0..take {
            let j = rng.random_range(i..pool.len());
            pool.swap(i, j);
        }
        out.extend_from_slice(&pool[..take]);
    }
    out.sort_unstable();
    out
}

/// The first two arms of a set as a duel (one arm: a self-duel).
pub fn set_pair(set: &[Arm]) -> Pair {
    match set {
        [a] => Pair::new(*a, *a),
        [a, b, ..] => Pair::new(*a, *b),
        [] => unreachable!("a selected set has at least one arm"),
    }
}

impl UcbCandidates {
    pub fn new(params: UcbCandidatesParams, _k: usize, _rng: &mut BanditRng) -> Self {
        UcbCandidates {
            bounds: UcbBounds::new(params.alpha),
        }
    }

    /// ln t for the next step.
    pub fn log_term(&self) -> f64 {
        self.bounds.log_term()
    }

    /// The active arms the upper confidence bounds do not beat, in index order.
    pub fn candidates(&self, view: &View) -> Vec<Arm> {
        let log_term = self.log_term();
        self.bounds
            .worst_thresholds(view)
            .into_iter()
            .filter(|&(_, worst)| log_term >= worst)
            .map(|(i, _)| i)
            .collect()
    }
}

/// What a policy that shows the arms its [`UcbBounds`] do not beat decides for itself: which
/// arms to show and its belief. Everything else (learning, caches, arms coming and going) is the
/// bounds', so `ucb_candidates` and [`super::mdb`] share one [`Policy`] implementation.
pub trait ChoosesByBounds {
    fn bounds_mut(&mut self) -> &mut UcbBounds;
    /// At most `m` arms to show, in index order.
    fn choose<R: Rng + ?Sized>(&self, view: &View, m: usize, rng: &mut R) -> Vec<Arm>;
    /// The arms that only the tightest bounds leave unbeaten: a single one is the belief.
    fn unbeaten(&self, view: &View) -> Vec<Arm>;
}

impl<P: ChoosesByBounds> Policy for P {
    fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Pair {
        set_pair(&self.choose(view, 2, rng))
    }

    fn update<R: Rng + ?Sized>(&mut self, view: &View, win: Win, _rng: &mut R) {
        self.bounds_mut().heard(view, &[win.winner, win.loser], 1);
    }

    fn tie<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, _rng: &mut R) {
        self.bounds_mut().heard(view, &[a, b], 1);
    }

    fn self_duel<R: Rng + ?Sized>(&mut self, _view: &View, _arm: Arm, _rng: &mut R) {
        self.bounds_mut().self_duel();
    }

    fn warm(&mut self, view: &View) {
        self.bounds_mut().rebuild(view);
    }

    fn arm_added(&mut self, view: &View, _arm: Arm) {
        self.warm(view);
    }

    fn arm_retired(&mut self, view: &View, _arm: Arm) {
        self.warm(view);
    }

    fn belief(&self, view: &View) -> Option<Arm> {
        match self.unbeaten(view).as_slice() {
            [only] => Some(*only),
            _ => None,
        }
    }

    fn select_set<R: Rng + ?Sized>(&self, view: &View, m: usize, rng: &mut R) -> SetChoice {
        multi::check_size(m, ANY_NUMBER)?;
        Ok(self.choose(view, m, rng))
    }

    fn update_set<R: Rng + ?Sized>(&mut self, view: &View, heard: &SetUpdate, _rng: &mut R) {
        self.bounds_mut()
            .heard(view, &heard.arms, heard.results.len() as u64);
    }
}

impl ChoosesByBounds for UcbCandidates {
    fn bounds_mut(&mut self) -> &mut UcbBounds {
        &mut self.bounds
    }

    fn choose<R: Rng + ?Sized>(&self, view: &View, m: usize, rng: &mut R) -> Vec<Arm> {
        let mut candidates = self.candidates(view);
        if candidates.is_empty() {
            candidates = view.active_arms().collect();
        }
        capped(candidates, Vec::new(), m, rng)
    }

    fn unbeaten(&self, view: &View) -> Vec<Arm> {
        self.candidates(view)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::{TieRule, WinMatrix};
    use rand::SeedableRng;

    #[test]
    fn the_cap_keeps_preferred_arms_first_and_draws_uniformly() {
        let mut rng = BanditRng::seed_from_u64(1);
        assert_eq!(capped(vec![5, 1], vec![3], 4, &mut rng), vec![1, 3, 5]);
        assert_eq!(capped(vec![5, 1], vec![3, 2], 3, &mut rng).len(), 3);
        // 6 arms, cap 2, 30,000 draws: each arm is kept with probability 1/3, so its count is
        // Binomial(30000, 1/3), sd 82; allow 5 sd.
        let mut counts = [0usize; 6];
        for _ in 0..30_000 {
            let set = capped(vec![0, 1, 2, 3, 4, 5], Vec::new(), 2, &mut rng);
            assert_eq!(set.len(), 2);
            assert!(set[0] < set[1]);
            for a in set {
                counts[a] += 1;
            }
        }
        for c in counts {
            assert!((c as f64 - 10_000.0).abs() < 410.0, "{counts:?}");
        }
        // Preferred arms always fit before the others.
        for _ in 0..100 {
            let set = capped(vec![7, 8], vec![0, 1, 2], 3, &mut rng);
            assert!(set.contains(&7) && set.contains(&8), "{set:?}");
        }
    }

    #[test]
    fn candidates_are_the_arms_no_bound_beats() {
        let mut rng = BanditRng::seed_from_u64(2);
        let mut w = WinMatrix::new(4);
        // Arm 0 beats 1 and 2 heavily; arm 3 was never compared (u = 1 both ways).
        w.add_wins(0, 1, 100);
        w.add_wins(0, 2, 100);
        w.add_wins(1, 2, 50);
        w.add_wins(2, 1, 50);
        let active = [true; 4];
        let view = View::new(&w, &active, TieRule::Ignore);
        let mut p = UcbCandidates::new(UcbCandidatesParams::default(), 4, &mut rng);
        p.bounds.t = 99; // ln 100 = 4.6: u_10 = 0 + sqrt(0.51 * 4.6 / 100) = 0.15 < 1/2.
        assert_eq!(p.candidates(&view), vec![0, 3]);
        for _ in 0..100 {
            assert_eq!(p.select_set(&view, 8, &mut rng).unwrap(), vec![0, 3]);
            let one = p.select_set(&view, 2, &mut rng).unwrap();
            assert_eq!(one, vec![0, 3]);
        }
        assert_eq!(p.belief(&view), None);
    }

    #[test]
    fn the_cached_thresholds_match_the_win_matrix_after_every_query() {
        use crate::bandit::{AnyPolicy, BanditState, PolicySpec, SetOutcome};
        let mut rng = BanditRng::seed_from_u64(3);
        for ties in [TieRule::Ignore, TieRule::HalfWin] {
            let spec = PolicySpec::new("ucb_candidates");
            let mut state = BanditState::new(&spec, 9, ties, &mut rng).unwrap();
            for step in 0..600 {
                if step == 200 {
                    state.retire_arm(4).unwrap();
                }
                if step == 400 {
                    state.add_arm();
                }
                let set = state.select_set(4, &mut rng).unwrap();
                let mut outcome = SetOutcome::default();
                for (x, &a) in set.iter().enumerate() {
                    for &b in &set[x + 1..] {
                        match rng.random_range(0..4) {
                            0 => outcome.ties.push((a, b)),
                            1 => {}
                            2 => outcome.wins.push((a, b)),
                            _ => outcome.wins.push((b, a)),
                        }
                    }
                }
                state.record_set(&set, &outcome, &mut rng).unwrap();
                let view = state.view();
                let AnyPolicy::UcbCandidates(p) = &state.policy else {
                    unreachable!()
                };
                let cache = p
                    .bounds
                    .cache
                    .0
                    .as_ref()
                    .expect("built by the first update");
                let fresh = WorstThresholds::build(&view, p.bounds.alpha);
                assert_eq!(cache.synced, fresh.synced, "{ties:?} step {step}");
                assert_eq!(cache.worst, fresh.worst, "{ties:?} step {step}");
            }
        }
    }
}
