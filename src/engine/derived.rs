//! Results derived from one snapshot's state and computed at most once per state version: the
//! champion report and the estimated preference matrix. A 10,000-ranker experiment's report
//! costs seconds; polled by many dashboards it must be computed once, not per request.
//!
//! They live on the snapshot, which is immutable and replaced whenever the version changes, so
//! a new version starts with nothing computed and an old version's results go with it.

use std::sync::{Arc, OnceLock};

use crate::bandit::champion::{self, ChampionReport, PreferenceEstimate};
use crate::bandit::{Arm, BanditState};

/// Largest experiment (in active rankers) whose whole estimated matrix is computed.
pub const MAX_MATRIX_RANKERS: usize = 1000;

/// The estimated preference matrix over the active rankers.
#[derive(Debug)]
pub struct Estimates {
    /// The active rankers, in index order; rows and columns follow it.
    pub active: Vec<Arm>,
    /// Row-major, `active.len()` squared cells: the estimate of P(row beats column).
    pub cells: Vec<PreferenceEstimate>,
}

impl Estimates {
    pub fn get(&self, row: usize, col: usize) -> &PreferenceEstimate {
        &self.cells[row * self.active.len() + col]
    }
}

/// The per-version results of one snapshot, filled on first use.
#[derive(Debug, Default)]
pub struct Derived {
    champion: OnceLock<ChampionReport>,
    estimates: OnceLock<Option<Arc<Estimates>>>,
}

/// A snapshot is cloned only to build the next version (the writer applies outcomes to a copy),
/// so a clone starts empty: the results of the old state must not leak into the new one.
impl Clone for Derived {
    fn clone(&self) -> Self {
        Derived::default()
    }
}

impl Derived {
    pub fn champion(&self, state: &BanditState) -> &ChampionReport {
        self.champion.get_or_init(|| state.champion())
    }

    /// `None` when the experiment has more than [`MAX_MATRIX_RANKERS`] active rankers.
    pub fn estimates(&self, state: &BanditState) -> Option<Arc<Estimates>> {
        self.estimates
            .get_or_init(|| {
                let view = state.view();
                let active: Vec<Arm> = view.active_arms().collect();
                let k = active.len();
                if k > MAX_MATRIX_RANKERS {
                    return None;
                }
                let cells = active
                    .iter()
                    .flat_map(|&i| active.iter().map(move |&j| (i, j)))
                    .map(|(i, j)| champion::estimate(&view, i, j, k))
                    .collect();
                Some(Arc::new(Estimates { active, cells }))
            })
            .clone()
    }
}
