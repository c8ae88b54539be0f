//! The win matrix `W` (w_ij = times arm i beat arm j) and the tie counts, kept for every
//! experiment whatever its policy, so that champion reports and dashboards never depend on a
//! policy's internals.
//!
//! Storage is dense (row-major `u32`) up to [`DENSE_LIMIT`] arms, which is what the hot loops of
//! the simulator need; above that it is sparse, because a dense 10,000 x 10,000 matrix would take
//! 400 MB per experiment while real experiments touch only a small fraction of the pairs.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

use super::Arm;

/// Largest number of arms stored densely.
pub const DENSE_LIMIT: usize = 2048;

#[derive(Debug, Clone, PartialEq)]
enum Cells {
    Dense(Vec<u32>),
    Sparse(HashMap<(u32, u32), u32>),
}

impl Cells {
    fn new(k: usize) -> Self {
        if k <= DENSE_LIMIT {
            Cells::Dense(vec![0; k * k])
        } else {
            Cells::Sparse(HashMap::new())
        }
    }

    fn get(&self, k: usize, i: Arm, j: Arm) -> u32 {
        match self {
            Cells::Dense(v) => v[i * k + j],
            Cells::Sparse(m) => m.get(&(i as u32, j as u32)).copied().unwrap_or(0),
        }
    }

    fn add(&mut self, k: usize, i: Arm, j: Arm, n: u32) {
        match self {
            Cells::Dense(v) => v[i * k + j] += n,
            Cells::Sparse(m) => *m.entry((i as u32, j as u32)).or_insert(0) += n,
        }
    }

    /// Re-lays the cells out for `new_k` arms (arms keep their indices).
    fn grow(&mut self, old_k: usize, new_k: usize) {
        let cells = std::mem::replace(self, Cells::new(new_k));
        for (i, j, n) in iter_cells(&cells, old_k) {
            self.add(new_k, i, j, n);
        }
    }
}

fn iter_cells(cells: &Cells, k: usize) -> Vec<(Arm, Arm, u32)> {
    match cells {
        Cells::Dense(v) => v
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(idx, n)| (idx / k, idx % k, *n))
            .collect(),
        Cells::Sparse(m) => {
            let mut out: Vec<_> = m
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(&(i, j), &n)| (i as Arm, j as Arm, n))
                .collect();
            out.sort_unstable();
            out
        }
    }
}

/// Win and tie counts between every pair of arms.
#[derive(Debug, Clone, PartialEq)]
pub struct WinMatrix {
    k: usize,
    wins: Cells,
    /// Ties are kept symmetric (t_ij == t_ji); allocated on the first tie.
    ties: Option<Cells>,
    total_wins: u64,
    total_ties: u64,
}

impl WinMatrix {
    pub fn new(k: usize) -> Self {
        WinMatrix {
            k,
            wins: Cells::new(k),
            ties: None,
            total_wins: 0,
            total_ties: 0,
        }
    }

    /// Number of arms (active or retired).
    pub fn k(&self) -> usize {
        self.k
    }

    /// Times `i` beat `j`.
    #[inline]
    pub fn wins(&self, i: Arm, j: Arm) -> u32 {
        self.wins.get(self.k, i, j)
    }

    /// Ties between `i` and `j`.
    #[inline]
    pub fn ties(&self, i: Arm, j: Arm) -> u32 {
        self.ties.as_ref().map_or(0, |t| t.get(self.k, i, j))
    }

    /// Non-tie comparisons between `i` and `j`.
    #[inline]
    pub fn decided(&self, i: Arm, j: Arm) -> u32 {
        self.wins(i, j) + self.wins(j, i)
    }

    pub fn record_win(&mut self, winner: Arm, loser: Arm) {
        self.add_wins(winner, loser, 1);
    }

    /// Adds `n` wins of `winner` over `loser` (used when loading stored counts).
    pub fn add_wins(&mut self, winner: Arm, loser: Arm, n: u32) {
        self.wins.add(self.k, winner, loser, n);
        self.total_wins += n as u64;
    }

    pub fn record_tie(&mut self, a: Arm, b: Arm) {
        self.add_ties(a, b, 1);
    }

    /// Adds `n` ties between `a` and `b` (stored symmetrically, counted once).
    pub fn add_ties(&mut self, a: Arm, b: Arm, n: u32) {
        let k = self.k;
        let t = self.ties.get_or_insert_with(|| Cells::new(k));
        t.add(k, a, b, n);
        if a != b {
            t.add(k, b, a, n);
        }
        self.total_ties += n as u64;
    }

    /// Sum of all win counts: the number of non-tie outcomes recorded.
    pub fn total_wins(&self) -> u64 {
        self.total_wins
    }

    pub fn total_ties(&self) -> u64 {
        self.total_ties
    }

    /// Adds an arm with no comparisons; returns its index.
    pub fn add_arm(&mut self) -> Arm {
        let old = self.k;
        self.k += 1;
        self.wins.grow(old, self.k);
        if let Some(t) = self.ties.as_mut() {
            t.grow(old, self.k);
        }
        old
    }

    /// Non-zero win cells `(winner, loser, count)`, in index order.
    pub fn win_cells(&self) -> Vec<(Arm, Arm, u32)> {
        iter_cells(&self.wins, self.k)
    }

    /// Non-zero tie cells `(a, b, count)` with `a <= b`, in index order.
    pub fn tie_cells(&self) -> Vec<(Arm, Arm, u32)> {
        self.ties.as_ref().map_or_else(Vec::new, |t| {
            iter_cells(t, self.k)
                .into_iter()
                .filter(|(a, b, _)| a <= b)
                .collect()
        })
    }
}

/// Serialised form: sparse lists of cells, so a 10,000-arm matrix with few comparisons stays small.
#[derive(Serialize, Deserialize)]
struct WinMatrixRepr {
    k: usize,
    wins: Vec<(Arm, Arm, u32)>,
    #[serde(default)]
    ties: Vec<(Arm, Arm, u32)>,
}

impl Serialize for WinMatrix {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        WinMatrixRepr {
            k: self.k,
            wins: self.win_cells(),
            ties: self.tie_cells(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for WinMatrix {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let repr = WinMatrixRepr::deserialize(d)?;
        let mut m = WinMatrix::new(repr.k);
        let in_range = |i: Arm, j: Arm| i < repr.k && j < repr.k;
        for &(i, j, n) in &repr.wins {
            if !in_range(i, j) {
                return Err(serde::de::Error::custom(format!(
                    "win cell ({i}, {j}) out of range"
                )));
            }
            m.add_wins(i, j, n);
        }
        for &(a, b, n) in &repr.ties {
            if !in_range(a, b) {
                return Err(serde::de::Error::custom(format!(
                    "tie cell ({a}, {b}) out of range"
                )));
            }
            m.add_ties(a, b, n);
        }
        Ok(m)
    }
}
