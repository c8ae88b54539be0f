//! Checkpoints: an owner applies its experiment's outcomes in memory as often as before, but
//! writes the state at most once per checkpoint interval.
//!
//! Writing an application costs Postgres the same whether it carries one row or a thousand: the
//! whole policy state (kilobytes of JSON that it compresses and logs), the state row's new
//! version, the counts and a transaction. On many experiments that each get a few outcomes per
//! application pause, nearly every outcome was written alone, and those writes were most of what
//! an outcome cost the database (docs/benchmarks.md).
//!
//! **What an owner holds unwritten.** An application that would write only the state row and
//! its win and tie counts (most do) stays in memory while the experiment's oldest unwritten
//! application is younger than the interval and fewer than [`MAX_UNWRITTEN_ROWS`] rows wait to
//! be written: the new version goes to this replica's cache, marked ahead of the stored version
//! it was applied on ([`crate::engine::model::Snapshot::ahead_of`]), so duels and reads here
//! use it at once. The [`Unwritten`] record keeps what the next write adds: the counts and each
//! application's version and last row. Anything else an application writes (a history point,
//! a decision's events, segment, unit or conversion-metric counts) writes at once, with
//! everything unwritten before it.
//!
//! **Why nothing is lost or counted twice.** Outcomes are durable when acknowledged; the state,
//! its counts and the cursor are derived from them and written together, fenced by the stored
//! version the unwritten chain started from. What a write does not carry is outcomes after the
//! stored cursor, which whoever applies next takes again: the owner itself after a failed
//! write, or the next owner after this one died (its session's locks go with it). So a kill -9
//! during an interval costs the replay of at most an interval's rows, and the write of
//! versions that were only in memory is the same argument as a lost asynchronous commit
//! (`super::application`). Each version written is logged with its last row, so every
//! application's rows stay known and in order, as replay needs.
//!
//! **What others see.** Other replicas read the stored state, so outcomes reach them at most an
//! interval and a tenth (the checkpoint writer's gathering, [`super::checkpoint_writer`]), and
//! their refresh, later than before. A stored version newer than the one the
//! chain started from (an administrative change) replaces the cached chain, which is then
//! applied again on it; a graceful shutdown writes every chain first.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::row_cells::{self, RowCell};
use crate::engine::model::Snapshot;
use crate::store::apply::{Cursor, PendingRow};

/// Default longest time an application stays unwritten (`joust serve --checkpoint-ms`).
pub const DEFAULT_CHECKPOINT_INTERVAL: Duration = Duration::from_millis(250);

/// Most rows held applied but unwritten: what the next owner applies again after a kill -9 is
/// at most one full application's rows.
pub const MAX_UNWRITTEN_ROWS: usize = super::owners::MAX_APPLY as usize;

/// What a group of rows added: decided outcomes and ties, and the win and tie cells.
#[derive(Default)]
pub struct Counted {
    pub applied: i64,
    pub ties: i64,
    pub wins: BTreeMap<(i32, i32), i64>,
    pub tie_cells: BTreeMap<(i32, i32), i64>,
}

impl Counted {
    /// Counts one row's cells.
    pub fn add(&mut self, row: &PendingRow) {
        row_cells::for_each(row, |cell| match cell {
            RowCell::Win(w, l) => {
                self.applied += 1;
                *self.wins.entry((w, l)).or_default() += 1;
            }
            RowCell::Tie(a, b) => {
                self.ties += 1;
                *self.tie_cells.entry((a, b)).or_default() += 1;
            }
        });
    }

    /// Adds `later`'s counts to these.
    pub fn merge(&mut self, later: Counted) {
        self.applied += later.applied;
        self.ties += later.ties;
        for (cell, n) in later.wins {
            *self.wins.entry(cell).or_default() += n;
        }
        for (cell, n) in later.tie_cells {
            *self.tie_cells.entry(cell).or_default() += n;
        }
    }

    /// The win cells as `(winner, loser, n)`.
    pub fn win_cells(&self) -> Vec<(i32, i32, i64)> {
        self.wins.iter().map(|(&(a, b), &n)| (a, b, n)).collect()
    }

    /// The tie cells as `(a, b, n)`, a <= b.
    pub fn tie_cells(&self) -> Vec<(i32, i32, i64)> {
        self.tie_cells
            .iter()
            .map(|(&(a, b), &n)| (a, b, n))
            .collect()
    }
}

/// Applications an owner made in memory and has not written.
pub struct Unwritten {
    /// The cached snapshot the last of them made: its version and write mark. The record
    /// belongs to that snapshot only; once the cache holds another (a stored version installed
    /// over it), the record is dropped and its rows are applied again.
    pub tag: (i64, i64),
    /// When the first of them was made.
    pub since: Instant,
    /// Rows they took.
    pub rows: usize,
    /// What the next write adds to the stored counts.
    pub counted: Counted,
    /// Each one's version and last row, in order.
    pub applications: Vec<(i64, Cursor)>,
}

impl Unwritten {
    /// Nothing held yet, from `now`.
    pub fn starting(now: Instant) -> Unwritten {
        Unwritten {
            tag: (0, 0),
            since: now,
            rows: 0,
            counted: Counted::default(),
            applications: Vec::new(),
        }
    }

    /// Adds the application of `rows` rows that made `snap`, counting `counted`.
    pub fn add(&mut self, snap: &Snapshot, rows: usize, counted: Counted) {
        self.rows += rows;
        self.counted.merge(counted);
        self.applications.push((snap.version, snap.applied_through));
        self.tag = (snap.version, snap.write_mark());
    }

    /// Whether `snap` is the snapshot the last of them made; if not, a stored version was
    /// installed over them and their rows are applied again on it.
    pub fn made(&self, snap: &Snapshot) -> bool {
        snap.ahead_of.is_some() && self.tag == (snap.version, snap.write_mark())
    }

    /// When they must be written.
    pub fn due_at(&self, interval: Duration) -> Instant {
        self.since + interval
    }
}

/// Whether an application of `rows` more rows may stay unwritten after `held` (what is already
/// held, if anything), at `now`.
pub fn may_hold(held: Option<&Unwritten>, rows: usize, interval: Duration, now: Instant) -> bool {
    if interval.is_zero() {
        return false;
    }
    match held {
        None => rows <= MAX_UNWRITTEN_ROWS,
        Some(h) => now < h.due_at(interval) && h.rows + rows <= MAX_UNWRITTEN_ROWS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unwritten(rows: usize, since: Instant) -> Unwritten {
        Unwritten {
            tag: (2, 0),
            since,
            rows,
            counted: Counted::default(),
            applications: Vec::new(),
        }
    }

    #[test]
    fn an_application_is_held_until_the_interval_or_the_row_bound_runs_out() {
        let now = Instant::now();
        let interval = Duration::from_millis(250);
        assert!(may_hold(None, 10, interval, now));
        assert!(!may_hold(None, MAX_UNWRITTEN_ROWS + 1, interval, now));
        let young = unwritten(100, now);
        assert!(may_hold(
            Some(&young),
            10,
            interval,
            now + Duration::from_millis(249)
        ));
        assert!(!may_hold(Some(&young), 10, interval, now + interval));
        assert!(!may_hold(
            Some(&young),
            MAX_UNWRITTEN_ROWS - 99,
            interval,
            now
        ));
        // A zero interval writes every application, as without checkpoints.
        assert!(!may_hold(None, 1, Duration::ZERO, now));
    }

    #[test]
    fn merged_counts_are_the_sum_of_both() {
        let mut a = Counted {
            applied: 2,
            ties: 1,
            ..Counted::default()
        };
        a.wins.insert((0, 1), 2);
        a.tie_cells.insert((0, 2), 1);
        let mut b = Counted {
            applied: 3,
            ties: 1,
            ..Counted::default()
        };
        b.wins.insert((0, 1), 1);
        b.wins.insert((2, 1), 2);
        b.tie_cells.insert((0, 2), 1);
        a.merge(b);
        assert_eq!((a.applied, a.ties), (5, 2));
        assert_eq!(a.win_cells(), vec![(0, 1, 3), (2, 1, 2)]);
        assert_eq!(a.tie_cells(), vec![(0, 2, 2)]);
    }
}
