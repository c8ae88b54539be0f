//! The environment: what answers a duel. Kept apart from the policy so that the simulation loop
//! runs unchanged whether a preference-matrix draw answers ([`MatrixEnvironment`]) or a simulated
//! user clicking on an interleaved result list ([`crate::sim::letor::ClickEnvironment`]).

use rand::Rng;

use crate::bandit::Pair;
use crate::sim::matrix::PrefMatrix;

/// The result of one duel, from the point of view of `pair.first`: the bandit's own type, so an
/// environment's answer goes to the policy with the sides it was played on.
pub use crate::bandit::Outcome;

/// Anything that can answer a duel. `&mut self` because a click model may keep state (e.g. the
/// query stream); a preference matrix does not need it.
pub trait Environment {
    fn duel<R: Rng + ?Sized>(&mut self, pair: Pair, rng: &mut R) -> Outcome;

    /// Clicks per query and NDCG of the shown lists since the last call, for environments with
    /// simulated users (`sim::letor`'s user measures); `None` for a preference matrix.
    fn take_user_measures(&mut self) -> Option<(f64, f64)> {
        None
    }
}

/// Users as a preference matrix: a duel of (i, j) is a Bernoulli(p_ij) draw (one uniform and one
/// compare); an arm compared with itself ties, as identical result lists would.
#[derive(Debug, Clone)]
pub struct MatrixEnvironment {
    matrix: PrefMatrix,
}

impl MatrixEnvironment {
    pub fn new(matrix: PrefMatrix) -> Self {
        MatrixEnvironment { matrix }
    }
}

impl Environment for MatrixEnvironment {
    #[inline]
    fn duel<R: Rng + ?Sized>(&mut self, pair: Pair, rng: &mut R) -> Outcome {
        if pair.first == pair.second {
            Outcome::Tie
        } else if self.matrix.duel(pair.first, pair.second, rng) {
            Outcome::FirstWins
        } else {
            Outcome::SecondWins
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::BanditRng;
    use rand::SeedableRng;

    #[test]
    fn self_duels_tie_and_certain_duels_are_certain() {
        let m = PrefMatrix::from_rows(vec![vec![0.5, 1.0], vec![0.0, 0.5]], None).unwrap();
        let mut env = MatrixEnvironment::new(m);
        let mut rng = BanditRng::seed_from_u64(1);
        for _ in 0..100 {
            assert_eq!(env.duel(Pair::new(1, 1), &mut rng), Outcome::Tie);
            assert_eq!(env.duel(Pair::new(0, 1), &mut rng), Outcome::FirstWins);
            assert_eq!(env.duel(Pair::new(1, 0), &mut rng), Outcome::SecondWins);
        }
    }

    #[test]
    fn win_frequency_matches_the_matrix() {
        // 40,000 Bernoulli(0.7) draws: standard error sqrt(0.21 / 40000) = 0.0023, so a
        // deviation above 0.012 (more than 5 standard errors) has probability below 1e-6.
        let m = PrefMatrix::from_rows(vec![vec![0.5, 0.7], vec![0.3, 0.5]], None).unwrap();
        let mut env = MatrixEnvironment::new(m);
        let mut rng = BanditRng::seed_from_u64(2);
        let n = 40_000;
        let wins = (0..n)
            .filter(|_| env.duel(Pair::new(0, 1), &mut rng) == Outcome::FirstWins)
            .count();
        assert!((wins as f64 / n as f64 - 0.7).abs() < 0.012, "{wins}");
    }
}
