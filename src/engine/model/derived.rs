//! Results derived from one snapshot's state and computed at most once per state version: the
//! champion report, the estimated preference matrix, and a rendering of the snapshot that a reader
//! (the HTTP detail view) keeps. A 10,000-ranker experiment's report costs seconds; polled by many
//! dashboards it must be computed once, not per request.
//!
//! They live on the snapshot, which is immutable and replaced whenever the version changes, so
//! a new version starts with nothing computed and an old version's results go with it.

use std::any::Any;
use std::sync::{Arc, OnceLock};

use crate::bandit::{Arm, BanditState};
use crate::bandit::{ChampionReport, Decision, PreferenceEstimate, estimate_preference};

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
#[derive(Default)]
pub struct Derived {
    champion: OnceLock<ChampionReport>,
    decision: OnceLock<Decision>,
    estimates: OnceLock<Option<Arc<Estimates>>>,
    /// Whatever a reader rendered from this version (its type is the reader's business).
    rendering: OnceLock<Arc<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for Derived {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Derived")
            .field("champion", &self.champion)
            .field("decision", &self.decision)
            .field("estimates", &self.estimates)
            .field("rendered", &self.rendering.get().is_some())
            .finish()
    }
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

    pub fn decision(&self, state: &BanditState) -> &Decision {
        self.decision.get_or_init(|| state.decision())
    }

    /// The champion report `make` builds (from other evidence than the state's own matrix).
    pub fn champion_with(&self, make: impl FnOnce() -> ChampionReport) -> &ChampionReport {
        self.champion.get_or_init(make)
    }

    /// The decision `make` builds (from other evidence than the state's own matrix).
    pub fn decision_with(&self, make: impl FnOnce() -> Decision) -> &Decision {
        self.decision.get_or_init(make)
    }

    /// The rendering `make` builds, made once per version. One type of rendering per snapshot:
    /// asking for another type than the first panics (there is one reader, the detail view).
    pub fn rendering<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Arc<T> {
        let any = self
            .rendering
            .get_or_init(|| Arc::new(make()) as Arc<dyn Any + Send + Sync>)
            .clone();
        any.downcast::<T>()
            .unwrap_or_else(|_| panic!("a snapshot keeps one type of rendering"))
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
                    .map(|(i, j)| estimate_preference(&view, i, j, k))
                    .collect();
                Some(Arc::new(Estimates { active, cells }))
            })
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::{BanditRng, Outcome, Pair, PolicySpec, TieRule};
    use rand::SeedableRng;

    /// Three rankers where `winner` has beaten both others `n` times.
    fn state_led_by(winner: Arm, n: usize) -> BanditState {
        let mut rng = BanditRng::seed_from_u64(1);
        let mut s =
            BanditState::new(&PolicySpec::new("uniform"), 3, TieRule::Ignore, &mut rng).unwrap();
        for loser in (0..3).filter(|&a| a != winner) {
            for _ in 0..n {
                s.record(Pair::new(winner, loser), Outcome::FirstWins, &mut rng)
                    .unwrap();
            }
        }
        s
    }

    #[test]
    fn the_champion_is_computed_once_per_version() {
        let (led_by_0, led_by_2) = (state_led_by(0, 50), state_led_by(2, 50));
        assert_eq!(led_by_0.champion().ranker, Some(0));
        assert_eq!(led_by_2.champion().ranker, Some(2));
        let derived = Derived::default();
        let first = derived.champion(&led_by_0) as *const ChampionReport;
        // Asked again, even with another state, it answers from what it computed: nothing is
        // recomputed within a version.
        assert_eq!(derived.champion(&led_by_2).ranker, Some(0));
        assert!(std::ptr::eq(first, derived.champion(&led_by_2)));
        // The next version (a clone, as the writer makes) computes afresh.
        assert_eq!(derived.clone().champion(&led_by_2).ranker, Some(2));
    }

    #[test]
    fn the_estimates_are_computed_once_per_version() {
        let (led_by_0, led_by_2) = (state_led_by(0, 50), state_led_by(2, 50));
        let derived = Derived::default();
        let first = derived.estimates(&led_by_0).unwrap();
        let again = derived.estimates(&led_by_2).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        // Ranker 0 beat ranker 2 in led_by_0 only.
        assert!(first.get(0, 2).p > 0.5, "{:?}", first.get(0, 2));
        let next = derived.clone().estimates(&led_by_2).unwrap();
        assert!(next.get(0, 2).p < 0.5, "{:?}", next.get(0, 2));
    }
}
