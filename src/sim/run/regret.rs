//! Regret of a duel, the measure of the papers' evaluations (definitions also in
//! `docs/simulation.md`).
//!
//! With a Condorcet winner w: r(c, d) = (Delta_wc + Delta_wd) / 2, Delta_wk = p_wk - 1/2 (zero for
//! k = w). Without one: Copeland regret zeta* - (zeta_c + zeta_d) / 2, zeta_i the fraction of the
//! other arms that i beats. Both are half the sum of a per-arm term, so the per-arm terms are
//! computed once per run and a step costs two lookups.
//!
//! With click feedback on learning-to-rank data (`joust simulate --letor`) the preference matrix
//! the clicks follow is unknown, so regret is utility regret over a known quality measure:
//! u* - (u_c + u_d) / 2 with u_i arm i's mean NDCG@10 over the queries, and the true winners are
//! the arms of highest utility ([`Regret::of_utilities`]).

use serde::{Deserialize, Serialize};

use crate::sim::matrix::PrefMatrix;

/// Which regret a matrix is scored with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegretKind {
    Condorcet,
    Copeland,
    /// NDCG@10 utility regret of feature rankers on LETOR data.
    NdcgUtility,
}

impl RegretKind {
    /// The name `summary.json` and `curves.csv` use.
    pub fn name(self) -> &'static str {
        match self {
            RegretKind::Condorcet => "condorcet",
            RegretKind::Copeland => "copeland",
            RegretKind::NdcgUtility => "ndcg_utility",
        }
    }
}

/// Regret of every duel on one matrix, and the arms that count as the true winner.
#[derive(Debug, Clone, PartialEq)]
pub struct Regret {
    kind: RegretKind,
    per_arm: Vec<f64>,
    winners: Vec<usize>,
}

impl Regret {
    pub fn of(matrix: &PrefMatrix) -> Self {
        let k = matrix.k();
        match matrix.condorcet_winner() {
            Some(w) => Regret {
                kind: RegretKind::Condorcet,
                per_arm: (0..k)
                    .map(|j| if j == w { 0.0 } else { matrix.p(w, j) - 0.5 })
                    .collect(),
                winners: vec![w],
            },
            None => {
                let scores = matrix.copeland_scores();
                let best = scores.iter().copied().max().unwrap_or(0);
                let others = (k - 1) as f64;
                Regret {
                    kind: RegretKind::Copeland,
                    per_arm: scores.iter().map(|&s| (best - s) as f64 / others).collect(),
                    winners: matrix.copeland_winners(),
                }
            }
        }
    }

    /// Utility regret: r(c, d) = u* - (u_c + u_d) / 2, u* = max u; the winners are every arm
    /// whose utility equals u* (exactly: equal utilities are equally good).
    pub fn of_utilities(utilities: &[f64]) -> Self {
        let best = utilities.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Regret {
            kind: RegretKind::NdcgUtility,
            per_arm: utilities.iter().map(|&u| best - u).collect(),
            winners: (0..utilities.len())
                .filter(|&i| utilities[i] == best)
                .collect(),
        }
    }

    pub fn kind(&self) -> RegretKind {
        self.kind
    }

    /// The Condorcet winner, or every Copeland winner when there is no Condorcet winner.
    pub fn winners(&self) -> &[usize] {
        &self.winners
    }

    pub fn is_winner(&self, arm: usize) -> bool {
        self.winners.contains(&arm)
    }

    /// Regret of dueling `c` against `d`.
    #[inline]
    pub fn of_pair(&self, c: usize, d: usize) -> f64 {
        0.5 * (self.per_arm[c] + self.per_arm[d])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utility_regret_is_the_mean_gap_to_the_best() {
        let r = Regret::of_utilities(&[0.5, 0.75, 0.25, 0.75]);
        assert_eq!(r.kind(), RegretKind::NdcgUtility);
        assert_eq!(r.winners(), &[1, 3]);
        assert_eq!(r.of_pair(1, 3), 0.0);
        // 0.75 - (0.5 + 0.25) / 2 = 0.375.
        assert!((r.of_pair(0, 2) - 0.375).abs() < 1e-12);
        assert!((r.of_pair(2, 2) - 0.5).abs() < 1e-12);
    }
}
