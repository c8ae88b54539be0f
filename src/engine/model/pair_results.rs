//! The result of one query of a multi-ranker experiment: every pair of the rankers it showed,
//! each a win, a loss or a tie. Built from the clicks on a multileaved list, from the rankers'
//! credits or from a best-to-worst ordering; stored with the outcome row (so a retry can be told
//! from a different result for the same duel) and learned by the policy in one `record_set`.

use crate::api::PairOutcome;
use crate::bandit::{Arm, SetOutcome};
use crate::interleave::{Outcome, Preference};

/// The outcome format's word for a tie, where a winner is named (no ranker may take it as a name).
pub const TIE: &str = "tie";

/// Every pair's result, in a fixed order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetResult {
    /// The rankers, in the order the duel token lists them.
    pub rankers: Vec<Arm>,
    /// Per pair (i, j), i < j, row-major over `rankers`: 1 when `rankers[i]` won, -1 when
    /// `rankers[j]` won, 0 for a tie. This is the stored form.
    pub results: Vec<i16>,
}

/// Pairs of rankers: (winner, loser) for wins, (a, b) with a <= b for ties.
pub type Cells = Vec<(Arm, Arm)>;

impl SetResult {
    /// Higher score wins, equal scores tie: the rule for credits and for an ordering (where a
    /// ranker's score is minus its group's position).
    pub fn from_scores(rankers: Vec<Arm>, scores: &[f64]) -> SetResult {
        debug_assert_eq!(rankers.len(), scores.len());
        let m = rankers.len();
        let mut results = Vec::with_capacity(m * m.saturating_sub(1) / 2);
        for i in 0..m {
            for j in i + 1..m {
                results.push(match scores[i].partial_cmp(&scores[j]) {
                    Some(std::cmp::Ordering::Greater) => 1,
                    Some(std::cmp::Ordering::Less) => -1,
                    _ => 0,
                });
            }
        }
        SetResult { rankers, results }
    }

    /// From an interleaving's hard preferences, whose indices are positions in `rankers`
    /// (every pair once; a one-ranker query has none).
    pub fn from_preferences(rankers: Vec<Arm>, preferences: &[Preference]) -> SetResult {
        let m = rankers.len();
        let mut results = vec![0i16; m * m.saturating_sub(1) / 2];
        for p in preferences
            .iter()
            .filter(|p| p.i < m && p.j < m && p.i < p.j)
        {
            results[pair_index(m, p.i, p.j)] = match p.outcome {
                Outcome::A => 1,
                Outcome::B => -1,
                Outcome::Tie => 0,
            };
        }
        SetResult { rankers, results }
    }

    /// The pairs with their results, `(i, j, result)` with i < j positions in `rankers`.
    fn pairs(&self) -> impl Iterator<Item = (usize, usize, i16)> + '_ {
        let m = self.rankers.len();
        (0..m)
            .flat_map(move |i| (i + 1..m).map(move |j| (i, j)))
            .zip(self.results.iter().copied())
            .map(|((i, j), r)| (i, j, r))
    }

    /// What the policy learns: every pair is decided or an explicit tie.
    pub fn to_outcome(&self) -> SetOutcome {
        let mut outcome = SetOutcome::default();
        for (i, j, r) in self.pairs() {
            let (a, b) = (self.rankers[i], self.rankers[j]);
            match r {
                1 => outcome.wins.push((a, b)),
                -1 => outcome.wins.push((b, a)),
                _ => outcome.ties.push((a, b)),
            }
        }
        outcome
    }

    /// What the win matrix gains: wins as (winner, loser) and ties as (a, b) with a <= b. A
    /// one-ranker query is that ranker's self-duel, a tie with itself, as
    /// `BanditState::record_set` counts it.
    pub fn cells(&self) -> (Cells, Cells) {
        if let [only] = self.rankers[..] {
            return (Vec::new(), vec![(only, only)]);
        }
        let outcome = self.to_outcome();
        let ties = outcome
            .ties
            .iter()
            .map(|&(a, b)| (a.min(b), a.max(b)))
            .collect();
        (outcome.wins, ties)
    }

    /// The pairs by ranker name, for the answer: what [`Self::cells`] counts, so that the ties an
    /// answer lists are the ties `ties_recorded` gains. A one-ranker query is that ranker's
    /// self-duel, which docs/api.md ("Self-duels", "Many rankers per query") says is recorded as
    /// a tie and counted in `ties_recorded`, as a two-ranker self-duel answers `"winner": "tie"`;
    /// so it is listed as the pair of that ranker with itself, tied, rather than counted unseen.
    pub fn named(&self, names: &[String]) -> Vec<PairOutcome> {
        if let [only] = self.rankers[..] {
            let name = &names[only];
            return vec![PairOutcome {
                rankers: [name.clone(), name.clone()],
                winner: TIE.to_string(),
            }];
        }
        self.pairs()
            .map(|(i, j, r)| {
                let (a, b) = (&names[self.rankers[i]], &names[self.rankers[j]]);
                PairOutcome {
                    rankers: [a.clone(), b.clone()],
                    winner: match r {
                        1 => a.clone(),
                        -1 => b.clone(),
                        _ => TIE.to_string(),
                    },
                }
            })
            .collect()
    }
}

/// Row-major index of pair (i, j), i < j, among m rankers.
fn pair_index(m: usize, i: usize, j: usize) -> usize {
    i * (2 * m - i - 1) / 2 + (j - i - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_order_every_pair() {
        let r = SetResult::from_scores(vec![7, 3, 5], &[1.0, 2.0, 1.0]);
        // Pairs (7,3), (7,5), (3,5): 3 beats 7, 7 ties 5, 3 beats 5.
        assert_eq!(r.results, vec![-1, 0, 1]);
        assert_eq!(r.cells(), (vec![(3, 7), (3, 5)], vec![(5, 7)]));
        let o = r.to_outcome();
        assert_eq!(o.wins, vec![(3, 7), (3, 5)]);
        assert_eq!(o.ties, vec![(7, 5)]);
    }

    #[test]
    fn preferences_land_on_their_pairs() {
        let prefs = [
            Preference {
                i: 0,
                j: 2,
                outcome: Outcome::B,
            },
            Preference {
                i: 1,
                j: 3,
                outcome: Outcome::A,
            },
        ];
        let r = SetResult::from_preferences(vec![0, 1, 2, 3], &prefs);
        // Row-major: (0,1) (0,2) (0,3) (1,2) (1,3) (2,3).
        assert_eq!(r.results, vec![0, -1, 0, 0, 1, 0]);
        let names: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let named = r.named(&names);
        assert_eq!(named[1].winner, "c");
        assert_eq!(named[4].winner, "b");
        assert_eq!(named[0].winner, "tie");
    }

    #[test]
    fn one_ranker_has_no_pairs() {
        let r = SetResult::from_scores(vec![4], &[3.0]);
        assert!(r.results.is_empty());
        assert_eq!(r.to_outcome(), SetOutcome::default());
        // ... and counts as its self-duel, as the state records it.
        assert_eq!(r.cells(), (vec![], vec![(4, 4)]));
        // ... which its answer lists, as the tie it counts.
        let names: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        let named = r.named(&names);
        assert_eq!(named.len(), 1);
        assert_eq!(named[0].rankers, ["e".to_string(), "e".to_string()]);
        assert_eq!(named[0].winner, "tie");
    }
}
