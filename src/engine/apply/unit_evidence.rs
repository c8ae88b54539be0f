//! Evidence per unit for an experiment with `units.aggregation = "unit"`: after each group of
//! outcomes, a unit's first decisive comparison of each pair is added to the unit-level win
//! matrix, which the champion report and the decision read instead of the query-level one (the
//! rule and why it keeps the decision's guarantee: [`crate::bandit::unit_evidence`]). The policy
//! still learns from every outcome. Comparisons without a unit count each as a unit of its own.

use sqlx::{Postgres, Transaction};
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::bandit::WinMatrix;
use crate::bandit::unit_evidence::first_votes;
use crate::store::apply::PendingRow;
use crate::store::counts::unit_votes;

use crate::engine::EngineError;
use crate::engine::model::{SetResult, Snapshot};

/// The decisive comparisons of a group of rows in apply order: (unit hash, winner, loser).
pub fn comparisons(rows: &[PendingRow]) -> Vec<(Option<Vec<u8>>, i32, i32)> {
    let mut out = Vec::new();
    for row in rows {
        match &row.set {
            Some((rankers, results)) => {
                let set = SetResult {
                    rankers: rankers.iter().map(|&r| r as usize).collect(),
                    results: results.clone(),
                };
                for (w, l) in set.cells().0 {
                    out.push((row.unit.clone(), w as i32, l as i32));
                }
            }
            None => {
                if let Some(w) = row.winner {
                    let l = if w == row.first {
                        row.second
                    } else {
                        row.first
                    };
                    if w != l {
                        out.push((row.unit.clone(), w, l));
                    }
                }
            }
        }
    }
    out
}

/// The unit-level evidence [`add_votes`] adds to, when it writes anything: the experiment keeps
/// such evidence and the group compared something.
pub fn evidence_to_add<'a>(
    snap: &'a Snapshot,
    compared: &[(Option<Vec<u8>>, i32, i32)],
) -> Option<&'a Arc<WinMatrix>> {
    snap.unit_wins.as_ref().filter(|_| !compared.is_empty())
}

/// Adds what `compared` counts to the unit-level evidence, in the transaction that applies the
/// outcomes, and to the snapshot that application makes (whose champion and decision are then
/// computed afresh).
pub async fn add_votes(
    tx: &mut Transaction<'_, Postgres>,
    snap: &mut Snapshot,
    compared: &[(Option<Vec<u8>>, i32, i32)],
) -> Result<(), EngineError> {
    let Some(wins) = evidence_to_add(snap, compared) else {
        return Ok(());
    };
    let mut counted: Vec<(i32, i32)> = compared
        .iter()
        .filter(|c| c.0.is_none())
        .map(|c| (c.1, c.2))
        .collect();
    let with_unit: Vec<(Vec<u8>, usize, usize)> = compared
        .iter()
        .filter_map(|(u, w, l)| u.clone().map(|u| (u, *w as usize, *l as usize)))
        .collect();
    // The first of each unit and pair in this group; the database passes over those counted in
    // an earlier group.
    let votes: Vec<(Vec<u8>, i32, i32)> = first_votes(&with_unit, |_, _| false)
        .into_iter()
        .map(|(u, w, l)| (u, w as i32, l as i32))
        .collect();
    counted.extend(unit_votes::record_new(tx, snap.id, &votes).await?);
    let mut cells: BTreeMap<(i32, i32), i64> = BTreeMap::new();
    for c in counted {
        *cells.entry(c).or_default() += 1;
    }
    let cells: Vec<(i32, i32, i64)> = cells.into_iter().map(|((w, l), n)| (w, l, n)).collect();
    unit_votes::add_wins(tx, snap.id, &cells).await?;
    let mut wins = (**wins).clone();
    for &(w, l, n) in &cells {
        wins.add_wins(w as usize, l as usize, n as u32);
    }
    snap.unit_wins = Some(Arc::new(wins));
    snap.forget_derived();
    Ok(())
}
