//! Dueling-bandit policies: pure, synchronous, no I/O.
//!
//! A policy chooses which two arms (rankers) to compare next and learns from the outcomes.
//! Every policy follows one contract, which is what lets the service select from a cached snapshot
//! on many replicas while outcomes are applied in order in one place:
//!
//! - [`Policy::select`] is read-only: it never changes persistent state, so any number of
//!   selections may happen between two updates, and the same snapshot can serve many requests.
//! - Every persistent change happens in [`Policy::update`] (a win) or [`Policy::tie`]. Outcomes may
//!   arrive late, in batches, out of order, or never; a policy must not assume that the pair it
//!   selected last is the next to get feedback.
//! - The win matrix ([`WinMatrix`]) belongs to [`BanditState`], not to the policy: it is updated
//!   before the policy's `update` is called, and policies read it through [`View`].
//! - Every random choice takes an explicit RNG, so a seeded simulation replays exactly.
//!
//! - A query may compare more than two arms (multileaving): [`Policy::select_set`] and
//!   [`Policy::update_set`], with defaults that keep every pairwise policy working unchanged at
//!   m = 2; see the `multi` module for the contract and which policies take m > 2.
//!
//! Arms are stable indices `0..k`. Arms can be added later (with no comparisons) and retired
//! (never selected again; their index is never reused).

mod champion;
mod decision;
mod footprint;
mod memory;
mod multi;
mod params;
mod policies;
mod registry;
mod spec;
mod state;
mod stats;
#[cfg(test)]
mod testing;
pub mod unit_evidence;
mod wins;

pub use champion::{
    ChampionBasis, ChampionReport, DELTA as CHAMPION_DELTA, PreferenceEstimate,
    estimate as estimate_preference, report as champion_report,
};
pub use decision::{
    Boundary, Contender, DEFAULT_DELTA, DEFAULT_MAX_CONFIRMATION_SHARE, Decision, DecisionKind,
    DecisionLayer, DecisionSettings, MissingEvidence, decide,
};
pub use footprint::Footprint;
pub use memory::{MemoryEstimate, estimate_memory};
pub use multi::{ANY_NUMBER, PairResult, SetChoice, SetError, SetOutcome, SetUpdate, pair_set};
pub use policies::{Dts, DtsParams};
pub use registry::{
    AnyPolicy, POLICY_NAMES, PolicyInfo, list_names, multi_ranker_policies, policy_info, registry,
};
pub use spec::{PolicySpec, SpecError};
pub use state::{BanditState, Chooser, StateError, TieRule};
pub use stats::kl::{kl_bernoulli, kl_to_half};
pub use stats::normal::normal_cdf;
pub use stats::{Tournament, ucb};
pub use wins::{DENSE_LIMIT, WinMatrix};

use rand::Rng;

/// Index of an arm (ranker) within one experiment.
pub type Arm = usize;

/// The random number generator used across joust: fast, seedable, serialisable.
pub type BanditRng = rand_xoshiro::Xoshiro256PlusPlus;

/// A duel: the two arms to compare. `first == second` only when a policy deliberately compares an
/// arm with itself (e.g. MergeDTS once a single arm survives).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pair {
    pub first: Arm,
    pub second: Arm,
}

impl Pair {
    pub fn new(first: Arm, second: Arm) -> Self {
        Pair { first, second }
    }
}

/// How a duel ended, by the places of its arms in the [`Pair`] that `select` returned. The
/// service keeps that order in the duel's token, so every outcome says which side won.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    FirstWins,
    SecondWins,
    Tie,
}

/// A decided duel as a policy learns it: the winner, the loser, and whether the winner was the
/// duel's first arm. Most policies read only the winner and the loser; the reductions of Ailon,
/// Karnin and Joachims (Sparring, Doubler, MultiSBM) credit each side's box with its own arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Win {
    pub winner: Arm,
    pub loser: Arm,
    pub winner_first: bool,
}

impl Win {
    /// The win of `duel`'s first arm (`first_won`) or of its second.
    pub fn of(duel: Pair, first_won: bool) -> Self {
        if first_won {
            Win {
                winner: duel.first,
                loser: duel.second,
                winner_first: true,
            }
        } else {
            Win {
                winner: duel.second,
                loser: duel.first,
                winner_first: false,
            }
        }
    }

    /// The duel in the order `select` returned it.
    pub fn duel(&self) -> Pair {
        if self.winner_first {
            Pair::new(self.winner, self.loser)
        } else {
            Pair::new(self.loser, self.winner)
        }
    }
}

/// What a policy may read when it selects or updates: the shared win matrix, which arms are
/// active, and how ties count.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    pub wins: &'a WinMatrix,
    pub active: &'a [bool],
    pub ties: TieRule,
}

impl<'a> View<'a> {
    pub fn new(wins: &'a WinMatrix, active: &'a [bool], ties: TieRule) -> Self {
        View { wins, active, ties }
    }
}

impl View<'_> {
    /// Number of arms, active or retired.
    pub fn k(&self) -> usize {
        self.active.len()
    }

    pub fn is_active(&self, arm: Arm) -> bool {
        self.active.get(arm).copied().unwrap_or(false)
    }

    /// Active arms in index order.
    pub fn active_arms(&self) -> impl Iterator<Item = Arm> + '_ {
        self.active
            .iter()
            .enumerate()
            .filter(|(_, a)| **a)
            .map(|(i, _)| i)
    }

    /// Evidence that `i` beats `j`: wins, plus half of the ties when ties count as half a win.
    #[inline]
    pub fn score(&self, i: Arm, j: Arm) -> f64 {
        let w = self.wins.wins(i, j) as f64;
        match self.ties {
            TieRule::Ignore => w,
            TieRule::HalfWin => w + 0.5 * self.wins.ties(i, j) as f64,
        }
    }

    /// Number of comparisons between `i` and `j` that count as evidence.
    #[inline]
    pub fn count(&self, i: Arm, j: Arm) -> f64 {
        self.score(i, j) + self.score(j, i)
    }
}

/// The contract every policy implements. See the module documentation.
pub trait Policy {
    /// Chooses the next duel among active arms. Must not change persistent state.
    fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Pair;

    /// Learns that `win.winner` beat `win.loser`. `view.wins` already includes this outcome.
    /// Called only when both arms are active and distinct ([`BanditState::record`] turns a
    /// self-duel into a tie whatever its outcome says).
    fn update<R: Rng + ?Sized>(&mut self, view: &View, win: Win, rng: &mut R);

    /// Learns of a tie in the duel (`a` first, `b` second) when the experiment counts ties as
    /// half a win each. `view.wins` already includes it. The default does nothing beyond the
    /// shared counts.
    fn tie<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, rng: &mut R) {
        let _ = (view, a, b, rng);
    }

    /// Learns that `arm` met itself when the experiment ignores ties (under half-win ties,
    /// [`Policy::tie`] hears of it). A self-duel carries no evidence, but it is a time step: a
    /// policy whose confidence bounds widen with time must count it, or once it duels its
    /// champion with itself its bounds stop widening and it never explores again. The default
    /// does nothing.
    fn self_duel<R: Rng + ?Sized>(&mut self, view: &View, arm: Arm, rng: &mut R) {
        let _ = (view, arm, rng);
    }

    /// Rebuilds whatever the policy caches to make `select` fast (caches are not persisted).
    /// The service calls it once on every state it loads, so that selections served from that
    /// snapshot do not recompute from the win matrix each time. The default has no cache.
    fn warm(&mut self, view: &View) {
        let _ = view;
    }

    /// A new arm `arm` (index `view.k() - 1`) joined with no comparisons.
    fn arm_added(&mut self, view: &View, arm: Arm);

    /// `arm` was retired: it must never be selected again.
    fn arm_retired(&mut self, view: &View, arm: Arm);

    /// Arms the policy still considers possible winners (elimination policies), or `None` when
    /// the policy eliminates nothing and every active arm is a contender.
    fn contenders(&self, view: &View) -> Option<Vec<Arm>> {
        let _ = view;
        None
    }

    /// The policy's own belief about the best arm, where it has one (e.g. Interleaved Filter's
    /// incumbent, MergeDTS's last survivor).
    fn belief(&self, view: &View) -> Option<Arm> {
        let _ = view;
        None
    }

    /// Chooses the arms one query compares: 1 to `m` distinct active arms (one arm is a
    /// self-duel), read-only like `select`. The default serves m = 2 with `select`'s pair and
    /// refuses any other m; see [`multi`].
    fn select_set<R: Rng + ?Sized>(&self, view: &View, m: usize, rng: &mut R) -> SetChoice {
        multi::check_size(m, 2)?;
        Ok(multi::pair_set(self.select(view, rng)))
    }

    /// Learns every preference one shown list produced, once. `view.wins` already holds them
    /// all. The default feeds each result to `update` or `tie` in canonical order
    /// ([`multi::feed_pairwise`]), which for a two-arm set is exactly what `record` does.
    fn update_set<R: Rng + ?Sized>(&mut self, view: &View, heard: &SetUpdate, rng: &mut R) {
        multi::feed_pairwise(self, view, heard, rng);
    }
}
