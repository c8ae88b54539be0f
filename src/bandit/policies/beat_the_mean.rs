//! `beat_the_mean`: Beat-the-Mean (Yue and Joachims, "Beat the Mean Bandit", ICML 2011; the
//! poster in the papers folder). Explore, then exploit.
//!
//! Every arm of the working set `W` keeps a score: its estimated probability of beating the
//! "mean bandit", an opponent drawn uniformly from the other arms of `W`. With `n*` the fewest
//! comparisons behind any score and `c* = c(n*) = 3γ² sqrt(ln(1/δ) / n*)`, `δ = 1/(2TK)`:
//! when the lowest score plus `c*` is at most the highest score minus `c*`, the arm with the lowest
//! score leaves `W`, and its comparisons stop counting in the other arms' scores (the poster's
//! greyed-out columns). When one arm is left, `select` returns `(best, best)`.
//!
//! What joust does where the paper assumes its own bookkeeping order:
//! - Scores come from the shared win matrix, per pair: `score_b = mean_{j ∈ W \ b} P̂(b beats j)`.
//!   A late, batched or out-of-order outcome still counts, and dropping an arm's comparisons is
//!   just leaving it out of the mean. The paper pools an arm's results over opponents drawn
//!   uniformly; the per-pair mean estimates the same quantity without relying on the draws having
//!   been uniform (they are not, once feedback is delayed or arms come and go).
//! - Its confidence uses Hoeffding's inequality for that weighted mean: the mean of independent
//!   per-pair averages over `n_bj` comparisons deviates by `ε` with probability at most
//!   `2 exp(-2 ε² n_eff)`, `n_eff = m² / Σ_j 1/n_bj` (`m = |W| - 1`), which is exactly the
//!   paper's bound with `n_eff` comparisons (and equals the pooled count when pairs are balanced).
//!   A score with an unseen pair has `n_eff = 0`: no elimination until every pair of `W` was seen.
//! - `select` draws a uniformly random pair of distinct arms of `W`, where the paper plays the arm
//!   with the fewest comparisons against a uniform opponent. "Fewest comparisons" depends on what
//!   was selected since the last outcome, which `select(&self)` cannot know (with delayed feedback
//!   it would pick the same arm for the whole delay); a uniform pair keeps every pair's expected
//!   count equal whatever the delay. An outcome counts for both arms, so every score gains
//!   evidence at least as fast as in the paper.
//! - An arm never duels itself during exploration: a self-duel is a tie that carries no evidence
//!   under the default tie rule. The mean bandit is therefore the mean of the *other* arms; the
//!   paper's mean including the arm itself is `((m · score) + 1/2) / (m + 1)`, an increasing
//!   function of ours, so the order of the scores, and so the arm removed, is the same.
//!
//! Details fixed here:
//! - The poster gives the rule but not the constants: `c(n) = 3γ² sqrt(ln(1/δ)/n)` and
//!   `δ = 1/(2TK)` are those of the online algorithm in the ICML paper.
//! - `K` in `δ` is the number of arms ever added (`view.k()`). The horizon only sets `δ`: joust
//!   keeps exploiting past `T` instead of stopping.
//! - Equal lowest scores: the lowest index leaves.
//! - Ties (when the experiment counts them as half a win) move the scores like wins: `tie` runs
//!   the same checks as `update`.
//! - `arm_added`: the new arm joins `W` (with `n_eff = 0`, so nothing is removed until it has
//!   met every other arm of `W`). If exploration had finished, it re-opens with `W` = {best, new}.
//! - `arm_retired`: the arm leaves `W`. If it was the chosen best arm, exploration restarts over
//!   all active arms.

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::bandit::params::{Closed, Horizon, policy_params};
use crate::bandit::{Arm, BanditRng, Pair, Policy, View, Win};

/// Horizon assumed when none is given (it enters only through `ln T`).
pub const DEFAULT_HORIZON: u64 = 1_000_000;

policy_params! {
    /// Parameters of `beat_the_mean`.
    pub struct BeatTheMeanParams for BeatTheMean {
        /// The horizon `T`; `δ = 1/(2TK)`.
        pub horizon: u64 = DEFAULT_HORIZON, Horizon;
        /// The relaxed stochastic transitivity parameter `γ >= 1` (1 under strong stochastic
        /// transitivity; the poster's arXiv matrix needs 1.5). Larger is more conservative.
        pub gamma: f64 = 1.0, Closed(1.0, 100.0);
    }
}

/// An arm's score against the mean bandit and the evidence behind it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// Mean empirical preference over the other arms of `W` (1/2 for unseen pairs).
    pub p: f64,
    /// Effective number of comparisons `m² / Σ_j 1/n_bj`; 0 while a pair is unseen.
    pub n_eff: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BeatTheMean {
    horizon: u64,
    gamma: f64,
    /// The working set `W`, in index order.
    working: Vec<Arm>,
    /// The sums behind each score, by arm index (only entries of `W` are meaningful). Every
    /// outcome changes one term of two rows, so keeping the sums makes an update O(1) and the
    /// elimination check O(|W|) instead of O(|W|²); a change of `W` recomputes them exactly.
    rows: Vec<Row>,
}

/// The sums behind one arm's score over the other arms `j` of `W`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// `Σ P̂(arm beats j)` over the pairs seen.
    pub sum_p: f64,
    /// `Σ 1/n_j` over the pairs seen.
    pub sum_inv_n: f64,
    /// Pairs not seen yet.
    pub unseen: u32,
}

impl Row {
    /// The score for `m` opponents: unseen pairs count as 1/2 and leave no confidence.
    pub fn score(&self, m: usize) -> Score {
        if m == 0 {
            return Score { p: 0.5, n_eff: 0.0 };
        }
        let m = m as f64;
        Score {
            p: (self.sum_p + 0.5 * self.unseen as f64) / m,
            n_eff: if self.unseen > 0 {
                0.0
            } else {
                m * m / self.sum_inv_n
            },
        }
    }
}

/// `ln(1/δ)` with `δ = 1/(2TK)`.
pub fn log_inv_delta(horizon: u64, k: usize) -> f64 {
    (2.0 * horizon as f64 * k.max(2) as f64).ln()
}

/// The paper's confidence radius `c(n) = 3γ² sqrt(ln(1/δ) / n)` (infinite without evidence).
pub fn radius(n: f64, gamma: f64, log_inv_delta: f64) -> f64 {
    if n <= 0.0 {
        f64::INFINITY
    } else {
        3.0 * gamma * gamma * (log_inv_delta / n).sqrt()
    }
}

/// The sums behind the score of `arm` against the other arms of `working`, from the win matrix.
pub fn row(view: &View, arm: Arm, working: &[Arm]) -> Row {
    let mut r = Row::default();
    for &j in working.iter().filter(|&&j| j != arm) {
        let n = view.count(arm, j);
        if n > 0.0 {
            r.sum_p += view.score(arm, j) / n;
            r.sum_inv_n += 1.0 / n;
        } else {
            r.unseen += 1;
        }
    }
    r
}

impl BeatTheMean {
    pub fn new(params: BeatTheMeanParams, k: usize, _rng: &mut BanditRng) -> Self {
        BeatTheMean {
            horizon: params.horizon,
            gamma: params.gamma,
            working: (0..k).collect(),
            rows: (0..k)
                .map(|_| Row {
                    unseen: k.saturating_sub(1) as u32,
                    ..Row::default()
                })
                .collect(),
        }
    }

    /// The working set `W`.
    pub fn working(&self) -> &[Arm] {
        &self.working
    }

    /// The arm BTM settled on, once one arm is left.
    pub fn best(&self) -> Option<Arm> {
        (self.working.len() == 1).then(|| self.working[0])
    }

    /// The current score of `arm` (meaningful for arms of `W`).
    pub fn score_of(&self, arm: Arm) -> Score {
        self.rows[arm].score(self.working.len().saturating_sub(1))
    }

    fn rescore_all(&mut self, view: &View) {
        self.rows.resize(view.k(), Row::default());
        for &a in &self.working {
            self.rows[a] = row(view, a, &self.working);
        }
    }

    /// Moves the term for `j` in `i`'s row from the pair's evidence before the latest outcome
    /// (`i` then had `gain` less score and the pair one comparison less) to its evidence now.
    fn update_row(&mut self, view: &View, i: Arm, j: Arm, gain: f64) {
        let (s, n) = (view.score(i, j), view.count(i, j));
        let r = &mut self.rows[i];
        if n > 1.0 {
            r.sum_p -= (s - gain) / (n - 1.0);
            r.sum_inv_n -= 1.0 / (n - 1.0);
        } else {
            r.unseen -= 1;
        }
        r.sum_p += s / n;
        r.sum_inv_n += 1.0 / n;
    }

    /// Removes the lowest-scoring arm while the confidence gap allows.
    fn eliminate(&mut self, view: &View) {
        while self.working.len() > 1 {
            let scores: Vec<Score> = self.working.iter().map(|&a| self.score_of(a)).collect();
            let n_star = scores.iter().map(|s| s.n_eff).fold(f64::INFINITY, f64::min);
            let c = radius(n_star, self.gamma, log_inv_delta(self.horizon, view.k()));
            let (mut lo, mut hi) = (0, 0);
            for (x, s) in scores.iter().enumerate().skip(1) {
                if s.p < scores[lo].p {
                    lo = x;
                }
                if s.p > scores[hi].p {
                    hi = x;
                }
            }
            if scores[lo].p + c > scores[hi].p - c {
                return;
            }
            let lo = self.working[lo];
            self.working.retain(|&a| a != lo);
            self.rescore_all(view);
        }
    }

    /// An outcome between `a` and `b` arrived, adding `gain_a` to `a`'s score (1 for a win, 1/2
    /// for a tie counted as half a win) and `1 - gain_a` to `b`'s.
    fn learn(&mut self, view: &View, a: Arm, b: Arm, gain_a: f64) {
        let in_w = |x: Arm| self.working.binary_search(&x).is_ok();
        if self.working.len() < 2 || a == b || !in_w(a) || !in_w(b) {
            // Exploitation, or a late outcome involving an arm already removed: it stays in the
            // win matrix and no longer counts in any score.
            return;
        }
        self.update_row(view, a, b, gain_a);
        self.update_row(view, b, a, 1.0 - gain_a);
        self.eliminate(view);
    }
}

impl Policy for BeatTheMean {
    fn select<R: Rng + ?Sized>(&self, _view: &View, rng: &mut R) -> Pair {
        let w = &self.working;
        if w.len() == 1 {
            return Pair::new(w[0], w[0]);
        }
        let a = rng.random_range(0..w.len());
        let mut b = rng.random_range(0..w.len() - 1);
        if b >= a {
            b += 1;
        }
        Pair::new(w[a], w[b])
    }

    fn update<R: Rng + ?Sized>(&mut self, view: &View, win: Win, _rng: &mut R) {
        let Win { winner, loser, .. } = win;
        self.learn(view, winner, loser, 1.0);
    }

    /// A tie counts as half a win for each side, so it moves both scores like a win.
    fn tie<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, _rng: &mut R) {
        self.learn(view, a, b, 0.5);
    }

    fn arm_added(&mut self, view: &View, arm: Arm) {
        self.working.push(arm);
        self.working.sort_unstable();
        self.rescore_all(view);
    }

    fn arm_retired(&mut self, view: &View, arm: Arm) {
        if self.best() == Some(arm) {
            self.working = view.active_arms().collect();
        } else {
            self.working.retain(|&a| a != arm);
        }
        self.rescore_all(view);
        self.eliminate(view);
    }

    /// The working set (the best arm alone once BTM has decided).
    fn contenders(&self, _view: &View) -> Option<Vec<Arm>> {
        Some(self.working.clone())
    }

    /// The best arm, once BTM has decided.
    fn belief(&self, _view: &View) -> Option<Arm> {
        self.best()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::params::PolicyParams;
    use crate::bandit::testing::{feed_random, view_of};
    use crate::bandit::{TieRule, WinMatrix};
    use rand::SeedableRng;

    /// The score of `arm` against the other arms of `working`.
    fn score(view: &View, arm: Arm, working: &[Arm]) -> Score {
        let m = working.iter().filter(|&&j| j != arm).count();
        row(view, arm, working).score(m)
    }

    fn policy(working: Vec<Arm>, view: &View) -> BeatTheMean {
        let mut p = BeatTheMean {
            horizon: 1000,
            gamma: 1.0,
            working,
            rows: vec![],
        };
        p.rescore_all(view);
        p
    }

    /// Records `n` comparisons of every pair of `arms` with P(i beats j) = `p(i, j)`, rounded.
    fn fill(w: &mut WinMatrix, arms: &[Arm], n: u32, p: impl Fn(Arm, Arm) -> f64) {
        for (x, &i) in arms.iter().enumerate() {
            for &j in &arms[x + 1..] {
                let wi = (p(i, j) * n as f64).round() as u32;
                w.add_wins(i, j, wi);
                w.add_wins(j, i, n - wi);
            }
        }
    }

    #[test]
    fn score_is_the_mean_preference_over_the_other_working_arms() {
        let mut w = WinMatrix::new(3);
        w.add_wins(0, 1, 30);
        w.add_wins(1, 0, 10); // P̂(0, 1) = 0.75 over 40
        w.add_wins(0, 2, 5);
        w.add_wins(2, 0, 5); // P̂(0, 2) = 0.5 over 10
        let active = [true; 3];
        let s = score(&view_of(&w, &active), 0, &[0, 1, 2]);
        assert!((s.p - 0.625).abs() < 1e-12);
        // n_eff = m² / Σ 1/n = 4 / (1/40 + 1/10) = 32.
        assert!((s.n_eff - 32.0).abs() < 1e-9);
        // Arms 1 and 2 never met: no confidence yet.
        assert_eq!(score(&view_of(&w, &active), 1, &[0, 1, 2]).n_eff, 0.0);
    }

    // T = 1000, K = 4: ln(1/δ) = ln(8000) = 8.987; with n_eff = 3 · 900 (every pair seen 900
    // times, m = 3), c* = 3 sqrt(8.987 / 2700) = 0.173, so elimination needs a score gap of 0.346.

    #[test]
    fn removes_the_lowest_score_when_the_gap_exceeds_both_radii() {
        let mut w = WinMatrix::new(4);
        // Utilities 0.9, 0.6, 0.5, 0.1 with the linear link: scores 0.75, 0.567, 0.517, 0.217.
        let u = [0.9, 0.6, 0.5, 0.1];
        fill(&mut w, &[0, 1, 2, 3], 900, |i, j| (1.0 + u[i] - u[j]) / 2.0);
        let active = [true; 4];
        let view = view_of(&w, &active);
        let mut p = policy(vec![0, 1, 2, 3], &view);
        let c = radius(2700.0, 1.0, log_inv_delta(1000, 4));
        assert!((c - 0.173).abs() < 1e-3, "{c}");
        p.eliminate(&view);
        // 0.75 - 0.217 = 0.533 > 2c: arm 3 leaves. Among 0, 1, 2 the scores are
        // (0.675, 0.5, 0.4) over n_eff = 2 · 900 (c* = 0.212): 0.275 < 2c*, nothing else leaves.
        assert_eq!(p.working(), &[0, 1, 2]);
        assert_eq!(p.best(), None);
    }

    #[test]
    fn keeps_every_arm_while_the_gap_is_within_the_radii() {
        let mut w = WinMatrix::new(4);
        let u = [0.6, 0.5, 0.5, 0.4];
        fill(&mut w, &[0, 1, 2, 3], 900, |i, j| (1.0 + u[i] - u[j]) / 2.0);
        let active = [true; 4];
        let view = view_of(&w, &active);
        let mut p = policy(vec![0, 1, 2, 3], &view);
        // Scores 0.567, 0.5, 0.5, 0.433: a gap of 0.133 < 2c* = 0.346.
        p.eliminate(&view);
        assert_eq!(p.working(), &[0, 1, 2, 3]);
    }

    #[test]
    fn settles_on_the_last_arm_and_exploits_it() {
        let mut w = WinMatrix::new(2);
        w.add_wins(0, 1, 1000);
        let active = [true; 2];
        let view = view_of(&w, &active);
        let mut p = policy(vec![0, 1], &view);
        p.eliminate(&view);
        assert_eq!(p.best(), Some(0));
        let mut rng = BanditRng::seed_from_u64(3);
        assert_eq!(p.select(&view, &mut rng), Pair::new(0, 0));
        assert_eq!(p.contenders(&view), Some(vec![0]));
    }

    #[test]
    fn an_added_arm_reopens_a_finished_exploration() {
        let mut w = WinMatrix::new(2);
        w.add_wins(0, 1, 1000);
        let mut active = vec![true; 2];
        let mut p = policy(vec![0, 1], &view_of(&w, &active));
        p.eliminate(&view_of(&w, &active));
        let arm = w.add_arm();
        active.push(true);
        p.arm_added(&view_of(&w, &active), arm);
        assert_eq!(p.working(), &[0, 2]);
        assert_eq!(p.belief(&view_of(&w, &active)), None);
    }

    #[test]
    fn gamma_below_one_is_refused() {
        let params = BeatTheMeanParams {
            gamma: 0.9,
            ..Default::default()
        };
        assert!(params.validate(6).unwrap_err().contains("gamma"));
        assert!(BeatTheMeanParams::default().validate(6).is_ok());
    }

    #[test]
    fn incremental_rows_match_a_full_recount() {
        for ties in [TieRule::Ignore, TieRule::HalfWin] {
            let mut rng = BanditRng::seed_from_u64(9);
            let mut w = WinMatrix::new(5);
            let active = [true; 5];
            // A huge γ keeps every arm in W, so the rows see every outcome.
            let params = BeatTheMeanParams {
                horizon: 1000,
                gamma: 100.0,
            };
            let mut p = BeatTheMean::new(params, 5, &mut rng);
            feed_random(&mut p, &mut w, &active, ties, 3000, &mut rng);
            assert_eq!(p.working(), &[0, 1, 2, 3, 4]);
            let view = View::new(&w, &active, ties);
            for a in 0..5 {
                let fresh = score(&view, a, p.working());
                let kept = p.score_of(a);
                assert!((fresh.p - kept.p).abs() < 1e-12, "{fresh:?} {kept:?}");
                assert!((fresh.n_eff - kept.n_eff).abs() < 1e-6 * fresh.n_eff);
            }
        }
    }
}
