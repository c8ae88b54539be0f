//! Segments: a duel request's label (a locale, a device, a kind of query). The policy learns
//! from all traffic; each segment also keeps its own win and tie counts, from which the
//! experiment view gives per segment the matrix, the champion and the decision.
//!
//! A label is registered once, by the first duel that names it (one short transaction that
//! enforces the experiment's `max_segments` across replicas); later duels find it in memory, so
//! the duel path writes nothing. The duel token carries the segment's index, the outcome row
//! keeps it, and the owner adds the segment's counts in the transaction that applies the
//! outcome.

use sqlx::{Postgres, Transaction};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use crate::store::apply::PendingRow;
use crate::store::segments::{self as store_segments, Registered, SegmentRows};

use super::row_cells::{self, RowCell};
use super::segment_settings::{check_label, limit_reached};
use super::{Engine, EngineError, Snapshot};

/// Each experiment's labels known to this replica: label -> index.
#[derive(Default)]
pub struct SegmentLabels {
    known: Mutex<HashMap<i64, HashMap<String, u16>>>,
}

impl SegmentLabels {
    fn get(&self, experiment: i64, label: &str) -> Option<u16> {
        let known = self.known.lock().expect("segment labels lock");
        known.get(&experiment)?.get(label).copied()
    }

    fn merge(&self, experiment: i64, labels: &[(i16, String)]) {
        let mut known = self.known.lock().expect("segment labels lock");
        let map = known.entry(experiment).or_default();
        for (i, l) in labels {
            map.insert(l.clone(), *i as u16);
        }
    }
}

impl Engine {
    /// The index of the experiment's segment `label`, registering a new label if the
    /// experiment has room for it; a label beyond `max_segments` is refused and registers
    /// nothing.
    pub(super) async fn segment_index(
        &self,
        experiment: i64,
        label: &str,
    ) -> Result<u16, EngineError> {
        check_label(label)?;
        if let Some(i) = self.segment_labels.get(experiment, label) {
            return Ok(i);
        }
        self.require_db()?;
        let result = store_segments::register(&self.pool, experiment, label)
            .await
            .map_err(EngineError::from);
        match self.observe(result)? {
            Registered::Known(i, labels) => {
                self.segment_labels.merge(experiment, &labels);
                Ok(i as u16)
            }
            Registered::Full(max) => Err(limit_reached(label, max)),
            Registered::NoExperiment => Err(EngineError::UnknownExperiment(experiment)),
        }
    }
}

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

/// Cell key: (segment, ranker, ranker).
type Cell = (i16, i32, i32);

/// An experiment's segments at one state version: labels and counts.
#[derive(Debug, Clone, Default)]
pub struct SegmentCounts {
    /// Labels by index (an index with no known label yet is shown by number).
    pub labels: Vec<Option<String>>,
    pub wins: BTreeMap<Cell, i64>,
    /// Keyed with a <= b.
    pub ties: BTreeMap<Cell, i64>,
}

impl SegmentCounts {
    pub fn from_rows(rows: &SegmentRows) -> Self {
        let mut out = SegmentCounts::default();
        out.merge_labels(&rows.labels);
        for &(s, w, l, n) in &rows.wins {
            out.wins.insert((s, w, l), n);
        }
        for &(s, a, b, n) in &rows.ties {
            out.ties.insert((s, a, b), n);
        }
        out
    }

    pub fn merge_labels(&mut self, labels: &[(i16, String)]) {
        for (i, l) in labels {
            let i = *i as usize;
            if self.labels.len() <= i {
                self.labels.resize(i + 1, None);
            }
            self.labels[i] = Some(l.clone());
        }
    }

    /// Whether some cell names a segment whose label is not known here.
    pub fn missing_labels(&self) -> bool {
        let known = |s: i16| self.labels.get(s as usize).is_some_and(Option::is_some);
        self.wins
            .keys()
            .chain(self.ties.keys())
            .any(|c| !known(c.0))
    }

    /// The segment indices with any count, in order.
    pub fn segments(&self) -> Vec<i16> {
        let mut s: Vec<i16> = self
            .wins
            .keys()
            .chain(self.ties.keys())
            .map(|c| c.0)
            .collect();
        s.extend((0..self.labels.len() as i16).filter(|&i| self.labels[i as usize].is_some()));
        s.sort_unstable();
        s.dedup();
        s
    }

    pub fn label(&self, segment: i16) -> String {
        self.labels
            .get(segment as usize)
            .cloned()
            .flatten()
            .unwrap_or_else(|| format!("#{segment}"))
    }

    /// Adds what `added` counted.
    pub fn add(&mut self, added: &SegmentCells) {
        for (c, n) in &added.wins {
            *self.wins.entry(*c).or_default() += n;
        }
        for (c, n) in &added.ties {
            *self.ties.entry(*c).or_default() += n;
        }
    }
}

/// The segment cells a group of outcome rows adds.
#[derive(Debug, Default, PartialEq)]
pub struct SegmentCells {
    pub wins: BTreeMap<Cell, i64>,
    pub ties: BTreeMap<Cell, i64>,
}

impl SegmentCells {
    pub fn is_empty(&self) -> bool {
        self.wins.is_empty() && self.ties.is_empty()
    }

    pub fn win_rows(&self) -> Vec<(i16, i32, i32, i64)> {
        self.wins
            .iter()
            .map(|(&(s, a, b), &n)| (s, a, b, n))
            .collect()
    }

    pub fn tie_rows(&self) -> Vec<(i16, i32, i32, i64)> {
        self.ties
            .iter()
            .map(|(&(s, a, b), &n)| (s, a, b, n))
            .collect()
    }
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
