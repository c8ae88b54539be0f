//! Multi-dueling: one query compares a set of rankers instead of two.
//!
//! A search backend may show one multileaved list built from m >= 2 rankers; its clicks yield a
//! preference between some or all pairs of those rankers. The contract extends the pairwise one
//! of [`super::Policy`] without changing it:
//!
//! - [`super::Policy::select_set`] `(view, m, rng)` returns the arms to show for one query: 1 to
//!   m **distinct** active arms, in the order the policy chose them (that order is the "side" of
//!   each arm, as a [`super::Pair`]'s order is for a duel). One arm means the policy compares that
//!   arm with itself (a self-duel: the backend shows that ranker's list alone). It is read-only,
//!   like `select`.
//! - [`super::Policy::update_set`] `(view, heard, rng)` learns, in one call and exactly once, all
//!   the preferences one shown list produced ([`SetUpdate`]). [`super::BanditState::record_set`]
//!   updates the shared win matrix with every result first (as `record` does), then the policy.
//! - [`SetOutcome`], what a caller reports: wins (winner, loser) and ties among the shown arms.
//!   Pairs with no preference (e.g. no click told them apart) are **absent**; an explicit tie is
//!   evidence of equality (counted in the tie counts, and as half a win each under
//!   [`super::TieRule::HalfWin`]), an absent pair is no evidence at all. Each unordered pair may
//!   appear at most once.
//!
//! Which policies take m > 2: each declares it (`rankers_per_query` in its parameter
//! declaration; [`super::PolicyInfo::max_rankers_per_query`], [`super::multi_ranker_policies`]),
//! and [`super::BanditState::select_set`] refuses a larger m with [`SetError::TooMany`] naming
//! the limit. Pairwise policies keep the defaults: at most 2, `select_set(2)` is `select`'s pair
//! (one arm when `select` pairs an arm with itself), and `update_set` feeds each result to
//! `update` or `tie` in the canonical order below, so m = 2 through the set methods makes
//! exactly the choices `select` / `record` make, with the same random draws. Multi-dueling
//! policies take any m; m is an argument of `select_set`, never a construction parameter, so one
//! experiment's backend may ask for different m per query (e.g. fewer rankers for a short result
//! page).
//!
//! Canonical order: a result is placed by the positions of its two arms in the shown set, the
//! earlier position first; results are sorted by (earlier position, later position). A policy
//! that consumes randomness while learning therefore sees the same sequence whatever order the
//! multileaving method listed the pairs in.

use rand::Rng;

use super::{Arm, Pair, Policy, TieRule, View, Win};

/// What `select_set` accepts: any number of arms.
pub const ANY_NUMBER: usize = usize::MAX;

/// Why a set of m rankers cannot be selected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetError {
    #[error("a query compares at least 2 rankers, asked for {0}")]
    TooFew(usize),
    #[error("this policy compares at most {max} rankers per query, asked for {m}")]
    TooMany { m: usize, max: usize },
}

/// The arms one query shows, in the order chosen, or why `m` rankers cannot be compared.
pub type SetChoice = Result<Vec<Arm>, SetError>;

/// Checks that `m` rankers per query are allowed when a policy takes at most `max`.
pub fn check_size(m: usize, max: usize) -> Result<(), SetError> {
    if m < 2 {
        Err(SetError::TooFew(m))
    } else if m > max {
        Err(SetError::TooMany { m, max })
    } else {
        Ok(())
    }
}

/// The arms of a duel as a shown set: both arms, or one when the duel is a self-duel.
pub fn pair_set(pair: Pair) -> Vec<Arm> {
    if pair.first == pair.second {
        vec![pair.first]
    } else {
        vec![pair.first, pair.second]
    }
}

/// The preferences one shown list produced, as a caller reports them: `wins` as (winner, loser)
/// and `ties` as unordered pairs, all among the shown arms. Pairs without a preference are absent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetOutcome {
    pub wins: Vec<(Arm, Arm)>,
    pub ties: Vec<(Arm, Arm)>,
}

/// One pairwise result as a policy learns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairResult {
    /// A decided pair; `winner_first` says whether the winner came earlier in the shown set.
    Win(Win),
    /// A tie, the arm shown earlier first.
    Tie(Arm, Arm),
}

impl PairResult {
    /// The pair's two arms, in shown order.
    pub fn arms(&self) -> (Arm, Arm) {
        match *self {
            PairResult::Win(w) => {
                let d = w.duel();
                (d.first, d.second)
            }
            PairResult::Tie(a, b) => (a, b),
        }
    }
}

/// What a policy learns from one query: the shown arms that are still active (in shown order)
/// and the results between them in canonical order (ties only when ties count as half a win,
/// as [`super::BanditState::record`] tells a policy of ties). `view.wins` already holds every
/// result of the query. [`super::BanditState::record_set`] calls `update_set` only when `results`
/// is not empty; a query whose one shown arm met itself reaches the policy as `record` reports a
/// self-duel (`tie` or `self_duel`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetUpdate {
    pub arms: Vec<Arm>,
    pub results: Vec<PairResult>,
}

/// The default `update_set`: every result goes to `update` (a win) or `tie`, in canonical order.
pub fn feed_pairwise<P: Policy + ?Sized, R: Rng + ?Sized>(
    policy: &mut P,
    view: &View,
    heard: &SetUpdate,
    rng: &mut R,
) {
    for result in &heard.results {
        match *result {
            PairResult::Win(w) => policy.update(view, w, rng),
            PairResult::Tie(a, b) if view.ties == TieRule::HalfWin => policy.tie(view, a, b, rng),
            PairResult::Tie(..) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_below_two_and_above_the_limit_are_refused() {
        assert_eq!(check_size(1, 2), Err(SetError::TooFew(1)));
        assert_eq!(check_size(2, 2), Ok(()));
        let err = check_size(3, 2).unwrap_err();
        assert_eq!(err, SetError::TooMany { m: 3, max: 2 });
        assert!(err.to_string().contains("at most 2"), "{err}");
        assert_eq!(check_size(1000, ANY_NUMBER), Ok(()));
    }

    #[test]
    fn a_self_duel_is_a_one_arm_set() {
        assert_eq!(pair_set(Pair::new(3, 3)), vec![3]);
        assert_eq!(pair_set(Pair::new(3, 1)), vec![3, 1]);
    }
}
