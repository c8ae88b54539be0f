//! The owner's side of segments: the segment cells a group of outcome rows adds, written in
//! the transaction that applies the group and added to the snapshot it makes.

use sqlx::{Postgres, Transaction};
use std::sync::Arc;

use crate::engine::EngineError;
use crate::engine::model::{SegmentCells, Snapshot};
use crate::store::apply::PendingRow;
use crate::store::counts::segments as store_segments;

use super::row_cells::{self, RowCell};

/// Adds a group's segment cells in the transaction that applies it, and to the snapshot that
/// application makes (reading the labels again if a cell names a segment registered since the
/// snapshot was loaded).
pub async fn add_counts(
    tx: &mut Transaction<'_, Postgres>,
    snap: &mut Snapshot,
    cells: &SegmentCells,
) -> Result<(), EngineError> {
    if cells.is_empty() {
        return Ok(());
    }
    store_segments::add_counts(tx, snap.id, &cells.win_rows(), &cells.tie_rows()).await?;
    let mut counts = (*snap.segments).clone();
    counts.add(cells);
    if counts.missing_labels() {
        counts.merge_labels(&store_segments::labels(tx, snap.id).await?);
    }
    snap.segments = Arc::new(counts);
    Ok(())
}

/// Counts the rows that carry a segment, as the experiment's own counts count them: a pair's
/// winner over its loser or a tie, a multi-ranker query's every pair.
pub fn count(rows: &[PendingRow]) -> SegmentCells {
    let mut c = SegmentCells::default();
    for row in rows {
        let Some(s) = row.segment else { continue };
        row_cells::for_each(row, |cell| match cell {
            RowCell::Win(w, l) => *c.wins.entry((s, w, l)).or_default() += 1,
            RowCell::Tie(a, b) => *c.ties.entry((s, a, b)).or_default() += 1,
        });
    }
    c
}
