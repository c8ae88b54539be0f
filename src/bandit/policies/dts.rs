//! `dts`: Double Thompson Sampling (Wu & Liu 2016, as summarised in li-2020 section 3).
//!
//! At every step, with relative bounds u_ij and l_ij = mean -/+ sqrt(alpha ln t / n) of
//! [`crate::bandit::stats::ucb`]:
//! 1. Candidates: the arms with the largest upper Copeland score #{j : u_ij > 1/2}.
//! 2. First arm (first Thompson sample): theta_ij ~ Beta(w_ij + 1, w_ji + 1), theta_ji =
//!    1 - theta_ij; c is the candidate winning the most sampled duels (ties at random). As in
//!    MergeDTS only the indicators theta_ij > 1/2 matter, drawn from cached probabilities exact to
//!    2^-31 ([`crate::bandit::stats::duel_table`]: rounded, so that a state restored from the
//!    database draws exactly as the live one), and only for pairs that involve a candidate.
//! 3. Second arm (second Thompson sample): theta_jc ~ Beta(w_jc + 1, w_cj + 1) for j != c and
//!    theta_cc = 1/2; d is the argmax over the arms with l_jc <= 1/2 (c itself always qualifies,
//!    l_cc = 1/2), ties at random.
//!
//! DTS targets Copeland winners and does not need a Condorcet winner; it eliminates nothing, so it
//! reports no contenders. Its belief is the arm it chose first most often, counted over the
//! outcomes heard (their tokens keep the order of the duel): the first arm is DTS's own pick
//! of a likely Copeland winner, where the win matrix alone, with most pairs barely compared,
//! says little. (On MSLR's 136 rankers at 10^5 steps the belief is r105, not the winner r109,
//! which beats it with probability 0.5056 only: DTS itself has not told them apart yet.)
//!
//! Cost: the upper Copeland scores are kept step by step ([`crate::bandit::stats::upper_copeland`], O(log K)
//! per outcome) rather than recomputed from K^2 bounds, and the first sample draws only the
//! pairs that involve a candidate, O(K) per candidate: a step costs O(K^2) only while most arms
//! are candidates, as on MSLR's closely matched rankers (its speed, and how much faster than the
//! direct computation that makes the same choices: docs/benchmarks.md). It is meant for
//! experiments of tens of arms, not thousands.
//!
//! Conventions: counts carry a prior of one win each way (as the MergeDTS authors' implementation
//! of DTS does), so means and bounds use w + 1 wins out of n + 2; t is the number of outcomes heard
//! plus one (ln t = 0 at the first step) and advances with outcomes, self-duels included, not
//! selections; "u_ij > 1/2"
//! is strict and "l_jc <= 1/2" non-strict, as in the paper.
//!
//! Parameters: `alpha` = 0.51 (the paper's default); li-2020 tuned it to 0.8^7 = 0.2097152 on
//! MSLR. Any alpha > 0 is accepted for that reason, though the analysis needs alpha > 1/2.

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::bandit::footprint::Footprint;
use crate::bandit::params::{Open, policy_params};
use crate::bandit::stats::argbest::ArgMax;
use crate::bandit::stats::beta::sample_beta;
use crate::bandit::stats::cached::{Cached, evidence_total};
use crate::bandit::stats::duel_table::DuelTable;
use crate::bandit::stats::ucb::{threshold, ucb};
use crate::bandit::stats::upper_copeland::{UpperCopeland, candidates_from_scratch};
use crate::bandit::{Arm, BanditRng, Pair, Policy, View, Win};

/// DTS's bytes per pair of rankers: its table of P(theta_ij > 1/2) as `f64` and as a `u64`
/// threshold, and its upper Copeland scores kept step by step (see `bandit::memory`).
pub const BYTES_PER_PAIR: u64 = 41;

policy_params! {
    /// Parameters of `dts`.
    pub struct DtsParams for Dts {
        /// Exploration parameter of the confidence bounds.
        pub alpha: f64 = 0.51, Open(0.0, 1e6);
    }
    memory(params, k) => Footprint::per_pair(BYTES_PER_PAIR);
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dts {
    alpha: f64,
    /// Outcomes heard so far.
    t: u64,
    /// Outcomes heard per arm of duels that arm led (was chosen first); grows with the arms.
    #[serde(default)]
    first_counts: Vec<u64>,
    #[serde(skip)]
    table: Cached<(u64, DuelTable)>,
    /// Upper Copeland scores kept step by step, for the evidence total stamped with them.
    #[serde(skip)]
    copeland: Cached<(u64, Box<UpperCopeland>)>,
}

impl Dts {
    pub fn new(params: DtsParams, _k: usize, _rng: &mut BanditRng) -> Self {
        Dts::resumed(params, 0)
    }

    /// DTS taking over a run that has heard `heard` outcomes (its clock starts there).
    pub fn resumed(params: DtsParams, heard: u64) -> Self {
        Dts {
            alpha: params.alpha,
            t: heard,
            first_counts: Vec::new(),
            table: Cached(None),
            copeland: Cached(None),
        }
    }

    /// ln t for the next step.
    pub fn log_term(&self) -> f64 {
        ((self.t + 1) as f64).ln()
    }

    /// u_ij with the prior of one win each way.
    pub fn upper(&self, view: &View, i: Arm, j: Arm) -> f64 {
        ucb(
            view.score(i, j) + 1.0,
            view.count(i, j) + 2.0,
            self.alpha,
            self.log_term(),
        )
    }

    /// l_ij = 1 - u_ji.
    pub fn lower(&self, view: &View, i: Arm, j: Arm) -> f64 {
        1.0 - self.upper(view, j, i)
    }

    /// The arms with the largest upper Copeland score: kept step by step
    /// ([`crate::bandit::stats::upper_copeland`]), or computed directly before the cache is built.
    pub fn candidates(&self, view: &View) -> Vec<Arm> {
        let log_term = self.log_term();
        match self.copeland.0.as_ref() {
            Some((synced, kept))
                if *synced == evidence_total(view) && kept.log_term() == log_term =>
            {
                kept.candidates()
            }
            _ => {
                let active: Vec<Arm> = view.active_arms().collect();
                candidates_from_scratch(view, &active, self.alpha, log_term)
            }
        }
    }

    /// Whether l_jc <= 1/2 (c does not surely beat j): u_cj >= 1/2, that is, not ln t below the
    /// pair's threshold (the arithmetic of the candidates, [`crate::bandit::stats::ucb::threshold`]).
    fn not_surely_beaten(&self, view: &View, j: Arm, c: Arm, log_term: f64) -> bool {
        log_term >= threshold(view.score(c, j) + 1.0, view.count(c, j) + 2.0, self.alpha)
    }

    fn fresh<'a>(&'a self, view: &View) -> Option<&'a DuelTable> {
        self.table
            .0
            .as_ref()
            .filter(|(synced, _)| *synced == evidence_total(view))
            .map(|(_, t)| t)
    }

    pub(crate) fn warm_cache(&mut self, view: &View) {
        self.rebuild(view);
    }

    fn rebuild(&mut self, view: &View) {
        let arms: Vec<Arm> = view.active_arms().collect();
        let copeland = UpperCopeland::build(view, &arms, self.alpha, self.log_term());
        self.copeland = Cached(Some((evidence_total(view), Box::new(copeland))));
        // Cells carry over only from a table that heard every outcome in `view`: after one it
        // missed (of a ranker retired since, or before this outcome reached it), a reused cell
        // would keep a count that is no longer the matrix's.
        let total = evidence_total(view);
        let previous: Vec<DuelTable> = self
            .table
            .0
            .take()
            .filter(|(synced, _)| *synced == total)
            .map(|(_, t)| vec![t])
            .unwrap_or_default();
        let table = DuelTable::build(view, &arms, &previous);
        self.table = Cached(Some((evidence_total(view), table)));
    }

    /// Counts an outcome of a duel that `first` led.
    fn count_first(&mut self, first: Arm) {
        if self.first_counts.len() <= first {
            self.first_counts.resize(first + 1, 0);
        }
        self.first_counts[first] += 1;
    }

    /// How many outcomes were heard of duels `arm` led.
    pub fn times_first(&self, arm: Arm) -> u64 {
        self.first_counts.get(arm).copied().unwrap_or(0)
    }

    fn learn(&mut self, view: &View, a: Arm, b: Arm, won: bool) {
        self.t += 1;
        let total = evidence_total(view);
        let log_term = self.log_term();
        let in_step = matches!(self.table.0.as_ref(), Some((synced, _)) if *synced + 1 == total)
            && matches!(self.copeland.0.as_ref(), Some((synced, _)) if *synced + 1 == total);
        if !in_step {
            return self.rebuild(view);
        }
        let (synced, table) = self.table.0.as_mut().expect("in step");
        if won {
            table.record_win(view, a, b);
        } else {
            table.recompute(view, a, b);
        }
        *synced = total;
        let (synced, copeland) = self.copeland.0.as_mut().expect("in step");
        copeland.update_pair(view, a, b);
        copeland.advance(log_term);
        *synced = total;
    }
}

impl Policy for Dts {
    fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Pair {
        let candidates = self.candidates(view);
        let built;
        let table = match self.fresh(view) {
            Some(t) => t,
            None => {
                built = DuelTable::build(view, &view.active_arms().collect::<Vec<_>>(), &[]);
                &built
            }
        };
        // First Thompson sample, only for pairs involving a candidate, in the order of the
        // pairs (x < y) of the table: a candidate's row whole, another's at the candidates only.
        let n = table.arms.len();
        let is_candidate: Vec<bool> = table.arms.iter().map(|a| candidates.contains(a)).collect();
        let mut wins = vec![0u32; n];
        table.sample_wins_marked(view, &is_candidate, &mut wins, rng);
        let mut first = ArgMax::new();
        for x in (0..n).filter(|&x| is_candidate[x]) {
            first.offer(table.arms[x], wins[x] as f64, rng);
        }
        let c = first.arm().expect("some candidate");
        // Second Thompson sample among the arms that c does not surely beat.
        let log_term = self.log_term();
        let mut second = ArgMax::new();
        for j in view.active_arms() {
            if j == c {
                second.offer(j, 0.5, rng);
            } else if self.not_surely_beaten(view, j, c, log_term) {
                let theta = sample_beta(view.score(j, c) + 1.0, view.score(c, j) + 1.0, rng);
                second.offer(j, theta, rng);
            }
        }
        Pair::new(c, second.arm().expect("c qualifies"))
    }

    fn update<R: Rng + ?Sized>(&mut self, view: &View, win: Win, _rng: &mut R) {
        let Win { winner, loser, .. } = win;
        self.count_first(win.duel().first);
        self.learn(view, winner, loser, true);
    }

    fn tie<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, _rng: &mut R) {
        self.count_first(a);
        self.learn(view, a, b, false);
    }

    fn self_duel<R: Rng + ?Sized>(&mut self, _view: &View, arm: Arm, _rng: &mut R) {
        // A step with no evidence: only the clock moves (see `Policy::self_duel`), and the
        // count of the arm that led it.
        self.count_first(arm);
        self.t += 1;
        let log_term = self.log_term();
        if let Some((_, copeland)) = self.copeland.0.as_mut() {
            copeland.advance(log_term);
        }
    }

    fn warm(&mut self, view: &View) {
        self.warm_cache(view);
    }

    fn arm_added(&mut self, view: &View, _arm: Arm) {
        self.rebuild(view);
    }

    fn arm_retired(&mut self, view: &View, _arm: Arm) {
        self.rebuild(view);
    }

    fn belief(&self, view: &View) -> Option<Arm> {
        crate::bandit::stats::argbest::highest_positive(view.active_arms(), |a| {
            self.times_first(a) as f64
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::{BanditState, Outcome, PolicySpec, TieRule};
    use rand::SeedableRng;

    /// A state restored from JSON (its caches empty, so its tables are computed from the win
    /// matrix) chooses exactly as the live state it was saved from, whose tables were kept up to
    /// date outcome by outcome: checked every 10 duels of 300, over 16 random number streams
    /// each, for 60 runs with ties counted as half a win, outcomes applied late and out of
    /// order, and rankers added and retired (outcomes of retired rankers still arrive, which the
    /// policy does not hear of).
    #[test]
    fn a_restored_state_chooses_as_the_live_one() {
        for seed in 0..60u64 {
            let mut rng = BanditRng::seed_from_u64(seed);
            let k = 3 + (seed % 5) as usize;
            let spec = PolicySpec::new("dts");
            let mut state = BanditState::new(&spec, k, TieRule::HalfWin, &mut rng).unwrap();
            let mut pending: Vec<Pair> = Vec::new();
            for step in 0..300 {
                pending.push(state.select(&mut rng));
                match rng.random_range(0..40) {
                    0 => {
                        state.add_arm();
                    }
                    1 => {
                        let active: Vec<Arm> = state.view().active_arms().collect();
                        if active.len() > 2 {
                            let arm = active[rng.random_range(0..active.len())];
                            state.retire_arm(arm).unwrap();
                        }
                    }
                    _ => {}
                }
                if step % 3 == 2 {
                    while !pending.is_empty() {
                        let pair = pending.swap_remove(rng.random_range(0..pending.len()));
                        let outcome = match rng.random_range(0..5) {
                            0 => Outcome::Tie,
                            1 | 2 => Outcome::FirstWins,
                            _ => Outcome::SecondWins,
                        };
                        state.record(pair, outcome, &mut rng).unwrap();
                    }
                }
                if step % 10 == 9 {
                    let json = serde_json::to_string(&state).unwrap();
                    let restored: BanditState = serde_json::from_str(&json).unwrap();
                    for stream in 0..16u64 {
                        let mut live_rng = BanditRng::seed_from_u64(stream);
                        let mut restored_rng = BanditRng::seed_from_u64(stream);
                        assert_eq!(
                            state.select(&mut live_rng),
                            restored.select(&mut restored_rng),
                            "run {seed}, step {step}, stream {stream}"
                        );
                    }
                }
            }
        }
    }

    /// States written before DTS had a belief have no `first_counts`: they still load, with no
    /// belief until DTS leads a duel.
    #[test]
    fn states_without_first_counts_still_load() {
        let old: Dts = serde_json::from_str(r#"{"alpha": 0.51, "t": 12}"#).unwrap();
        assert_eq!(old.t, 12);
        assert_eq!(old.times_first(3), 0);
        let mut d = old.clone();
        d.count_first(3);
        assert_eq!((d.times_first(3), d.times_first(0)), (1, 0));
    }
}
