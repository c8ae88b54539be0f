//! The win and tie cells one acknowledged outcome row adds: a duel's winner over its loser or a
//! tie, a multi-ranker query's every pair. One definition for every count kept of a row: the
//! experiment's own counts, a conversion-primary experiment's `click` counts and each segment's.

use crate::bandit::Arm;
use crate::store::apply::PendingRow;

use crate::engine::model::SetResult;

/// One cell a row adds one to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowCell {
    /// `(winner, loser)`
    Win(i32, i32),
    /// `(a, b)` with a <= b
    Tie(i32, i32),
}

/// Calls `f` with each cell the row adds one to.
pub fn for_each(row: &PendingRow, mut f: impl FnMut(RowCell)) {
    match &row.set {
        Some((rankers, results)) => {
            let set = SetResult {
                rankers: rankers.iter().map(|&r| r as Arm).collect(),
                results: results.clone(),
            };
            let (wins, ties) = set.cells();
            for (w, l) in wins {
                f(RowCell::Win(w as i32, l as i32));
            }
            for (a, b) in ties {
                f(RowCell::Tie(a as i32, b as i32));
            }
        }
        None => match row.winner {
            Some(w) => {
                let l = if w == row.first {
                    row.second
                } else {
                    row.first
                };
                f(RowCell::Win(w, l));
            }
            None => f(RowCell::Tie(
                row.first.min(row.second),
                row.first.max(row.second),
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn row(
        first: i32,
        second: i32,
        winner: Option<i32>,
        set: Option<(Vec<i32>, Vec<i16>)>,
    ) -> PendingRow {
        PendingRow {
            at: (1, Uuid::nil()),
            first,
            second,
            winner,
            set,
            issued_at: chrono::Utc::now(),
            unit: None,
            segment: None,
        }
    }

    fn cells(row: &PendingRow) -> Vec<RowCell> {
        let mut out = Vec::new();
        for_each(row, |c| out.push(c));
        out
    }

    #[test]
    fn a_duel_adds_its_winner_over_its_loser_or_one_tie_in_order() {
        assert_eq!(cells(&row(3, 1, Some(3), None)), vec![RowCell::Win(3, 1)]);
        assert_eq!(cells(&row(3, 1, Some(1), None)), vec![RowCell::Win(1, 3)]);
        assert_eq!(cells(&row(3, 1, None, None)), vec![RowCell::Tie(1, 3)]);
    }

    #[test]
    fn a_query_adds_every_pair() {
        // Rankers 5, 2, 7: 5 beats 2, 5 ties 7, 7 beats 2.
        let set = Some((vec![5, 2, 7], vec![1, 0, -1]));
        let mut got = cells(&row(5, 2, None, set));
        got.sort_by_key(|c| format!("{c:?}"));
        assert_eq!(
            got,
            vec![RowCell::Tie(5, 7), RowCell::Win(5, 2), RowCell::Win(7, 2)]
        );
    }
}
