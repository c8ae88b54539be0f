//! What a decision on a matrix with a Condorcet winner costs at the least, to measure the
//! decision layer against.
//!
//! - **Oracle cost**: a rule that knows the Condorcet winner c and every gap, and compares c with
//!   each rival j until a test at level delta / (K - 1) (a union over the rivals, as the decision
//!   layer's own union over the arms) rejects "j beats c": sum over rivals j of
//!   ln((K - 1) / delta) / kl(p_cj, 1/2) comparisons, kl the Bernoulli relative entropy. Each
//!   term is the sample size at which a likelihood-ratio test's log statistic, n kl(p_cj, 1/2) in
//!   expectation, reaches its threshold.
//! - **Lower bound**: what any delta-correct rule must spend in expectation, even one told the
//!   matrix up to which arm is the winner (Garivier and Kaufmann 2016, "Optimal best arm
//!   identification with fixed confidence", the change-of-measure argument with kl(delta,
//!   1 - delta) >= ln(1 / (2.4 delta))): each rival j must be compared with c at least
//!   ln(1 / (2.4 delta)) / kl(p_cj, 1/2) times, or the matrix where j beats c by a hair could not
//!   be told apart; summed over rivals (a lower bound of the sum of those necessary comparisons:
//!   confirmation pairs with c are disjoint).
//!
//! Both are `None` without a Condorcet winner, and infinite when some p_cj is exactly 1/2.

use serde::{Deserialize, Serialize};

use crate::bandit::kl_bernoulli;
use crate::sim::matrix::PrefMatrix;

/// The oracle cost and the lower bound of one matrix at one error budget.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DecisionLimit {
    /// Comparisons an oracle that knows the matrix spends on confirmations:
    /// sum_j ln((K-1)/delta) / kl(p_cj, 1/2).
    pub oracle_cost: f64,
    /// Comparisons any delta-correct rule spends in expectation:
    /// sum_j ln(1/(2.4 delta)) / kl(p_cj, 1/2).
    pub lower_bound: f64,
}

impl DecisionLimit {
    /// The limit of `matrix` at error budget `delta`; `None` without a Condorcet winner.
    pub fn of(matrix: &PrefMatrix, delta: f64) -> Option<DecisionLimit> {
        let c = matrix.condorcet_winner()?;
        let k = matrix.k();
        if k < 2 {
            return None;
        }
        let information: f64 = (0..k)
            .filter(|&j| j != c)
            .map(|j| 1.0 / kl_bernoulli(matrix.p(c, j), 0.5))
            .sum();
        Some(DecisionLimit {
            oracle_cost: ((k - 1) as f64 / delta).ln() * information,
            lower_bound: (1.0 / (2.4 * delta)).ln() * information,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_sums_each_rivals_information() {
        // Arm 1 wins: gaps 0.1 and 0.2 over arms 0 and 2.
        let m = PrefMatrix::from_rows(
            vec![
                vec![0.5, 0.4, 0.5],
                vec![0.6, 0.5, 0.7],
                vec![0.5, 0.3, 0.5],
            ],
            None,
        )
        .unwrap();
        let d = 0.05;
        let info = 1.0 / kl_bernoulli(0.6, 0.5) + 1.0 / kl_bernoulli(0.7, 0.5);
        let l = DecisionLimit::of(&m, d).unwrap();
        assert!((l.oracle_cost - (2.0 / d).ln() * info).abs() < 1e-9);
        assert!((l.lower_bound - (1.0 / (2.4 * d)).ln() * info).abs() < 1e-9);
        // The figures, worked by hand: 1/kl(0.6, 1/2) + 1/kl(0.7, 1/2) = 61.81 nats^-1, times
        // ln 40 and ln(1/0.12).
        assert!((l.oracle_cost - 228.034).abs() < 1e-3, "{}", l.oracle_cost);
        assert!((l.lower_bound - 131.068).abs() < 1e-3, "{}", l.lower_bound);
        // No Condorcet winner: no limit.
        let cycle = PrefMatrix::from_rows(
            vec![
                vec![0.5, 0.6, 0.4],
                vec![0.4, 0.5, 0.6],
                vec![0.6, 0.4, 0.5],
            ],
            None,
        )
        .unwrap();
        assert_eq!(DecisionLimit::of(&cycle, d), None);
    }
}
