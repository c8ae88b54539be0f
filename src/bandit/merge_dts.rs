//! `merge_dts`: Merge Double Thompson Sampling (li-2020, Algorithms 1-3).
//!
//! Arms play in small batches ([`super::tournament`]: elimination by relative upper confidence
//! bounds, merging, stages). At each step, in a batch drawn uniformly at random:
//! - Phase I (SampleTournament): for every pair of the batch, theta_ij ~ Beta(w_ij + 1, w_ji + 1)
//!   and theta_ji = 1 - theta_ij; the first arm c wins the most sampled duels (ties at random).
//!   Only the indicators theta_ij > 1/2 matter, and each is drawn as one Bernoulli with the exact
//!   probability P(Beta > 1/2) ([`super::duel_table`]): the same distribution of choices as
//!   sampling theta, far cheaper.
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
//!
//! Time t advances with outcomes, not selections (see [`super::tournament`]); counts carry a prior
//! of one win each way; ties counted as half a win make counts non-integer, in which case the
//! pairs concerned are sampled from the Beta distribution directly.
//!
//! More than two rankers per query (multileaving): see [`super::merge_dts_set`].

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::argbest::ArgMax;
use super::beta::sample_beta;
use super::cached::{Cached, evidence_total};
use super::duel_table::DuelTable;
use super::spec::{PolicyParams, check_range};
use super::tournament::{Confidence, Tournament};
use super::{Arm, BanditRng, Pair, Policy, View, Win};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MergeDtsParams {
    /// Exploration parameter of the elimination bounds.
    pub alpha: f64,
    /// Batch size M.
    pub batch_size: usize,
    /// Exploration offset C in ln(t + C).
    pub c: f64,
}

impl Default for MergeDtsParams {
    fn default() -> Self {
        MergeDtsParams {
            alpha: 1.01,
            batch_size: 4,
            c: 4e6,
        }
    }
}

/// Validation shared by the Merge policies.
pub fn validate_merge(alpha: f64, batch_size: usize, c: f64) -> Result<(), String> {
    check_range("alpha", alpha, 0.0, 1e6, false)?;
    if batch_size < 2 {
        return Err(format!("`batch_size` must be at least 2, got {batch_size}"));
    }
    check_range("c", c, 0.0, 1e300, false)
}

impl PolicyParams for MergeDtsParams {
    fn validate(&self, _k: usize) -> Result<(), String> {
        validate_merge(self.alpha, self.batch_size, self.c)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergeDts {
    tournament: Tournament,
    #[serde(skip)]
    tables: Cached<Tables>,
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
            tournament: Tournament::new(k, params.batch_size, confidence, rng),
            tables: Cached(None),
        }
    }

    pub fn tournament(&self) -> &Tournament {
        &self.tournament
    }

    /// The cached table of batch `b`, when it matches the batch and the win matrix.
    fn table(&self, view: &View, b: usize) -> Option<&DuelTable> {
        let tables = self.tables.0.as_ref()?;
        let table = tables.tables.get(b)?;
        (tables.synced == evidence_total(view) && table.arms == self.tournament.batches()[b])
            .then_some(table)
    }

    /// Rebuilds the tables after the batches changed, reusing every cell that carries over.
    fn rebuild_tables(&mut self, view: &View) {
        let previous = self.tables.0.take().map(|t| t.tables).unwrap_or_default();
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
        table.sample_wins(view, wins, rng);
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

    fn max_rankers_per_query(&self) -> usize {
        super::multi::ANY_NUMBER
    }

    /// m rankers per query: see [`super::merge_dts_set`]; m = 2 is `select`.
    fn select_set<R: Rng + ?Sized>(
        &self,
        view: &View,
        m: usize,
        rng: &mut R,
    ) -> Result<Vec<Arm>, super::SetError> {
        super::multi::check_size(m, super::multi::ANY_NUMBER)?;
        if m == 2 {
            return Ok(super::multi::pair_set(self.select(view, rng)));
        }
        let table = |b| self.table(view, b);
        Ok(super::merge_dts_set::select_set(
            &self.tournament,
            table,
            view,
            m,
            rng,
        ))
    }

    fn update_set<R: Rng + ?Sized>(&mut self, view: &View, heard: &super::SetUpdate, rng: &mut R) {
        if heard.results.len() < 2 {
            return super::multi::feed_pairwise(self, view, heard, rng);
        }
        super::merge_dts_set::learn_set(&mut self.tournament, view, heard, rng);
        // Every pair of the query changed: no cell of the old tables may be reused.
        self.tables = Cached(None);
        self.rebuild_tables(view);
    }
}
