//! Evidence aggregated per unit (a user or a session): for each pair of rankers, a unit's
//! **first decisive comparison** of the pair counts once, and nothing else that unit says about
//! the pair counts. Comparisons that name no unit count each as a unit of their own.
//!
//! Why this rule: the decision's confidence sequences are valid at every time for a sequence of
//! comparisons each of which, given everything before it, goes to `i` with probability `p_ij`.
//! One heavy unit's hundred comparisons are not that: they share the unit's own preference, so
//! counting them all makes the intervals far too narrow (the decision "confident" about one
//! user's taste). A unit's first decisive comparison of a pair is fixed once made and never
//! revised, and distinct units are independent, so the sequence of counted votes is again a
//! sequence of independent comparisons, each going to `i` with probability `p_ij` = the share of
//! units whose first comparison prefers `i` (every unit weighted once, however many queries it
//! sends). The anytime guarantee of [`super::decide`] then holds as it is, on the unit-level win
//! matrix. A majority vote of each unit's comparisons would use more of the data, but a unit's
//! vote would change as it sends more queries, and revised votes are not what the confidence
//! sequences cover.
//!
//! Ties are no vote (as under the `ignore` tie rule): a unit counts for a pair at its first
//! comparison of the pair with a winner.

use std::collections::HashSet;
use std::hash::Hash;

use super::{Arm, WinMatrix};

/// A pair in canonical order (smaller arm first).
pub fn pair_key(a: Arm, b: Arm) -> (Arm, Arm) {
    (a.min(b), a.max(b))
}

/// Decisive comparisons `(unit, winner, loser)` in the order they happened, reduced to the ones
/// that count: the first of each unit for each pair. `counted(unit, pair)` says whether the unit
/// was counted for the pair before these.
pub fn first_votes<U: Clone + Eq + Hash>(
    comparisons: &[(U, Arm, Arm)],
    counted: impl Fn(&U, (Arm, Arm)) -> bool,
) -> Vec<(U, Arm, Arm)> {
    let mut seen: HashSet<(U, (Arm, Arm))> = HashSet::new();
    comparisons
        .iter()
        .filter(|(u, w, l)| {
            let key = pair_key(*w, *l);
            w != l && !counted(u, key) && seen.insert((u.clone(), key))
        })
        .cloned()
        .collect()
}

/// The unit-level evidence of one experiment, kept whole in memory: what the simulator and the
/// tests use (the service keeps the counted units in Postgres and only the matrix in memory).
#[derive(Debug, Clone)]
pub struct UnitEvidence<U: Eq + Hash> {
    counted: HashSet<(U, (Arm, Arm))>,
    pub wins: WinMatrix,
}

impl<U: Clone + Eq + Hash> UnitEvidence<U> {
    pub fn new(k: usize) -> Self {
        UnitEvidence {
            counted: HashSet::new(),
            wins: WinMatrix::new(k),
        }
    }

    /// Records a comparison won by `winner`; returns whether it counted.
    pub fn record(&mut self, unit: U, winner: Arm, loser: Arm) -> bool {
        if winner == loser || !self.counted.insert((unit, pair_key(winner, loser))) {
            return false;
        }
        self.wins.record_win(winner, loser);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::{BanditRng, DecisionSettings, TieRule, View, decide};
    use rand::{Rng, SeedableRng};

    #[test]
    fn only_a_units_first_decisive_comparison_of_a_pair_counts() {
        let votes = first_votes(
            &[
                ("u", 0, 1),
                ("u", 1, 0),
                ("u", 0, 2),
                ("v", 1, 0),
                ("w", 2, 2),
            ],
            |u, p| *u == "v" && p == (0, 1),
        );
        assert_eq!(votes, [("u", 0, 1), ("u", 0, 2)]);
        let mut e = UnitEvidence::new(3);
        assert!(e.record("u", 0, 1));
        assert!(!e.record("u", 1, 0));
        assert!(e.record("v", 1, 0));
        assert_eq!((e.wins.wins(0, 1), e.wins.wins(1, 0)), (1, 1));
    }

    /// Two equally good rankers, units with strong tastes of their own (half prefer each
    /// ranker with probability 0.9) and heavy-tailed query counts: counting every query, the
    /// decision is soon "confident" of whichever ranker the heaviest units happen to like;
    /// counting units, it declares a winner in at most a delta share of runs (the confidence
    /// sequence's guarantee; the bound below adds three binomial standard errors over 400
    /// runs). The query-level rate is checked to break that same bound, so the population is
    /// one that tells the two apart.
    #[test]
    fn clustered_units_do_not_make_a_tie_confident() {
        let settings = DecisionSettings::default();
        let runs = 400;
        let (mut by_query, mut by_unit) = (0, 0);
        for seed in 0..runs {
            let mut rng = BanditRng::seed_from_u64(seed);
            let mut queries = WinMatrix::new(2);
            let mut units = UnitEvidence::new(2);
            for unit in 0..60u32 {
                // Pareto-like query counts: most units send a few, a few send hundreds.
                let u: f64 = rng.random_range(0.0..1.0);
                let n = ((1.0 - u).powf(-1.0 / 1.1)).min(400.0) as usize;
                let likes_first = rng.random_bool(0.5);
                for _ in 0..n {
                    let first_wins = rng.random_bool(if likes_first { 0.9 } else { 0.1 });
                    let (w, l) = if first_wins { (0, 1) } else { (1, 0) };
                    queries.record_win(w, l);
                    units.record(unit, w, l);
                }
            }
            let active = [true, true];
            let decided =
                |m: &WinMatrix| decide(&View::new(m, &active, TieRule::Ignore), &settings).decided;
            by_query += decided(&queries) as u32;
            by_unit += decided(&units.wins) as u32;
        }
        let delta = settings.delta;
        let bound = delta + 3.0 * (delta * (1.0 - delta) / runs as f64).sqrt();
        let rate = |n: u32| n as f64 / runs as f64;
        assert!(
            rate(by_unit) <= bound,
            "by unit: {} > {bound}",
            rate(by_unit)
        );
        assert!(rate(by_query) > bound, "by query: {}", rate(by_query));
    }
}
