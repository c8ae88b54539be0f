//! [`BanditState`]: everything one experiment's bandit knows: the arms (active or retired), the
//! win matrix, the tie rule and the policy's own state. This is the value the service caches,
//! persists and refreshes, and the simulator steps.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::champion::{self, ChampionReport};
use super::decision::{self, Decision, DecisionLayer, DecisionSettings};
use super::multi::{self, PairResult, SetChoice, SetError, SetOutcome, SetUpdate};
use super::{
    AnyPolicy, Arm, BanditRng, Outcome, Pair, Policy, PolicySpec, SpecError, View, Win, WinMatrix,
};

/// Version of the serialised state layout. A later release that changes the layout bumps it and
/// keeps reading older versions.
pub const STATE_FORMAT_VERSION: u32 = 1;

/// What a tie does to the bandit, chosen per experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TieRule {
    /// A tie is recorded in the tie counts and otherwise ignored: it is no evidence either way.
    #[default]
    Ignore,
    /// A tie counts as half a win for each side in every estimate the policy makes.
    HalfWin,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StateError {
    #[error("arm {0} does not exist")]
    UnknownArm(Arm),
    #[error("arm {0} is retired")]
    RetiredArm(Arm),
    #[error("an experiment needs at least {0} active arms")]
    TooFewArms(usize),
    #[error(
        "state format version {0} is newer than this release understands ({STATE_FORMAT_VERSION})"
    )]
    FormatVersion(u32),
    #[error("a shown set needs at least one arm")]
    EmptySet,
    #[error("arm {0} appears twice in the shown set")]
    RepeatedArm(Arm),
    #[error("the policy compares at most {max} arms per query, the shown set has {size}")]
    SetTooLarge { size: usize, max: usize },
    #[error("arm {0} has a preference but was not shown")]
    NotShown(Arm),
    #[error("arm {0} has a preference against itself")]
    SelfPreference(Arm),
    #[error("the pair ({0}, {1}) has more than one preference")]
    RepeatedPair(Arm, Arm),
}

/// Which layer chose a duel: the policy, or the decision's confirmation layer taking one of the
/// policy's steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chooser {
    Policy,
    Confirmation,
}

/// The state of one experiment's bandit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BanditState {
    pub format_version: u32,
    /// `active[i]` is false once arm `i` is retired.
    pub active: Vec<bool>,
    pub ties: TieRule,
    pub wins: WinMatrix,
    pub policy: AnyPolicy,
    /// The decision settings (serialised as such) and the counts the confirmation layer reads,
    /// derived from `wins` and rebuilt by `warm`. A state written before decisions existed reads
    /// with the default settings.
    #[serde(default)]
    pub decision: DecisionLayer,
}

impl BanditState {
    /// A fresh state for `k` arms running the policy of `spec`.
    pub fn new(
        spec: &PolicySpec,
        k: usize,
        ties: TieRule,
        rng: &mut BanditRng,
    ) -> Result<Self, SpecError> {
        let policy = AnyPolicy::build(spec, k, rng)?;
        let mut state = BanditState {
            format_version: STATE_FORMAT_VERSION,
            active: vec![true; k],
            ties,
            wins: WinMatrix::new(k),
            policy,
            decision: DecisionLayer::default(),
        };
        state.warm();
        Ok(state)
    }

    /// Rebuilds the policy's caches and the decision's counts; call it on a state loaded from
    /// storage before selecting (a state not warmed chooses the same, more slowly).
    pub fn warm(&mut self) {
        let view = View::new(&self.wins, &self.active, self.ties);
        self.policy.warm(&view);
        self.decision.rebuild(&view);
    }

    /// The decision settings: they change what `select` chooses (the confirmation layer), so
    /// every replica of an experiment must hold the same.
    pub fn decision_settings(&self) -> DecisionSettings {
        self.decision.settings()
    }

    /// Sets the decision settings (validate them first: [`DecisionSettings::validate`]).
    pub fn set_decision_settings(&mut self, settings: DecisionSettings) {
        self.decision.set_settings(settings);
        let view = View::new(&self.wins, &self.active, self.ties);
        self.decision.rebuild(&view);
    }

    /// What the evidence decides (O(K^2); pure). A Condorcet winner once decided stays decided
    /// ([`DecisionLayer`]): if the counts no longer separate it, the decision still names it, and
    /// `possible_best` shows what the counts say now.
    pub fn decision(&self) -> Decision {
        let mut d = decision::decide(&self.view(), &self.decision.settings());
        if let Some(c) = self.decision.decided_champion() {
            d.decided = true;
            d.kind = decision::DecisionKind::Condorcet;
            d.champion = Some(c);
            d.winners = vec![c];
            d.outcomes_needed = Some(0);
        }
        d
    }

    /// The Condorcet winner kept since it was first decided, if any (see [`DecisionLayer`]).
    pub fn decided_champion(&self) -> Option<Arm> {
        self.decision.decided_champion()
    }

    /// Restores a decided Condorcet winner kept with a stored state (whose counts alone may no
    /// longer decide it); call it once the decision settings are set. Ignored for an arm that is
    /// not active.
    pub fn restore_decided_champion(&mut self, champion: Arm) {
        let view = View::new(&self.wins, &self.active, self.ties);
        self.decision.restore_decided(&view, champion);
    }

    /// Whether some arm is already a decided Condorcet winner: O(1), for a check after every
    /// outcome (a Copeland decision needs [`BanditState::decision`]).
    pub fn condorcet_decided(&self) -> bool {
        self.decision.condorcet_decided(&self.view())
    }

    /// Checks a deserialised state (e.g. one written by another release).
    pub fn check_version(&self) -> Result<(), StateError> {
        if self.format_version > STATE_FORMAT_VERSION {
            return Err(StateError::FormatVersion(self.format_version));
        }
        Ok(())
    }

    pub fn view(&self) -> View<'_> {
        View::new(&self.wins, &self.active, self.ties)
    }

    pub fn k(&self) -> usize {
        self.active.len()
    }

    pub fn active_count(&self) -> usize {
        self.active.iter().filter(|a| **a).count()
    }

    /// The next duel (read-only): while nothing is decided, a confirmation duel of the decision
    /// layer when it takes this step (see [`decision::DecisionLayer::confirmation`]), otherwise
    /// the policy's. The layer decides first, so the policy samples only for its own steps.
    #[inline]
    pub fn select<R: Rng + ?Sized>(&self, rng: &mut R) -> Pair {
        self.select_chosen(rng).0
    }

    /// [`select`](Self::select), and which of the policy and the confirmation layer chose the
    /// duel (the same draws from `rng`).
    #[inline]
    pub fn select_chosen<R: Rng + ?Sized>(&self, rng: &mut R) -> (Pair, Chooser) {
        let view = self.view();
        if !self.policy.accepts_confirmations() {
            return (self.policy.select(&view, rng), Chooser::Policy);
        }
        if let Some(confirmation) = self.decision.confirmation(&view, rng) {
            return (confirmation, Chooser::Confirmation);
        }
        let chosen = self.policy.select(&view, rng);
        if chosen.first == chosen.second
            && let Some(confirmation) = self.decision.instead_of_self_duel(&view, rng)
        {
            return (confirmation, Chooser::Confirmation);
        }
        (chosen, Chooser::Policy)
    }

    fn check_arm(&self, arm: Arm) -> Result<(), StateError> {
        if arm >= self.k() {
            Err(StateError::UnknownArm(arm))
        } else {
            Ok(())
        }
    }

    /// Records how `duel` (in the order `select` returned it) ended. The outcome always counts
    /// in the win matrix or the tie counts (even for an arm retired since the duel was issued);
    /// the policy learns only while both arms are active: of a win always, of a tie when ties
    /// count as half a win, and of a self-duel as a time step otherwise.
    pub fn record<R: Rng + ?Sized>(
        &mut self,
        duel: Pair,
        outcome: Outcome,
        rng: &mut R,
    ) -> Result<(), StateError> {
        self.check_arm(duel.first)?;
        self.check_arm(duel.second)?;
        let win = match outcome {
            // An arm cannot beat itself: a self-duel is a tie whatever the outcome says.
            _ if duel.first == duel.second => None,
            Outcome::FirstWins => Some(Win::of(duel, true)),
            Outcome::SecondWins => Some(Win::of(duel, false)),
            Outcome::Tie => None,
        };
        let both_active = self.active[duel.first] && self.active[duel.second];
        let counted = both_active && duel.first != duel.second;
        if counted {
            let view = View::new(&self.wins, &self.active, self.ties);
            self.decision.before(&view, duel.first, duel.second);
        }
        match win {
            Some(w) => self.wins.record_win(w.winner, w.loser),
            None => self.wins.record_tie(duel.first, duel.second),
        }
        let view = View::new(&self.wins, &self.active, self.ties);
        if counted {
            self.decision.after(&view, duel.first, duel.second);
        } else if both_active && duel.first == duel.second {
            self.decision.self_duel(&view, duel.first);
        }
        if !both_active {
            return Ok(());
        }
        match win {
            Some(w) => self.policy.update(&view, w, rng),
            None if self.ties == TieRule::HalfWin => {
                self.policy.tie(&view, duel.first, duel.second, rng)
            }
            None if duel.first == duel.second => self.policy.self_duel(&view, duel.first, rng),
            None => {}
        }
        Ok(())
    }

    /// The most rankers per query the policy compares (2 for a pairwise policy).
    pub fn max_rankers_per_query(&self) -> usize {
        self.policy.max_rankers_per_query()
    }

    /// The arms one query compares: 1 to `m` distinct active arms (read-only). Refused when the
    /// policy takes fewer than `m` arms per query (the error names its limit) or `m < 2`.
    pub fn select_set<R: Rng + ?Sized>(&self, m: usize, rng: &mut R) -> SetChoice {
        self.select_set_chosen(m, rng).map(|(set, _)| set)
    }

    /// [`select_set`](Self::select_set), and which of the policy and the confirmation layer
    /// chose the query's rankers (the same draws from `rng`).
    pub fn select_set_chosen<R: Rng + ?Sized>(
        &self,
        m: usize,
        rng: &mut R,
    ) -> Result<(Vec<Arm>, Chooser), SetError> {
        multi::check_size(m, self.policy.max_rankers_per_query())?;
        let view = self.view();
        // The layer takes its share of queries as `select` does; a query it takes is a duel (two
        // rankers, which any query may show), since the evidence it gathers is one pair's.
        if self.policy.accepts_confirmations()
            && let Some(confirmation) = self.decision.confirmation(&view, rng)
        {
            return Ok((multi::pair_set(confirmation), Chooser::Confirmation));
        }
        let chosen = self.policy.select_set(&view, m, rng)?;
        // A one-arm set is a self-duel: as in `select`, it goes to the decision while one is due.
        if let [_only] = chosen.as_slice()
            && self.policy.accepts_confirmations()
            && let Some(confirmation) = self.decision.instead_of_self_duel(&view, rng)
        {
            return Ok((multi::pair_set(confirmation), Chooser::Confirmation));
        }
        Ok((chosen, Chooser::Policy))
    }

    /// Records every preference one shown list produced, once: `shown` is the set as
    /// `select_set` returned it, `outcome` its wins and ties (pairs with no preference absent).
    /// Everything is checked before anything changes. Every result counts in the win matrix or
    /// the tie counts (even for arms retired since the query); then the policy learns, in one
    /// [`Policy::update_set`] call, the results between shown arms that are still active, in
    /// canonical order (see [`multi`]). A one-arm set is a self-duel, recorded as `record`
    /// records one; a query with no result between active arms teaches the policy nothing, as a
    /// tie under [`TieRule::Ignore`] does in `record`. A two-arm set is exactly `record`.
    pub fn record_set<R: Rng + ?Sized>(
        &mut self,
        shown: &[Arm],
        outcome: &SetOutcome,
        rng: &mut R,
    ) -> Result<(), StateError> {
        let results = self.check_set(shown, outcome)?;
        if let [only] = shown {
            return self.record(Pair::new(*only, *only), Outcome::Tie, rng);
        }
        let counted: Vec<(Arm, Arm)> = results
            .iter()
            .map(PairResult::arms)
            .filter(|&(a, b)| self.active[a] && self.active[b])
            .collect();
        let view = View::new(&self.wins, &self.active, self.ties);
        for &(a, b) in &counted {
            self.decision.before(&view, a, b);
        }
        for result in &results {
            match *result {
                PairResult::Win(w) => self.wins.record_win(w.winner, w.loser),
                PairResult::Tie(a, b) => self.wins.record_tie(a, b),
            }
        }
        let view = View::new(&self.wins, &self.active, self.ties);
        for &(a, b) in &counted {
            self.decision.after(&view, a, b);
        }
        let active = |a: Arm| self.active[a];
        let heard = SetUpdate {
            arms: shown.iter().copied().filter(|&a| active(a)).collect(),
            results: results
                .into_iter()
                .filter(|r| {
                    let (a, b) = r.arms();
                    active(a)
                        && active(b)
                        && (matches!(r, PairResult::Win(_)) || self.ties == TieRule::HalfWin)
                })
                .collect(),
        };
        if heard.results.is_empty() {
            return Ok(());
        }
        let view = View::new(&self.wins, &self.active, self.ties);
        self.policy.update_set(&view, &heard, rng);
        Ok(())
    }

    /// Validates a shown set and its outcome; returns the results in canonical order.
    fn check_set(
        &self,
        shown: &[Arm],
        outcome: &SetOutcome,
    ) -> Result<Vec<PairResult>, StateError> {
        if shown.is_empty() {
            return Err(StateError::EmptySet);
        }
        let max = self.policy.max_rankers_per_query();
        if shown.len() > max {
            return Err(StateError::SetTooLarge {
                size: shown.len(),
                max,
            });
        }
        // (arm, position) sorted by arm: repeated arms are neighbours, and a position is a
        // binary search away (a multileaved set may hold hundreds of rankers).
        let mut by_arm: Vec<(Arm, usize)> = Vec::with_capacity(shown.len());
        for (i, &a) in shown.iter().enumerate() {
            self.check_arm(a)?;
            by_arm.push((a, i));
        }
        by_arm.sort_unstable();
        if let Some(w) = by_arm.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(StateError::RepeatedArm(w[0].0));
        }
        let position = |a: Arm| {
            by_arm
                .binary_search_by_key(&a, |&(arm, _)| arm)
                .map(|i| by_arm[i].1)
                .map_err(|_| StateError::NotShown(a))
        };
        let mut placed = Vec::with_capacity(outcome.wins.len() + outcome.ties.len());
        let pairs = outcome
            .wins
            .iter()
            .map(|&p| (p, true))
            .chain(outcome.ties.iter().map(|&p| (p, false)));
        for ((a, b), is_win) in pairs {
            let (pa, pb) = (position(a)?, position(b)?);
            if a == b {
                return Err(StateError::SelfPreference(a));
            }
            let result = if is_win {
                PairResult::Win(Win {
                    winner: a,
                    loser: b,
                    winner_first: pa < pb,
                })
            } else if pa < pb {
                PairResult::Tie(a, b)
            } else {
                PairResult::Tie(b, a)
            };
            placed.push((pa.min(pb), pa.max(pb), result));
        }
        placed.sort_unstable_by_key(|&(lo, hi, _)| (lo, hi));
        if let Some(w) = placed
            .windows(2)
            .find(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
        {
            return Err(StateError::RepeatedPair(shown[w[0].0], shown[w[0].1]));
        }
        Ok(placed.into_iter().map(|(_, _, r)| r).collect())
    }

    /// Adds an arm with no comparisons; returns its index.
    pub fn add_arm(&mut self) -> Arm {
        let arm = self.wins.add_arm();
        self.active.push(true);
        let view = View::new(&self.wins, &self.active, self.ties);
        self.policy.arm_added(&view, arm);
        self.decision.arms_changed(&view, true);
        arm
    }

    /// Retires an arm: it is never selected again. At least two arms stay active.
    pub fn retire_arm(&mut self, arm: Arm) -> Result<(), StateError> {
        self.check_arm(arm)?;
        if !self.active[arm] {
            return Err(StateError::RetiredArm(arm));
        }
        if self.active_count() <= 2 {
            return Err(StateError::TooFewArms(2));
        }
        self.active[arm] = false;
        let view = View::new(&self.wins, &self.active, self.ties);
        self.policy.arm_retired(&view, arm);
        self.decision.arms_changed(&view, false);
        Ok(())
    }

    /// The current champion and how sure joust is of it.
    pub fn champion(&self) -> ChampionReport {
        let view = self.view();
        champion::report(
            &view,
            self.policy.contenders(&view),
            self.policy.belief(&view),
            self.decision.settings().delta,
        )
    }
}
