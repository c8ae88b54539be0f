//! How slowly any consistent policy's regret can grow on a matrix: the constant C of the
//! asymptotic lower bound liminf R(T) / ln T >= C, for policies whose regret is o(T^a) for every
//! a > 0 on every matrix (consistent, as the papers' bounds assume).
//!
//! **With a Condorcet winner** it is RMED's bound (Komiyama, Honda, Kashima and Nakagawa 2015,
//! Theorem 2): every other arm i must be shown to lose to some arm, and the cheapest way is one
//! pair: C = sum over i of min over the arms j that beat i of r(i, j) / kl(p_ji, 1/2), r the
//! duel's regret. Otherwise the matrix where i beats everyone by a hair would not be told apart,
//! and a consistent policy must tell it apart within ln T / kl comparisons of some pair.
//!
//! **Without one** it is a lower bound of Komiyama, Honda and Nakagawa's Copeland bound (2016,
//! Theorem 1), from the alternatives in which one arm i that is not a Copeland winner becomes
//! one by winning `need` = best score - i's score more of its pairs. The alternative may flip any
//! `need` of i's losses, so the comparisons x_j = q_ij kl(p_ji, 1/2) per ln T of i's losing pairs
//! must have their `need` smallest summing to 1. The cheapest such x is a vertex of that
//! polytope: x_j = 1 / (m - free) on the m cheapest pairs (free = losses - need, m > free), so
//! arm i costs min over m of (sum of the m smallest r(i, j) / kl(p_ji, 1/2)) / (m - free). The
//! full bound also counts alternatives that lower the Copeland winners; leaving them out keeps a
//! lower bound, and with a Condorcet winner (need = every loss, free = 0) the two coincide.
//!
//! What it is for: a yardstick of order. It is asymptotic, so at the horizons simulated a policy
//! can sit below it (the finite-time shape of such bounds is nearer ln(T gap^2) than ln T:
//! Garivier, Menard and Stoltz 2019), and one several times above it pays for comparisons the
//! information it needs does not ask for.

use super::regret::Regret;
use crate::bandit::kl_bernoulli;
use crate::sim::matrix::PrefMatrix;

/// C of liminf R(T) / ln T >= C on `matrix` scored by `regret` (see the module docs); 0 when
/// every arm is a winner.
pub fn regret_rate(matrix: &PrefMatrix, regret: &Regret) -> f64 {
    let k = matrix.k();
    let scores = matrix.copeland_scores();
    let best = scores.iter().copied().max().unwrap_or(0);
    (0..k)
        .filter(|&i| !regret.is_winner(i))
        .map(|i| {
            let mut costs: Vec<f64> = (0..k)
                .filter(|&j| j != i && matrix.p(j, i) > 0.5)
                .map(|j| regret.of_pair(i, j) / kl_bernoulli(matrix.p(j, i), 0.5))
                .collect();
            costs.sort_by(f64::total_cmp);
            let need = best - scores[i];
            cheapest_cover(&costs, need)
        })
        .sum()
}

/// min of sum c_j x_j over x >= 0 whose `need` smallest entries sum to at least 1, `costs`
/// sorted ascending: the best vertex x = 1 / (m - free) on the m cheapest.
fn cheapest_cover(costs: &[f64], need: usize) -> f64 {
    let free = costs.len().saturating_sub(need);
    let mut prefix = 0.0;
    let mut best = f64::INFINITY;
    for (m, c) in costs.iter().enumerate().map(|(i, c)| (i + 1, c)) {
        prefix += c;
        if m > free {
            best = best.min(prefix / (m - free) as f64);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(rows: Vec<Vec<f64>>) -> PrefMatrix {
        PrefMatrix::from_rows(rows, None).unwrap()
    }

    #[test]
    fn with_a_condorcet_winner_each_arm_pays_its_cheapest_loss() {
        // Arm 0 beats 1 at 0.6 and 2 at 0.7; arm 1 beats 2 at 0.8.
        let m = matrix(vec![
            vec![0.5, 0.6, 0.7],
            vec![0.4, 0.5, 0.8],
            vec![0.3, 0.2, 0.5],
        ]);
        let r = Regret::of(&m);
        // Arm 1's one loss: r(1, 0) = 0.1 / 2. Arm 2 loses to 0 (r = 0.2 / 2) and to 1
        // (r = (0.1 + 0.2) / 2); the cheaper per unit of information wins.
        let arm1 = 0.05 / kl_bernoulli(0.6, 0.5);
        let arm2 = (0.1 / kl_bernoulli(0.7, 0.5)).min(0.15 / kl_bernoulli(0.8, 0.5));
        assert!((regret_rate(&m, &r) - (arm1 + arm2)).abs() < 1e-12);
    }

    #[test]
    fn a_cover_spreads_over_the_cheapest_pairs_when_that_is_cheaper() {
        // The alternative flips any two of three losses (need 2, free 1), so every two pairs'
        // x must sum to 1: two pairs at 1 each cost 2 c, three at 1/2 each 3 c / 2.
        assert!((cheapest_cover(&[1.0, 1.0, 1.0], 2) - 1.5).abs() < 1e-12);
        // With one cheap pair and two dear ones, two pairs at 1 beat three at 1/2.
        assert!((cheapest_cover(&[1.0, 1.0, 10.0], 2) - 2.0).abs() < 1e-12);
        // need = every loss: the cheapest single pair.
        assert!((cheapest_cover(&[2.0, 3.0], 2) - 2.0).abs() < 1e-12);
        // One flip of either loss makes the alternative (need 1, free 1): both pairs at 1.
        assert!((cheapest_cover(&[2.0, 3.0], 1) - 5.0).abs() < 1e-12);
    }

    #[test]
    fn a_cycle_of_copeland_winners_costs_nothing() {
        // Three arms in a cycle: all Copeland winners, nothing to rule out.
        let m = matrix(vec![
            vec![0.5, 0.6, 0.4],
            vec![0.4, 0.5, 0.6],
            vec![0.6, 0.4, 0.5],
        ]);
        assert_eq!(regret_rate(&m, &Regret::of(&m)), 0.0);
    }
}
