//! `mdb`: Multi-Dueling Bandits (Brost, Seldin, Cox and Lioma, "Multi-Dueling Bandits and Their
//! Application to Online Ranker Evaluation", CIKM 2016, Algorithm 1).
//!
//! Two relative upper confidence bounds per pair ([`crate::bandit::stats::ucb`], log term ln t): a tighter one
//! with exploration `alpha` and a looser one with `alpha * beta` (beta >= 1). At every query:
//! - E, the arms the tighter bounds do not beat (u_ij >= 1/2 against every other active arm);
//! - if E holds exactly one arm, MDB exploits: that arm alone is shown (a self-duel, no regret
//!   when it is the Condorcet winner);
//! - otherwise F, the arms the looser bounds do not beat (a superset of E), are all compared at
//!   once; when F is empty (possible without a Condorcet winner) every active arm is.
//!
//! The paper compares F whole, however large. A query here shows at most m arms: when F is
//! larger, the members of E come first (they are the likelier winners), each group drawn
//! uniformly at random without replacement ([`super::ucb_candidates::capped`]). With beta = 1
//! the two bounds coincide and MDB is [`super::ucb_candidates`].
//!
//! Conventions (as [`super::rucb`] and [`super::ucb_candidates`]):
//! - Counts start at zero and x/0 := 1; "u_ij >= 1/2" is non-strict; ties count as half a win
//!   when the experiment says so.
//! - t is the number of feedback steps heard plus one: a query with some result between active
//!   arms (one `update_set`, or one `update` / `tie`) and a self-duel are one step each. The
//!   self-duels matter: while MDB exploits a single arm, only they move t, and the widening
//!   bounds are what brings the other arms back into E. Selections never move t, so late, batched
//!   and out-of-order feedback is counted when it arrives and lost feedback never.
//! - Parameters: `alpha` = 0.51 (the usual RUCB value; MDB's analysis, like RUCB's, needs
//!   alpha > 1/2, but any alpha > 0 is accepted) and `beta` = 1.5. beta is our default, not a
//!   value from the paper: it widens the exploration term of the looser bound by sqrt(1.5), about
//!   22%, so F adds the arms that are close to the tighter bound's edge.
//! - Added arms start with no comparisons (in E at once); retired arms are never shown and are
//!   ignored as opponents.
//! - `belief` is E's single arm when it has exactly one (the arm being exploited), else none;
//!   `contenders` is none (nothing is eliminated for good).
//!
//! Cost: one threshold per arm decides both sets, cached as in [`super::ucb_candidates`]: O(K)
//! per selection, O(m K) per query learnt.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::ucb_candidates::{ChoosesByBounds, UcbBounds, capped};
use crate::bandit::multi::ANY_NUMBER;
use crate::bandit::params::{Closed, Open, policy_params};
use crate::bandit::{Arm, BanditRng, View};

policy_params! {
    /// Parameters of `mdb`.
    pub struct MdbParams for Mdb {
        /// Exploration parameter of the tighter bounds.
        pub alpha: f64 = 0.51, Open(0.0, 1e6);
        /// How much wider the looser bounds explore: their exploration parameter is alpha * beta.
        pub beta: f64 = 1.5, Closed(1.0, 1e6);
    }
    rankers_per_query = ANY_NUMBER;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mdb {
    #[serde(flatten)]
    bounds: UcbBounds,
    beta: f64,
}

/// The two sets of one query: E (tighter bounds) and F minus E (looser bounds only).
struct Sets {
    tight: Vec<Arm>,
    loose_only: Vec<Arm>,
}

impl Mdb {
    pub fn new(params: MdbParams, _k: usize, _rng: &mut BanditRng) -> Self {
        Mdb {
            bounds: UcbBounds::new(params.alpha),
            beta: params.beta,
        }
    }

    /// ln t for the next step.
    pub fn log_term(&self) -> f64 {
        self.bounds.log_term()
    }

    /// u_ij(alpha c) < 1/2 exactly when ln t < threshold(alpha) / c, so one threshold per arm
    /// decides both sets.
    fn sets(&self, view: &View) -> Sets {
        let log_term = self.log_term();
        let mut sets = Sets {
            tight: Vec::new(),
            loose_only: Vec::new(),
        };
        for (i, worst) in self.bounds.worst_thresholds(view) {
            if log_term >= worst {
                sets.tight.push(i);
            } else if self.beta * log_term >= worst {
                sets.loose_only.push(i);
            }
        }
        sets
    }

    /// E, the arms the tighter bounds do not beat.
    pub fn tight_set(&self, view: &View) -> Vec<Arm> {
        self.sets(view).tight
    }

    /// F, the arms the looser bounds do not beat, in index order.
    pub fn loose_set(&self, view: &View) -> Vec<Arm> {
        let Sets {
            mut tight,
            loose_only,
        } = self.sets(view);
        tight.extend(loose_only);
        tight.sort_unstable();
        tight
    }
}

impl ChoosesByBounds for Mdb {
    fn bounds_mut(&mut self) -> &mut UcbBounds {
        &mut self.bounds
    }

    fn choose<R: Rng + ?Sized>(&self, view: &View, m: usize, rng: &mut R) -> Vec<Arm> {
        let Sets { tight, loose_only } = self.sets(view);
        match (tight.len(), loose_only.len()) {
            (1, _) => tight,
            (0, 0) => capped(view.active_arms().collect(), Vec::new(), m, rng),
            _ => capped(tight, loose_only, m, rng),
        }
    }

    fn unbeaten(&self, view: &View) -> Vec<Arm> {
        self.sets(view).tight
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::params::PolicyParams;
    use crate::bandit::{Pair, Policy};
    use crate::bandit::{TieRule, WinMatrix};
    use rand::SeedableRng;

    fn state_with_close_rival() -> (WinMatrix, [bool; 4]) {
        // Arm 0 leads; arm 1 is close to it (48 / 100 against 0); arms 2 and 3 are far behind.
        let mut w = WinMatrix::new(4);
        w.add_wins(0, 1, 52);
        w.add_wins(1, 0, 48);
        for bad in [2, 3] {
            w.add_wins(0, bad, 95);
            w.add_wins(bad, 0, 5);
            w.add_wins(1, bad, 95);
            w.add_wins(bad, 1, 5);
        }
        w.add_wins(2, 3, 50);
        w.add_wins(3, 2, 50);
        (w, [true; 4])
    }

    #[test]
    fn a_single_tight_candidate_is_exploited_alone() {
        let mut rng = BanditRng::seed_from_u64(1);
        let (mut w, active) = state_with_close_rival();
        // Make arm 1 clearly worse than arm 0: 48 wins in 218.
        w.add_wins(0, 1, 118);
        let view = View::new(&w, &active, TieRule::Ignore);
        let mut p = Mdb::new(MdbParams::default(), 4, &mut rng);
        p.bounds.t = 199; // ln 200 = 5.3; u_10 = 48/218 + sqrt(0.51 * 5.3 / 218) = 0.33 < 1/2.
        assert_eq!(p.tight_set(&view), vec![0]);
        assert_eq!(p.select_set(&view, 4, &mut rng).unwrap(), vec![0]);
        assert_eq!(p.select(&view, &mut rng), Pair::new(0, 0));
        assert_eq!(p.belief(&view), Some(0));
    }

    #[test]
    fn the_looser_set_is_shown_when_the_tighter_one_is_not_a_single_arm() {
        let mut rng = BanditRng::seed_from_u64(2);
        let (w, active) = state_with_close_rival();
        let view = View::new(&w, &active, TieRule::Ignore);
        let mut p = Mdb::new(MdbParams::default(), 4, &mut rng);
        p.bounds.t = 99;
        // Arms 0 and 1 are unbeaten; 2 and 3 lose 5 / 100 to both (u = 0.05 + 0.15 < 1/2 even
        // at beta = 1.5: 0.05 + 0.19).
        assert_eq!(p.tight_set(&view), vec![0, 1]);
        assert_eq!(p.loose_set(&view), vec![0, 1]);
        assert_eq!(p.select_set(&view, 8, &mut rng).unwrap(), vec![0, 1]);
        assert_eq!(p.belief(&view), None);
        // A very loose bound (beta = 100: u_20 = 0.05 + sqrt(51 * 4.6 / 100) > 1) adds them.
        let mut loose = Mdb::new(
            MdbParams {
                alpha: 0.51,
                beta: 100.0,
            },
            4,
            &mut rng,
        );
        loose.bounds.t = 99;
        assert_eq!(loose.loose_set(&view), vec![0, 1, 2, 3]);
        // Capped at 3: both tight arms always, one of the others.
        for _ in 0..50 {
            let set = loose.select_set(&view, 3, &mut rng).unwrap();
            assert_eq!(set.len(), 3);
            assert!(set.starts_with(&[0, 1]), "{set:?}");
        }
    }

    #[test]
    fn beta_below_one_is_refused() {
        let bad = MdbParams {
            alpha: 0.51,
            beta: 0.9,
        };
        assert!(bad.validate(4).unwrap_err().contains("beta"));
    }
}
