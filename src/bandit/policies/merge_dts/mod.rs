//! `merge_dts`: Merge Double Thompson Sampling (li-2020, Algorithms 1-3).
//!
//! Arms play in small batches ([`crate::bandit::stats::tournament`]: elimination by relative upper confidence
//! bounds, merging, stages). At each step, in a batch drawn uniformly at random:
//! - Phase I (SampleTournament): for every ordered pair of the batch, theta_ij ~
//!   Beta(w_ij + 1, w_ji + 1); the first arm c has the most theta_cj > 1/2 (ties at random). By
//!   default (`phase1 = independent`) theta_ij and theta_ji are drawn independently, as the
//!   authors' code does; `phase1 = paper` sets theta_ji = 1 - theta_ij, as Algorithm 2 writes it,
//!   so each pair is one sampled duel. Only the indicators theta_ij > 1/2 matter, and each is
//!   drawn as one Bernoulli with the probability P(Beta > 1/2), exact to 2^-31
//!   ([`crate::bandit::stats::duel_table`] rounds it so that a restored state draws as the live
//!   one): the distribution of choices of sampling theta, far cheaper.
//! - Phase II (RelativeTournament): phi_j ~ Beta(w_jc + 1, w_cj + 1) for the other arms of the
//!   batch, phi_c = 1, and the second arm d is the argmin (ties at random). Since phi_j < 1 almost
//!   surely, d != c whenever the batch has another arm: a suboptimal arm never duels itself.
//!
//! Once one arm survives it is compared with itself (no regret if it is the Condorcet winner); it
//! is the policy's belief, and the surviving arms are its contenders.
//!
//! Parameters and defaults:
//! - `alpha` = 1.01, `batch_size` (M) = 4: the paper's default parameters (Table 1 / section 5.6);
//!   the theory needs alpha > 1/2, but any alpha > 0 is accepted because li-2020's experiments
//!   tune it below that (alpha = 0.8^6 = 0.262144 was best on MSLR, with 0.8^7 and below starting
//!   to eliminate the Condorcet winner in some runs).
//! - `c` (C) = 4e6. The paper's C(eps) = ((4 alpha - 1) K^2 / ((2 alpha - 1) eps))^(1 / (2 alpha - 1))
//!   depends on the failure probability eps = 1/T and so on a horizon that an online experiment
//!   does not have. With the default alpha and K = 136 the paper computes C = 4,726,908; its
//!   tuning found C = 4e6 best, the same order. C only enters as ln(t + C), so a horizon-free
//!   constant of that order is the natural default; small experiments may lower it to eliminate
//!   sooner.
//! - Tuned values for large experiments (li-2020 section 6.7, MSLR-Navigational): alpha = 0.8^6,
//!   M = 16, C = 4e5..4e6.
//! - `phase1` = `independent` (default) or `paper`, as above. Measured with the tuned values
//!   (C = 4e6), 200 paired runs of 10^6 steps: independent draws have less regret on
//!   MSLR-Perfect (-411 +- 129 at 10^6, -43 +- 16 at 10^5) and no significant difference on
//!   MSLR-Navigational (-161 +- 140; -22 +- 15); accuracy 1.000 against 0.995 on both.
//! - `reset_single_batch` = `true` (default) or `false`: whether stages (resetting t) keep
//!   beginning once the survivors share one batch ([`crate::bandit::stats::tournament`]). `false` follows the
//!   authors' code; in the same runs it made no significant difference (+41 +- 29 and +18 +- 11
//!   at 10^6 with paper draws), so the default keeps the behaviour joust always had.
//! - Experiments stored before these parameters existed keep what they ran with (paper draws,
//!   resets), whatever the defaults: both choices live in the stored policy state, and a state
//!   without them reads as the old behaviour.
//!
//! Time t advances with outcomes, not selections (see [`crate::bandit::stats::tournament`]); counts carry a prior
//! of one win each way; ties counted as half a win make counts non-integer, in which case the
//! pairs concerned are sampled from the Beta distribution directly.
//!
//! More than two rankers per query (multileaving): see [`set`].

mod set;

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::bandit::footprint::Footprint;
use crate::bandit::multi::ANY_NUMBER;
use crate::bandit::params::{Any, AtLeast, Open, policy_params};
use crate::bandit::stats::argbest::ArgMax;
use crate::bandit::stats::beta::sample_beta;
use crate::bandit::stats::cached::{Cached, evidence_total};
use crate::bandit::stats::duel_table::DuelTable;
use crate::bandit::stats::tournament::{Confidence, Tournament};
use crate::bandit::{Arm, BanditRng, Pair, Policy, SetChoice, View, Win};

policy_params! {
    /// Parameters of `merge_dts`.
    pub struct MergeDtsParams for MergeDts {
        /// Exploration parameter of the elimination bounds.
        pub alpha: f64 = 1.01, Open(0.0, 1e6);
        /// Batch size M.
        pub batch_size: usize = 4, AtLeast(2);
        /// Exploration offset C in ln(t + C).
        pub c: f64 = 4e6, Open(0.0, 1e300);
        /// How Phase I draws the pair of a batch.
        pub phase1: Phase1 = Phase1::Independent, Any;
        /// Whether stages keep beginning (t reset) once the survivors share one batch.
        pub reset_single_batch: bool = true, Any;
    }
    rankers_per_query = ANY_NUMBER;
    for_many_rankers = true;
    // One DTS table of 16 bytes per pair per batch of B rankers.
    memory(params, k) => Footprint::per_ranker(16u64.saturating_mul(params.batch_size as u64), "O(K·B)");
}

/// How Phase I draws theta_ij and theta_ji.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase1 {
    /// theta_ji = 1 - theta_ij (li-2020 Algorithm 2): each pair is one sampled duel.
    Paper,
    /// theta_ij and theta_ji drawn independently (the authors' code).
    Independent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergeDts {
    tournament: Tournament,
    /// States stored before this choice existed read as [`Phase1::Paper`], as they were run.
    #[serde(default = "phase1_before")]
    phase1: Phase1,
    #[serde(skip)]
    tables: Cached<Tables>,
}

/// What states stored without `phase1` did: the paper's complementary draws.
fn phase1_before() -> Phase1 {
    Phase1::Paper
}

/// One Phase I table per batch, in batch order, valid for the evidence total `synced`.
#[derive(Clone)]
struct Tables {
    synced: u64,
    tables: Vec<DuelTable>,
}

impl MergeDts {
    pub fn new(params: MergeDtsParams, k: usize, rng: &mut BanditRng) -> Self {
        let confidence = Confidence {
            alpha: params.alpha,
            c: params.c,
        };
        MergeDts {
            tournament: Tournament::new(k, params.batch_size, confidence, rng)
                .with_single_batch_reset(params.reset_single_batch),
            phase1: params.phase1,
            tables: Cached(None),
        }
    }

    pub fn tournament(&self) -> &Tournament {
        &self.tournament
    }

    pub fn phase1(&self) -> Phase1 {
        self.phase1
    }

    /// The cached table of batch `b`, when it matches the batch and the win matrix.
    fn table(&self, view: &View, b: usize) -> Option<&DuelTable> {
        let tables = self.tables.0.as_ref()?;
        let table = tables.tables.get(b)?;
        (tables.synced == evidence_total(view) && table.arms == self.tournament.batches()[b])
            .then_some(table)
    }

    /// Rebuilds the tables after the batches changed, reusing every cell that carries over from
    /// tables that heard every outcome in `view` (a cell that missed one would stay wrong).
    fn rebuild_tables(&mut self, view: &View) {
        let total = evidence_total(view);
        let previous = self
            .tables
            .0
            .take()
            .filter(|t| t.synced == total)
            .map(|t| t.tables)
            .unwrap_or_default();
        let tables = self
            .tournament
            .batches()
            .iter()
            .map(|batch| DuelTable::build(view, batch, &previous))
            .collect();
        self.tables = Cached(Some(Tables {
            synced: evidence_total(view),
            tables,
        }));
    }

    fn learn<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, won: bool, rng: &mut R) {
        let total = evidence_total(view);
        let in_step = self
            .tables
            .0
            .as_ref()
            .is_some_and(|t| t.synced + 1 == total);
        if in_step {
            let tables = self.tables.0.as_mut().expect("in step");
            let table = self
                .tournament
                .batch_of(a)
                .and_then(|bi| tables.tables.get_mut(bi));
            match table {
                Some(table) if won => table.record_win(view, a, b),
                Some(table) => table.recompute(view, a, b),
                None => {}
            }
            tables.synced = total;
        }
        let changed = self.tournament.record(view, a, b, !won, rng);
        if changed || !in_step {
            self.rebuild_tables(view);
        }
    }
}

impl Policy for MergeDts {
    fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Pair {
        if let Some(last) = self.tournament.settled() {
            return Pair::new(last, last);
        }
        let b = self.tournament.pick_batch(rng);
        let batch = &self.tournament.batches()[b];
        // Phase I.
        let built;
        let table = match self.table(view, b) {
            Some(t) => t,
            None => {
                built = DuelTable::build(view, batch, &[]);
                &built
            }
        };
        let mut wins_buf = [0u32; 32];
        let mut wins_vec;
        let wins: &mut [u32] = if batch.len() <= wins_buf.len() {
            &mut wins_buf[..batch.len()]
        } else {
            wins_vec = vec![0u32; batch.len()];
            &mut wins_vec
        };
        match self.phase1 {
            Phase1::Paper => table.sample_wins(view, wins, rng),
            Phase1::Independent => table.sample_wins_independent(view, wins, rng),
        }
        let mut first = ArgMax::new();
        for (pos, &w) in wins.iter().enumerate() {
            first.offer(pos, w as f64, rng);
        }
        let c = batch[first.arm().expect("batch is not empty")];
        // Phase II: argmin of phi, as argmax of -phi; phi_c = 1.
        let mut second = ArgMax::new();
        for &j in batch {
            let phi = if j == c {
                1.0
            } else {
                sample_beta(view.score(j, c) + 1.0, view.score(c, j) + 1.0, rng)
            };
            second.offer(j, -phi, rng);
        }
        Pair::new(c, second.arm().expect("batch is not empty"))
    }

    fn update<R: Rng + ?Sized>(&mut self, view: &View, win: Win, rng: &mut R) {
        let Win { winner, loser, .. } = win;
        self.learn(view, winner, loser, true, rng);
    }

    fn tie<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, rng: &mut R) {
        self.learn(view, a, b, false, rng);
    }

    fn self_duel<R: Rng + ?Sized>(&mut self, _view: &View, _arm: Arm, _rng: &mut R) {
        self.tournament.tick();
    }

    fn warm(&mut self, view: &View) {
        self.tournament.warm(view);
        self.rebuild_tables(view);
    }

    fn arm_added(&mut self, view: &View, arm: Arm) {
        self.tournament.add_arm(view, arm);
        self.rebuild_tables(view);
    }

    fn arm_retired(&mut self, view: &View, arm: Arm) {
        self.tournament.retire_arm(view, arm);
        self.rebuild_tables(view);
    }

    fn contenders(&self, _view: &View) -> Option<Vec<Arm>> {
        Some(self.tournament.survivors())
    }

    fn belief(&self, _view: &View) -> Option<Arm> {
        self.tournament.settled()
    }

    /// m rankers per query: see [`set`]; m = 2 is `select`.
    fn select_set<R: Rng + ?Sized>(&self, view: &View, m: usize, rng: &mut R) -> SetChoice {
        crate::bandit::multi::check_size(m, ANY_NUMBER)?;
        if m == 2 {
            return Ok(crate::bandit::multi::pair_set(self.select(view, rng)));
        }
        let table = |b| self.table(view, b);
        Ok(set::select_set(&self.tournament, table, view, m, rng))
    }

    fn update_set<R: Rng + ?Sized>(
        &mut self,
        view: &View,
        heard: &crate::bandit::SetUpdate,
        rng: &mut R,
    ) {
        if heard.results.len() < 2 {
            return crate::bandit::multi::feed_pairwise(self, view, heard, rng);
        }
        // The tables were in step before this query when they trail the evidence by exactly the
        // results the policy hears (anything else, e.g. results involving retired arms, moved
        // cells they did not see).
        let total = evidence_total(view);
        let in_step = self
            .tables
            .0
            .as_ref()
            .is_some_and(|t| t.synced + heard.results.len() as u64 == total);
        let changed = set::learn_set(&mut self.tournament, view, heard, rng);
        if !in_step {
            self.tables = Cached(None);
            return self.rebuild_tables(view);
        }
        // Only the query's pairs moved: refresh their cells, and rebuild (reusing every other
        // cell) only when the batches changed.
        let tables = self.tables.0.as_mut().expect("in step");
        for result in &heard.results {
            let (a, b) = result.arms();
            for table in &mut tables.tables {
                table.recompute(view, a, b);
            }
        }
        tables.synced = total;
        if changed {
            self.rebuild_tables(view);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::{TieRule, WinMatrix};
    use rand::SeedableRng;

    /// Phase I counts for a two-arm batch where arm 0 beat arm 1 three times and lost once:
    /// P(theta_01 > 1/2) = P(Beta(4, 2) > 1/2) = P(Binomial(5, 1/2) <= 3) = 26/32.
    fn both_win_frequency(phase1: Phase1) -> (f64, f64) {
        let mut w = WinMatrix::new(2);
        w.add_wins(0, 1, 3);
        w.add_wins(1, 0, 1);
        let active = [true; 2];
        let view = View::new(&w, &active, TieRule::Ignore);
        let table = DuelTable::build(&view, &[0, 1], &[]);
        let mut rng = BanditRng::seed_from_u64(21);
        let draws = 40_000;
        let (mut both, mut first) = (0u32, 0u32);
        let mut wins = [0u32; 2];
        for _ in 0..draws {
            match phase1 {
                Phase1::Paper => table.sample_wins(&view, &mut wins, &mut rng),
                Phase1::Independent => table.sample_wins_independent(&view, &mut wins, &mut rng),
            }
            both += u32::from(wins == [1, 1]);
            first += wins[0];
        }
        (both as f64 / draws as f64, first as f64 / draws as f64)
    }

    #[test]
    fn paper_phase1_draws_are_complementary() {
        // theta_10 = 1 - theta_01: exactly one side wins the pair, every time.
        let (both, first) = both_win_frequency(Phase1::Paper);
        assert_eq!(both, 0.0);
        // P(theta_01 > 1/2) = 0.8125; 40,000 draws: se sqrt(0.8125 * 0.1875 / 40000) = 0.00195,
        // 5 sigma 0.0098.
        assert!((first - 0.8125).abs() < 0.0098, "{first}");
    }

    #[test]
    fn independent_phase1_draws_are_independent() {
        // Both sides win the pair with probability p (1 - p) = 0.8125 * 0.1875 = 0.15234;
        // 40,000 draws: se sqrt(0.15234 * 0.84766 / 40000) = 0.0018, 5 sigma 0.0090.
        let (both, first) = both_win_frequency(Phase1::Independent);
        assert!((both - 0.152_34).abs() < 0.009, "{both}");
        assert!((first - 0.8125).abs() < 0.0098, "{first}");
    }

    /// A four-arm, one-batch tournament (stage limit 4 / 2 + 1 = 3 survivors) after 5 steps
    /// without evidence, then an outcome that eliminates arm 3 (arm 0 beat it 200 times).
    fn after_elimination(reset_single_batch: bool) -> Tournament {
        let mut rng = BanditRng::seed_from_u64(3);
        let params = MergeDtsParams {
            alpha: 0.5,
            batch_size: 4,
            c: 1.0,
            phase1: Phase1::Independent,
            reset_single_batch,
        };
        let mut policy = MergeDts::new(params, 4, &mut rng);
        assert_eq!(policy.tournament().batches().len(), 1);
        let mut w = WinMatrix::new(4);
        let active = [true; 4];
        for _ in 0..5 {
            let view = View::new(&w, &active, TieRule::Ignore);
            policy.self_duel(&view, 0, &mut rng);
        }
        w.add_wins(0, 3, 200);
        let view = View::new(&w, &active, TieRule::Ignore);
        policy.update(&view, Win::of(Pair::new(0, 3), true), &mut rng);
        assert_eq!(policy.tournament().survivors(), vec![0, 1, 2]);
        policy.tournament
    }

    #[test]
    fn stages_reset_t_in_a_single_batch_only_when_asked() {
        let reset = after_elimination(true);
        assert_eq!((reset.stage(), reset.t()), (2, 0));
        // The authors' rule: one batch remains, so no stage begins and t runs on (5 + 1).
        let kept = after_elimination(false);
        assert_eq!((kept.stage(), kept.t()), (1, 6));
    }

    #[test]
    fn stored_states_without_the_choices_keep_the_old_behaviour() {
        let mut rng = BanditRng::seed_from_u64(4);
        let params = MergeDtsParams {
            reset_single_batch: false,
            ..MergeDtsParams::default()
        };
        let policy = MergeDts::new(params, 6, &mut rng);
        assert_eq!(policy.phase1(), Phase1::Independent);
        let mut json = serde_json::to_value(&policy).unwrap();
        json.as_object_mut().unwrap().remove("phase1");
        json["tournament"]
            .as_object_mut()
            .unwrap()
            .remove("reset_single_batch");
        let old: MergeDts = serde_json::from_value(json).unwrap();
        assert_eq!(old.phase1(), Phase1::Paper);
        assert!(old.tournament().resets_single_batch());
    }

    #[test]
    fn the_choices_are_parameters_of_the_spec() {
        use crate::bandit::PolicySpec;
        let spec =
            PolicySpec::parse_cli("merge_dts:phase1=paper,reset_single_batch=false").unwrap();
        let p: MergeDtsParams = spec.params(10).unwrap();
        assert_eq!((p.phase1, p.reset_single_batch), (Phase1::Paper, false));
        let default: MergeDtsParams = PolicySpec::new("merge_dts").params(10).unwrap();
        assert_eq!(default.phase1, Phase1::Independent);
        assert!(default.reset_single_batch);
        for bad in ["merge_dts:phase1=tied", "merge_dts:reset_single_batch=1"] {
            let spec = PolicySpec::parse_cli(bad).unwrap();
            assert!(spec.params::<MergeDtsParams>(10).is_err(), "{bad}");
        }
    }

    /// After multi-ranker queries, the cached Phase I tables hold exactly the cells a fresh build
    /// from the win matrix gives: refreshing only the query's pairs misses nothing.
    #[test]
    fn set_updates_keep_the_tables_equal_to_a_fresh_build() {
        use crate::bandit::{PairResult, SetUpdate};
        use rand::Rng;
        let k = 24;
        let mut rng = BanditRng::seed_from_u64(8);
        let params = MergeDtsParams {
            batch_size: 6,
            c: 1.0,
            ..MergeDtsParams::default()
        };
        let mut policy = MergeDts::new(params, k, &mut rng);
        let mut w = WinMatrix::new(k);
        let active = vec![true; k];
        let mut compared = 0;
        for step in 0..400 {
            let view = View::new(&w, &active, TieRule::Ignore);
            let shown = policy.select_set(&view, 4, &mut rng).unwrap();
            // Lower arms win more often, so batches shrink and merge over the run.
            let mut results = Vec::new();
            for x in 0..shown.len() {
                for y in x + 1..shown.len() {
                    let (a, b) = (shown[x], shown[y]);
                    let p_first = if a < b { 0.8 } else { 0.2 };
                    let pair = Pair::new(a, b);
                    results.push(PairResult::Win(Win::of(
                        pair,
                        rng.random::<f64>() < p_first,
                    )));
                }
            }
            for r in &results {
                if let PairResult::Win(win) = r {
                    w.record_win(win.winner, win.loser);
                }
            }
            let heard = SetUpdate {
                arms: shown.clone(),
                results,
            };
            let view = View::new(&w, &active, TieRule::Ignore);
            policy.update_set(&view, &heard, &mut rng);
            for (b, batch) in policy.tournament().batches().iter().enumerate() {
                let Some(cached) = policy.table(&view, b) else {
                    continue;
                };
                let fresh = DuelTable::build(&view, batch, &[]);
                compared += 1;
                for x in 0..batch.len() {
                    for y in 0..batch.len() {
                        let (c, f) = (cached.get(x, y), fresh.get(x, y));
                        // Bit for bit: a restored state builds its tables from the counts.
                        assert_eq!(
                            c.to_bits(),
                            f.to_bits(),
                            "step {step}, batch {b}: {c} vs {f}"
                        );
                    }
                }
            }
        }
        // Every step kept its tables (none fell back to building them per query), and batches
        // shrank or merged along the way.
        assert!(compared >= 400, "{compared}");
        assert!(
            policy.tournament().batches().len() < 4 || policy.tournament().survivors().len() < k
        );
    }
}
