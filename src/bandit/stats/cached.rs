//! [`Cached`]: derived data a policy keeps next to its state to make `select` fast.
//!
//! Caches are rebuilt in `update` (never in `select`, which is read-only) and are not part of the
//! persisted state: they are skipped by serde and ignored by equality, so a state that went
//! through the database equals the one that was written. A policy whose cache is missing or out of
//! date (after deserialisation, or when the win matrix changed without the policy hearing of it)
//! computes from the win matrix directly until its next update rebuilds the cache.

use crate::bandit::{TieRule, View};

#[derive(Clone)]
pub struct Cached<T>(pub Option<T>);

impl<T> Default for Cached<T> {
    fn default() -> Self {
        Cached(None)
    }
}

impl<T> PartialEq for Cached<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<T> std::fmt::Debug for Cached<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Cached(built)"
        } else {
            "Cached(empty)"
        })
    }
}

/// How much evidence the win matrix holds for the policy: wins, plus ties when they count. A cache
/// stamped with this value is up to date exactly when the matrix still holds the same total
/// (every change the policy hears of moves it by one).
pub fn evidence_total(view: &View) -> u64 {
    let ties = match view.ties {
        TieRule::Ignore => 0,
        TieRule::HalfWin => view.wins.total_ties(),
    };
    view.wins.total_wins() + ties
}
