//! The judgement of one shown list and its clicks between every pair of the rankers that took part:
//! the method-independent result that multileaving (m >= 2 rankers) and the pairwise methods share.

use super::{Outcome, SoftOutcome};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// One hard preference between rankers `i < j`: [`Outcome::A`] is a win for `i`,
/// [`Outcome::B`] a win for `j`, [`Outcome::Tie`] no preference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preference {
    pub i: usize,
    pub j: usize,
    pub outcome: Outcome,
}

/// The soft judgement for every pair `i < j` (indices into the input lists) and each ranker's
/// credit. Deterministic methods put all of a pair's mass on one side; probabilistic ones spread
/// it, and [`Preferences::sample`] draws hard preferences that average to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preferences {
    rankers: usize,
    /// Row-major upper triangle: (0, 1), (0, 2), ..., (1, 2), ...; `a` is `i`'s side.
    pairs: Vec<SoftOutcome>,
    credits: Vec<f64>,
}

impl Preferences {
    /// Builds the result from each ranker's credit and `judge(i, j)` for every `i < j`.
    pub fn from_fn(credits: Vec<f64>, mut judge: impl FnMut(usize, usize) -> SoftOutcome) -> Self {
        let rankers = credits.len();
        let mut pairs = Vec::with_capacity(rankers * rankers.saturating_sub(1) / 2);
        for i in 0..rankers {
            for j in i + 1..rankers {
                pairs.push(judge(i, j));
            }
        }
        Preferences {
            rankers,
            pairs,
            credits,
        }
    }

    /// How many rankers took part.
    pub fn rankers(&self) -> usize {
        self.rankers
    }

    /// Each ranker's credit, in list order (what credit means is the method's).
    pub fn credits(&self) -> &[f64] {
        &self.credits
    }

    /// The judgement of ranker `i` against ranker `j` (`a` is `i`'s side); any order, and a ranker
    /// against itself is a tie.
    pub fn pair(&self, i: usize, j: usize) -> SoftOutcome {
        assert!(i < self.rankers && j < self.rankers, "no such ranker");
        match i.cmp(&j) {
            std::cmp::Ordering::Equal => SoftOutcome::TIE,
            std::cmp::Ordering::Less => self.pairs[self.index(i, j)],
            std::cmp::Ordering::Greater => self.pairs[self.index(j, i)].swapped(),
        }
    }

    /// Every pair `i < j` with its soft judgement.
    pub fn soft(&self) -> impl Iterator<Item = (usize, usize, SoftOutcome)> + '_ {
        (0..self.rankers)
            .flat_map(move |i| (i + 1..self.rankers).map(move |j| (i, j)))
            .zip(self.pairs.iter())
            .map(|((i, j), s)| (i, j, *s))
    }

    /// The more likely side of every pair (a certain judgement is returned as it is).
    pub fn most_likely(&self) -> Vec<Preference> {
        self.soft()
            .map(|(i, j, s)| Preference {
                i,
                j,
                outcome: s.most_likely(),
            })
            .collect()
    }

    /// One hard preference per pair, each drawn independently with its probabilities (see
    /// [`SoftOutcome::sample`]); certain judgements use no randomness.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Vec<Preference> {
        self.soft()
            .map(|(i, j, s)| Preference {
                i,
                j,
                outcome: s.sample(rng),
            })
            .collect()
    }

    fn index(&self, i: usize, j: usize) -> usize {
        // Pairs before row i: (m-1) + (m-2) + ... + (m-i) = i (2m - i - 1) / 2.
        i * (2 * self.rankers - i - 1) / 2 + (j - i - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_indexed_in_row_order_and_swap_when_reversed() {
        let p = Preferences::from_fn(vec![0.0; 4], |i, j| SoftOutcome {
            a: (10 * i + j) as f64,
            b: 0.0,
            tie: 0.0,
        });
        for i in 0..4 {
            for j in i + 1..4 {
                assert_eq!(p.pair(i, j).a, (10 * i + j) as f64);
                assert_eq!(p.pair(j, i).b, (10 * i + j) as f64);
            }
        }
        assert_eq!(p.pair(2, 2), SoftOutcome::TIE);
        assert_eq!(p.soft().count(), 6);
    }
}
