//! An experiment's segments at one state version: each label's index and its own win and tie
//! counts, from which the experiment view gives per segment the matrix, the champion and the
//! decision (the policy learns from all traffic). The cells a group of outcome rows adds are
//! [`SegmentCells`].

use std::collections::BTreeMap;

use crate::store::counts::segments::SegmentRows;

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
