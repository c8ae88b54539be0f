//! `merge_rucb`: MergeRUCB (zoghi-2015, as summarised in li-2020 sections 3 and 4.3).
//!
//! The same batch tournament as MergeDTS ([`crate::bandit::stats::tournament`]: elimination by relative upper
//! confidence bounds, merging, stages); only the choice of the duel differs. In a batch drawn
//! uniformly at random, the first arm c is drawn uniformly from the batch and the second is
//! d = argmax_j u_jc over the batch with u_cc = 1/2 (ties at random): the arm most likely to beat c.
//! Once one arm survives it is compared with itself; it is the policy's belief, and the surviving
//! arms are its contenders.
//!
//! Parameters and defaults: `alpha` = 1.01, `batch_size` (M) = 4, `c` (C) = 4e6, the defaults the
//! Merge policies share in li-2020 (see [`super::merge_dts`] for why C is a constant rather than
//! the horizon-dependent C(eps)). li-2020's tuned values for MergeRUCB (MSLR-Navigational) are
//! alpha = 0.8^6, M = 8, C = 4e5. Any alpha > 0 is accepted: the tuned alpha is below the
//! theoretical alpha > 1/2.
//!
//! Conventions: counts carry a prior of one win each way (u_jc from w_jc + 1 wins out of n + 2),
//! time advances with outcomes, not selections, as in [`crate::bandit::stats::tournament`].

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::bandit::params::{AtLeast, Open, policy_params};
use crate::bandit::stats::argbest::ArgMax;
use crate::bandit::stats::tournament::{Confidence, Tournament};
use crate::bandit::stats::ucb::ucb;
use crate::bandit::{Arm, BanditRng, Pair, Policy, View, Win};

policy_params! {
    /// Parameters of `merge_rucb`.
    pub struct MergeRucbParams for MergeRucb {
        /// Exploration parameter of the confidence bounds.
        pub alpha: f64 = 1.01, Open(0.0, 1e6);
        /// Batch size M.
        pub batch_size: usize = 4, AtLeast(2);
        /// Exploration offset C in ln(t + C).
        pub c: f64 = 4e6, Open(0.0, 1e300);
    }
    for_many_rankers = true;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergeRucb {
    tournament: Tournament,
}

impl MergeRucb {
    pub fn new(params: MergeRucbParams, k: usize, rng: &mut BanditRng) -> Self {
        let confidence = Confidence {
            alpha: params.alpha,
            c: params.c,
        };
        MergeRucb {
            tournament: Tournament::new(k, params.batch_size, confidence, rng),
        }
    }

    pub fn tournament(&self) -> &Tournament {
        &self.tournament
    }
}

impl Policy for MergeRucb {
    fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Pair {
        if let Some(last) = self.tournament.settled() {
            return Pair::new(last, last);
        }
        let batch = &self.tournament.batches()[self.tournament.pick_batch(rng)];
        let c = batch[rng.random_range(0..batch.len())];
        let alpha = self.tournament.confidence().alpha;
        let log_term = self.tournament.log_term();
        let mut best = ArgMax::new();
        for &j in batch {
            let u = if j == c {
                0.5
            } else {
                ucb(
                    view.score(j, c) + 1.0,
                    view.count(j, c) + 2.0,
                    alpha,
                    log_term,
                )
            };
            best.offer(j, u, rng);
        }
        Pair::new(c, best.arm().expect("batch is not empty"))
    }

    fn update<R: Rng + ?Sized>(&mut self, view: &View, win: Win, rng: &mut R) {
        let Win { winner, loser, .. } = win;
        self.tournament.record(view, winner, loser, false, rng);
    }

    fn tie<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, rng: &mut R) {
        self.tournament.record(view, a, b, true, rng);
    }

    fn self_duel<R: Rng + ?Sized>(&mut self, _view: &View, _arm: Arm, _rng: &mut R) {
        self.tournament.tick();
    }

    fn warm(&mut self, view: &View) {
        self.tournament.warm(view);
    }

    fn arm_added(&mut self, view: &View, arm: Arm) {
        self.tournament.add_arm(view, arm);
    }

    fn arm_retired(&mut self, view: &View, arm: Arm) {
        self.tournament.retire_arm(view, arm);
    }

    fn contenders(&self, _view: &View) -> Option<Vec<Arm>> {
        Some(self.tournament.survivors())
    }

    fn belief(&self, _view: &View) -> Option<Arm> {
        self.tournament.settled()
    }
}
