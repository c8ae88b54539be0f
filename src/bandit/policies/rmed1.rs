//! `rmed1`: Relative Minimum Empirical Divergence, RMED1 (Komiyama, Honda, Kashima and
//! Nakagawa, "Regret Lower Bound and Optimal Algorithm in Dueling Bandit Problem", COLT 2015;
//! summarised in li-2020's related work). Horizonless.
//!
//! For each arm `i`, the empirical divergence
//! `I_i = Σ_{j ∈ Ô_i} N_ij · d(μ̂_ij, 1/2)`, `Ô_i = {j ≠ i : μ̂_ij <= 1/2}`, `d` the Bernoulli
//! Kullback-Leibler divergence, measures how much evidence there is that `i` is not the Condorcet
//! winner; `i*` is the arm with the smallest `I`. The candidates at time `t` are
//! `J(t) = {i : I_i - I_{i*} <= ln t + f(K)}`, `f(K) = α K^1.01` (α = 0.3 as in the paper).
//!
//! The algorithm: an initial phase compares every pair once; then it runs in loops. Each arm `l`
//! of the current loop is compared once with a target `m`, and the arms of `J(t)` that are not
//! still waiting in this loop are put in the next loop. The target (RMED1's rule): `l` itself when
//! no arm beats it empirically (`Ô_l` empty: no regret if it is the winner); otherwise `i*` if
//! `i*` beats `l` empirically (`i* ∈ Ô_l`); otherwise the arm that beats `l` most,
//! `argmin_j μ̂_lj`.
//!
//! What joust does where the paper assumes each draw's result comes back before the next draw:
//! - All statistics are the shared win matrix's, so late, batched or out-of-order outcomes count.
//! - The loop advances on outcomes, not on selections: an arm leaves the current loop when an
//!   outcome involving it arrives (both arms of the outcome leave, since both were compared).
//!   `select` draws `l` uniformly from the arms still waiting in the loop, a rule that does not
//!   depend on the last selection; with delayed feedback an arm may be drawn several times
//!   before its first outcome arrives, and every extra outcome still counts as evidence.
//! - An arm no other arm beats empirically would be compared with itself; a self-duel carries no
//!   evidence (a tie, which the policy does not even hear of under the default tie rule), so such
//!   an arm needs no outcome to finish its turn: `select` skips it while other arms wait, and the
//!   loop ends when only such arms wait. When nothing waits, `select` looks at the next loop
//!   (plus `J(t)` at the current `t`, so arms re-enter as `ln t` grows even while only
//!   self-duels are played), and otherwise plays `(i*, i*)`.
//! - The initial phase draws an unseen pair uniformly at random (not in a fixed order, for the
//!   same reason as above) until every pair of active arms has at least one counted comparison.
//!
//! Details fixed here:
//! - The texts in this repository only summarise RMED1; the loop bookkeeping, `J(t)` and the
//!   target rule follow Komiyama et al.'s Algorithms 1 and 2 as published, and the initial phase
//!   uses `L = 1` comparison per pair (the paper's choice for RMED1).
//! - `t` is the number of outcomes recorded (wins and ties, including self-duels), at least 1.
//! - `K` in `f(K)` is the number of active arms. Retired arms are left out of every `Ô_i`.
//! - Equal `I` values: the lowest index is `i*`; equal `μ̂` in `argmin_j μ̂_lj`: the lowest index.
//! - Ties (when counted as half a win) are evidence like wins: `tie` does what `update` does.
//! - `arm_added`: the new arm joins the current loop, and its pairs must each be seen once (the
//!   initial phase resumes for them). `arm_retired`: the arm leaves the loops; divergences are
//!   recomputed without it.
//! - RMED1 eliminates nothing for good, so it reports no contenders; its belief is `i*`.

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::bandit::params::{Closed, policy_params};
use crate::bandit::{Arm, BanditRng, Pair, Policy, View, Win, kl_to_half};

policy_params! {
    /// Parameters of `rmed1`.
    pub struct Rmed1Params for Rmed1 {
        /// `α` in `f(K) = α K^1.01`: extra slack before an arm stops being a candidate.
        pub alpha: f64 = 0.3, Closed(0.0, 1e6);
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rmed1 {
    alpha: f64,
    /// `I_i` by arm, kept up to date by every outcome (each outcome changes two rows).
    divergence: Vec<f64>,
    /// `|Ô_i|` by arm: how many active arms beat `i` empirically or draw level with it.
    challengers: Vec<u32>,
    /// Pairs of active arms with no counted comparison yet (the initial phase lasts while > 0).
    unseen_pairs: usize,
    /// `L_R` by arm: whether the arm is in the current loop, still waiting for its comparison.
    remaining: Vec<bool>,
    /// `L_N` by arm: whether the arm is already put in the next loop.
    next: Vec<bool>,
}

/// Number of outcomes recorded so far (at least 1, so that `ln t >= 0`).
fn time(view: &View) -> f64 {
    (view.wins.total_wins() + view.wins.total_ties()).max(1) as f64
}

/// What the evidence `score` out of `count` between `i` and `j` adds to `I_i`: whether `j` is in
/// `Ô_i`, and `N_ij d(μ̂_ij, 1/2)` if so.
fn pair_term(score: f64, count: f64) -> (bool, f64) {
    if count <= 0.0 {
        return (false, 0.0);
    }
    let mu = score / count;
    if mu <= 0.5 {
        (true, count * kl_to_half(mu))
    } else {
        (false, 0.0)
    }
}

fn mu_hat(view: &View, i: Arm, j: Arm) -> Option<f64> {
    let n = view.count(i, j);
    (n > 0.0).then(|| view.score(i, j) / n)
}

impl Rmed1 {
    pub fn new(params: Rmed1Params, k: usize, _rng: &mut BanditRng) -> Self {
        Rmed1 {
            alpha: params.alpha,
            divergence: vec![0.0; k],
            challengers: vec![0; k],
            unseen_pairs: k * (k.saturating_sub(1)) / 2,
            remaining: vec![true; k],
            next: vec![false; k],
        }
    }

    /// The empirical divergence `I_arm`.
    pub fn divergence(&self, arm: Arm) -> f64 {
        self.divergence[arm]
    }

    /// Whether the initial phase (every pair once) is still running.
    pub fn initial_phase(&self) -> bool {
        self.unseen_pairs > 0
    }

    /// `i*`: the active arm with the smallest empirical divergence.
    pub fn leader(&self, view: &View) -> Option<Arm> {
        view.active_arms().fold(None, |best, a| match best {
            Some(b) if self.divergence[b] <= self.divergence[a] => Some(b),
            _ => Some(a),
        })
    }

    /// `J(t)`: the active arms whose divergence is within `ln t + f(K)` of the leader's.
    pub fn candidates(&self, view: &View) -> Vec<Arm> {
        let in_j = self.candidate_test(view);
        view.active_arms().filter(|&a| in_j(a)).collect()
    }

    /// Membership test for `J(t)` (computes the leader and the slack once).
    fn candidate_test<'a>(&'a self, view: &View) -> impl Fn(Arm) -> bool + 'a {
        let floor = self.leader(view).map_or(0.0, |l| self.divergence[l]);
        let k = view.active_arms().count() as f64;
        let slack = time(view).ln() + self.alpha * k.powf(1.01);
        move |a| self.divergence[a] - floor <= slack
    }

    /// Whether some active arm beats `i` empirically or draws level (`Ô_i` non-empty).
    fn challenged(&self, i: Arm) -> bool {
        self.challengers[i] > 0
    }

    /// Recomputes `I_i` and `|Ô_i|` from the win matrix.
    fn rescore(&mut self, view: &View, i: Arm) {
        let mut sum = 0.0;
        let mut challengers = 0;
        for j in view.active_arms().filter(|&j| j != i) {
            let (beaten, term) = pair_term(view.score(i, j), view.count(i, j));
            challengers += beaten as u32;
            sum += term;
        }
        self.divergence[i] = sum;
        self.challengers[i] = challengers;
    }

    /// Moves `I_i` and `|Ô_i|` from the pair's evidence before the latest outcome (`i` then had
    /// `gain` less score and the pair one comparison less) to its evidence now: O(1) per
    /// outcome instead of a row of K.
    fn rescore_pair(&mut self, view: &View, i: Arm, j: Arm, gain: f64) {
        let (score, count) = (view.score(i, j), view.count(i, j));
        let (was, old) = pair_term(score - gain, count - 1.0);
        let (is, new) = pair_term(score, count);
        if is && !was {
            self.challengers[i] += 1;
        } else if was && !is {
            self.challengers[i] -= 1;
        }
        // Without challengers the sum is exactly 0; resetting it keeps rounding from drifting.
        self.divergence[i] = if self.challengers[i] == 0 {
            0.0
        } else {
            (self.divergence[i] + new - old).max(0.0)
        };
    }

    fn rescore_all(&mut self, view: &View) {
        self.divergence.resize(view.k(), 0.0);
        self.challengers.resize(view.k(), 0);
        for i in 0..view.k() {
            self.rescore(view, i);
        }
        let active: Vec<Arm> = view.active_arms().collect();
        self.unseen_pairs = active
            .iter()
            .enumerate()
            .map(|(x, &i)| {
                active[x + 1..]
                    .iter()
                    .filter(|&&j| view.count(i, j) <= 0.0)
                    .count()
            })
            .sum();
    }

    /// RMED1's comparison target for `l`.
    pub fn target(&self, view: &View, l: Arm) -> Arm {
        if !self.challenged(l) {
            return l;
        }
        if let Some(star) = self.leader(view)
            && star != l
            && mu_hat(view, l, star).is_some_and(|mu| mu <= 0.5)
        {
            return star;
        }
        let mut best: Option<(Arm, f64)> = None;
        for j in view.active_arms().filter(|&j| j != l) {
            let mu = mu_hat(view, l, j).unwrap_or(0.5);
            if best.is_none_or(|(_, b)| mu < b) {
                best = Some((j, mu));
            }
        }
        best.map_or(l, |(j, _)| j)
    }

    /// Active arms of `set` that still need a comparison (a self-duel needs none).
    fn waiting<'a>(&'a self, set: &'a [bool], view: &'a View) -> impl Iterator<Item = Arm> + 'a {
        view.active_arms()
            .filter(move |&a| set[a] && self.challenged(a))
    }

    /// An outcome between `a` and `b` arrived, adding `gain_a` to `a`'s score (1 for a win, 1/2
    /// for a tie counted as half a win) and `1 - gain_a` to `b`'s.
    fn learn(&mut self, view: &View, a: Arm, b: Arm, gain_a: f64) {
        self.rescore_pair(view, a, b, gain_a);
        self.rescore_pair(view, b, a, 1.0 - gain_a);
        if self.unseen_pairs > 0 {
            if view.count(a, b) == 1.0 {
                self.unseen_pairs -= 1;
            }
            if self.unseen_pairs > 0 {
                return;
            }
        }
        self.remaining[a] = false;
        self.remaining[b] = false;
        let joining: Vec<Arm> = {
            let in_j = self.candidate_test(view);
            view.active_arms()
                .filter(|&j| !self.remaining[j] && in_j(j))
                .collect()
        };
        for j in joining {
            self.next[j] = true;
        }
        if self.waiting(&self.remaining, view).next().is_none() {
            // The loop is over: the next one starts with the arms collected for it.
            self.remaining = std::mem::replace(&mut self.next, vec![false; view.k()]);
        }
    }
}

impl Policy for Rmed1 {
    fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Pair {
        if self.unseen_pairs > 0 {
            // The r-th unseen pair, r uniform: no list of pairs is built.
            let mut r = rng.random_range(0..self.unseen_pairs);
            for i in view.active_arms() {
                for j in view.active_arms().skip_while(|&j| j <= i) {
                    if view.count(i, j) <= 0.0 {
                        if r == 0 {
                            return Pair::new(i, j);
                        }
                        r -= 1;
                    }
                }
            }
        }
        let mut pool: Vec<Arm> = self.waiting(&self.remaining, view).collect();
        if pool.is_empty() {
            let in_j = self.candidate_test(view);
            pool = view
                .active_arms()
                .filter(|&a| (self.next[a] || in_j(a)) && self.challenged(a))
                .collect();
        }
        if pool.is_empty() {
            let star = self.leader(view).expect("an experiment has active arms");
            return Pair::new(star, star);
        }
        let l = pool[rng.random_range(0..pool.len())];
        Pair::new(l, self.target(view, l))
    }

    fn update<R: Rng + ?Sized>(&mut self, view: &View, win: Win, _rng: &mut R) {
        let Win { winner, loser, .. } = win;
        self.learn(view, winner, loser, 1.0);
    }

    /// A tie counts as half a win for each side: it is evidence like a win.
    fn tie<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, _rng: &mut R) {
        if a != b {
            self.learn(view, a, b, 0.5);
        }
    }

    fn arm_added(&mut self, view: &View, arm: Arm) {
        self.divergence.resize(view.k(), 0.0);
        self.challengers.resize(view.k(), 0);
        self.unseen_pairs += view.active_arms().filter(|&j| j != arm).count();
        self.remaining.resize(view.k(), false);
        self.next.resize(view.k(), false);
        self.remaining[arm] = true;
    }

    fn arm_retired(&mut self, view: &View, arm: Arm) {
        self.remaining[arm] = false;
        self.next[arm] = false;
        self.rescore_all(view);
    }

    /// `i*`, once there is any evidence.
    fn belief(&self, view: &View) -> Option<Arm> {
        if view.wins.total_wins() == 0 && view.wins.total_ties() == 0 {
            return None;
        }
        self.leader(view)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::testing::{feed_random, view_of};
    use crate::bandit::{TieRule, WinMatrix};
    use rand::SeedableRng;

    /// Arm 0 beats 1 and 2 (30 of 40); 1 beats 2 (25 of 40).
    fn three_arms() -> WinMatrix {
        let mut w = WinMatrix::new(3);
        for (a, b, n) in [(0, 1, 30), (0, 2, 30), (1, 2, 25)] {
            w.add_wins(a, b, n);
            w.add_wins(b, a, 40 - n);
        }
        w
    }

    /// A fresh Rmed1 over `view`'s arms with every divergence computed.
    fn rescored(view: &View) -> Rmed1 {
        let mut rng = BanditRng::seed_from_u64(0);
        let mut p = Rmed1::new(Rmed1Params::default(), view.k(), &mut rng);
        p.rescore_all(view);
        p
    }

    #[test]
    fn divergence_sums_the_evidence_against_each_arm() {
        let w = three_arms();
        let active = [true; 3];
        let view = view_of(&w, &active);
        let p = rescored(&view);
        assert!(!p.initial_phase());
        assert_eq!(p.divergence(0), 0.0);
        assert!((p.divergence(1) - 40.0 * kl_to_half(0.25)).abs() < 1e-9);
        let i2 = 40.0 * kl_to_half(0.25) + 40.0 * kl_to_half(0.375);
        assert!((p.divergence(2) - i2).abs() < 1e-9);
        assert_eq!(p.leader(&view), Some(0));
        // t = 120 outcomes: ln 120 + 0.3 · 3^1.01 = 5.70; I_1 = 5.23 is inside, I_2 = 6.48 is not.
        assert_eq!(p.candidates(&view), vec![0, 1]);
    }

    #[test]
    fn targets_follow_the_rmed1_rule() {
        let w = three_arms();
        let active = [true; 3];
        let view = view_of(&w, &active);
        let p = rescored(&view);
        // Nobody beats arm 0: it is compared with itself.
        assert_eq!(p.target(&view, 0), 0);
        // i* = 0 beats arm 2: the target is i*.
        assert_eq!(p.target(&view, 2), 0);
    }

    #[test]
    fn target_is_the_strongest_challenger_when_the_leader_does_not_beat_the_arm() {
        // 1 beats the leader 0 narrowly (22 of 40) but loses heavily to 2 (4 of 40); 0 beats 2
        // heavily (36 of 40). I_0 = 40 d(0.45) is the smallest divergence, so i* = 0.
        let mut w = WinMatrix::new(3);
        for (a, b, n) in [(0, 2, 36), (1, 0, 22), (2, 1, 36)] {
            w.add_wins(a, b, n);
            w.add_wins(b, a, 40 - n);
        }
        let active = [true; 3];
        let view = view_of(&w, &active);
        let p = rescored(&view);
        assert_eq!(p.leader(&view), Some(0));
        // μ̂_10 = 0.55: i* is not in Ô_1, so the target is argmin_j μ̂_1j = 2 (μ̂_12 = 0.1).
        assert_eq!(p.target(&view, 1), 2);
        // μ̂_20 = 0.1: i* beats arm 2, so it is the target; arm 0 is challenged by 1 (μ̂_01 =
        // 0.45) and i* is itself, so its target is its strongest challenger, 1.
        assert_eq!(p.target(&view, 2), 0);
        assert_eq!(p.target(&view, 0), 1);
    }

    #[test]
    fn incremental_divergences_match_a_full_recount() {
        for ties in [TieRule::Ignore, TieRule::HalfWin] {
            let mut rng = BanditRng::seed_from_u64(5);
            let mut w = WinMatrix::new(5);
            let active = [true; 5];
            let mut p = Rmed1::new(Rmed1Params::default(), 5, &mut rng);
            feed_random(&mut p, &mut w, &active, ties, 2000, &mut rng);
            let mut fresh = p.clone();
            fresh.rescore_all(&View::new(&w, &active, ties));
            for i in 0..5 {
                assert!((p.divergence(i) - fresh.divergence(i)).abs() < 1e-9);
                assert_eq!(p.challengers[i], fresh.challengers[i]);
            }
            assert_eq!(p.unseen_pairs, 0);
        }
    }
}
