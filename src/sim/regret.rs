//! Regret of a duel (ALGORITHMS.md, "Evaluation").
//!
//! With a Condorcet winner w: r(c, d) = (Delta_wc + Delta_wd) / 2, Delta_wk = p_wk - 1/2 (zero for
//! k = w). Without one: Copeland regret zeta* - (zeta_c + zeta_d) / 2, zeta_i the fraction of the
//! other arms that i beats. Both are half the sum of a per-arm term, so the per-arm terms are
//! computed once per run and a step costs two lookups.

use serde::{Deserialize, Serialize};

use super::PrefMatrix;

/// Which regret a matrix is scored with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegretKind {
    Condorcet,
    Copeland,
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
