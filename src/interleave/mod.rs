//! Interleaving: merge the result lists of two (or more) rankers into one list shown to a user, and
//! turn the user's clicks on that list into a judgement of which ranker is better.
//!
//! Pure: no I/O, no async; every random choice takes an explicit RNG. Every value here is
//! serde-serialisable, so the service can carry an [`Interleaving`] in a signed duel token (or
//! store it) and credit the clicks that arrive later.
//!
//! Conventions shared by every method (each method's module says how it works):
//! - **Documents** are any `Clone + Eq + Hash` value ([`Doc`]): string ids in the service, small
//!   integers in the simulator.
//! - **Duplicates inside a list** are dropped after their first occurrence before anything else
//!   happens: a ranker cannot promote a document by listing it twice.
//! - **Documents in only one list** are shown like any other, and never earn the ranker that
//!   did not list them any credit (Probabilistic gives them no weight in that ranker's softmax;
//!   Balanced and Optimized rank them below everything).
//! - **Fairness under random clicks** is what every method's handling of unequal lengths is
//!   chosen for: when the clicks do not depend on the documents, neither ranker may win more
//!   often. A longer list must not earn credit for the documents the shorter one cannot match,
//!   so Team-Draft drafts only rounds both rankers can complete, Balanced and Probabilistic show
//!   at most as many documents per ranker as the shorter list has, and Optimized balances the
//!   expected credit at every depth. Balanced keeps the bias it is known for on shared documents
//!   ranked differently (see its module).
//! - **Empty lists** are valid input: the shown list may then be empty, and no clicks means a tie.
//! - **Unequal lengths** are valid input; each method documents what happens when one list runs out.
//! - **Length cap**: the shown list never exceeds `max_len` documents.
//! - **Clicks** are 0-based positions in the shown list. Repeated positions count once and
//!   positions past the end are ignored ([`Interleaving::check_clicks`] reports them, for callers
//!   that prefer to reject such input).

mod balanced;
mod doc_set;
mod lp;
mod methods;
mod multileave;
mod optimized;
mod outcome;
mod pairwise_preference;
mod preferences;
mod probabilistic;
mod probabilistic_multileave;
mod sample_only_scored;
mod team_draft;

pub use balanced::BalancedInterleaving;
pub use methods::{
    DEFAULT_TAU, METHODS, Method, MethodInfo, MethodOption, OptionValues, TAU, method_info,
    method_names,
};
pub use multileave::{MAX_ORDERS_CHECKED, MultileaveInterleaving};
pub use optimized::{
    MAX_OPTIMIZED_LEN, OptimizedDistribution, OptimizedInterleaving, optimized_distribution,
};
pub use outcome::{Outcome, SoftOutcome};
pub use pairwise_preference::PairwisePreferenceInterleaving;
pub use preferences::{Preference, Preferences};
pub use probabilistic::ProbabilisticInterleaving;
pub use probabilistic_multileave::{
    MAX_PROBABILISTIC_MULTILEAVE_RANKERS, ProbabilisticMultileaveInterleaving,
};
pub use sample_only_scored::SampleOnlyScoredInterleaving;
pub use team_draft::{Exhausted, SharedPrefix, Team, TeamDraftInterleaving, TeamDraftOptions};

use rand::Rng;
use serde::{Deserialize, Serialize};
use std::hash::Hash;

/// What a document id must support.
pub trait Doc: Clone + Eq + Hash + std::fmt::Debug {}
impl<T: Clone + Eq + Hash + std::fmt::Debug> Doc for T {}

/// Why an interleaving could not be built.
#[derive(Debug, Clone, PartialEq)]
pub enum InterleaveError {
    NeedsTwoLists {
        method: &'static str,
        got: usize,
    },
    TooFewLists {
        got: usize,
    },
    BadTau(f64),
    TooLongForOptimized {
        max: usize,
        asked: usize,
    },
    TooManyRankers {
        method: &'static str,
        max: usize,
        got: usize,
    },
}

// Written out rather than derived: this layer depends on rand and serde only.
impl std::fmt::Display for InterleaveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InterleaveError::NeedsTwoLists { method, got } => {
                write!(f, "{method} interleaves exactly 2 lists, got {got}")
            }
            InterleaveError::TooFewLists { got } => {
                write!(f, "multileaving needs at least 2 lists, got {got}")
            }
            InterleaveError::BadTau(tau) => {
                let OptionValues::Number { min, max, .. } = TAU.values else {
                    unreachable!("tau is a number")
                };
                write!(f, "tau must be in [{min}, {max}], got {tau}")
            }
            InterleaveError::TooLongForOptimized { max, asked } => write!(
                f,
                "optimized interleaving supports at most {max} shown documents, asked for {asked}"
            ),
            InterleaveError::TooManyRankers { method, max, got } => {
                write!(f, "{method} compares at most {max} rankers, got {got}")
            }
        }
    }
}

impl std::error::Error for InterleaveError {}

/// A built interleaving: the shown list and what crediting its clicks needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Interleaving<D> {
    TeamDraft(TeamDraftInterleaving<D>),
    Balanced(BalancedInterleaving<D>),
    Probabilistic(ProbabilisticInterleaving<D>),
    Optimized(OptimizedInterleaving<D>),
    TeamDraftMultileave(MultileaveInterleaving<D>),
    ProbabilisticMultileave(ProbabilisticMultileaveInterleaving<D>),
    SampleOnlyScored(SampleOnlyScoredInterleaving<D>),
    PairwisePreference(PairwisePreferenceInterleaving<D>),
}

/// Interleaves `lists` (one per ranker, best first) with `method`, showing at most `max_len`
/// documents. Two-ranker methods take exactly two lists: A = `lists[0]`, B = `lists[1]`.
pub fn interleave<D: Doc, R: Rng + ?Sized>(
    method: &Method,
    lists: &[&[D]],
    max_len: usize,
    rng: &mut R,
) -> Result<Interleaving<D>, InterleaveError> {
    let two = |name: &'static str| -> Result<(Vec<D>, Vec<D>), InterleaveError> {
        match lists {
            [a, b] => Ok((dedup(a), dedup(b))),
            _ => Err(InterleaveError::NeedsTwoLists {
                method: name,
                got: lists.len(),
            }),
        }
    };
    method.validate()?;
    Ok(match method {
        Method::TeamDraft(options) => {
            let (a, b) = two(method.name())?;
            Interleaving::TeamDraft(TeamDraftInterleaving::new(&a, &b, *options, max_len, rng))
        }
        Method::Balanced => {
            let (a, b) = two(method.name())?;
            Interleaving::Balanced(BalancedInterleaving::new(&a, &b, max_len, rng))
        }
        Method::Probabilistic { tau } => {
            let (a, b) = two(method.name())?;
            Interleaving::Probabilistic(ProbabilisticInterleaving::new(&a, &b, *tau, max_len, rng))
        }
        Method::Optimized => {
            let (a, b) = two(method.name())?;
            Interleaving::Optimized(optimized_distribution(&a, &b, max_len)?.sample(rng))
        }
        Method::TeamDraftMultileave => {
            if lists.len() < 2 {
                return Err(InterleaveError::TooFewLists { got: lists.len() });
            }
            let lists: Vec<Vec<D>> = lists.iter().map(|l| dedup(l)).collect();
            Interleaving::TeamDraftMultileave(MultileaveInterleaving::new(&lists, max_len, rng))
        }
        Method::ProbabilisticMultileave { tau } => {
            if lists.len() < 2 {
                return Err(InterleaveError::TooFewLists { got: lists.len() });
            }
            if lists.len() > MAX_PROBABILISTIC_MULTILEAVE_RANKERS {
                return Err(InterleaveError::TooManyRankers {
                    method: method.name(),
                    max: MAX_PROBABILISTIC_MULTILEAVE_RANKERS,
                    got: lists.len(),
                });
            }
            let lists: Vec<Vec<D>> = lists.iter().map(|l| dedup(l)).collect();
            Interleaving::ProbabilisticMultileave(ProbabilisticMultileaveInterleaving::new(
                &lists, *tau, max_len, rng,
            ))
        }
        Method::SampleOnlyScored { tau } => {
            if lists.len() < 2 {
                return Err(InterleaveError::TooFewLists { got: lists.len() });
            }
            let lists: Vec<Vec<D>> = lists.iter().map(|l| dedup(l)).collect();
            Interleaving::SampleOnlyScored(SampleOnlyScoredInterleaving::new(
                &lists, *tau, max_len, rng,
            ))
        }
        Method::PairwisePreference => {
            if lists.len() < 2 {
                return Err(InterleaveError::TooFewLists { got: lists.len() });
            }
            let lists: Vec<Vec<D>> = lists.iter().map(|l| dedup(l)).collect();
            Interleaving::PairwisePreference(PairwisePreferenceInterleaving::new(
                &lists, max_len, rng,
            ))
        }
    })
}

impl<D: Doc> Interleaving<D> {
    /// The list to show, best first.
    pub fn shown(&self) -> &[D] {
        match self {
            Interleaving::TeamDraft(i) => &i.shown,
            Interleaving::Balanced(i) => &i.shown,
            Interleaving::Probabilistic(i) => &i.shown,
            Interleaving::Optimized(i) => &i.shown,
            Interleaving::TeamDraftMultileave(i) => &i.shown,
            Interleaving::ProbabilisticMultileave(i) => &i.shown,
            Interleaving::SampleOnlyScored(i) => &i.shown,
            Interleaving::PairwisePreference(i) => &i.shown,
        }
    }

    /// How many rankers take part (2 except for multileaving).
    pub fn rankers(&self) -> usize {
        match self {
            Interleaving::TeamDraftMultileave(i) => i.rankers,
            Interleaving::ProbabilisticMultileave(i) => i.rankers,
            Interleaving::SampleOnlyScored(i) => i.ranks.len(),
            Interleaving::PairwisePreference(i) => i.ranks.len(),
            _ => 2,
        }
    }

    /// The judgement of ranker A (`lists[0]`) against ranker B (`lists[1]`), as probabilities.
    /// Team-Draft and Balanced give a certain outcome; Probabilistic gives the outcome
    /// marginalised over the rankers' possible assignments to the shown documents; Optimized
    /// spreads it in proportion to the credit difference (see its module).
    pub fn soft_outcome(&self, clicks: &[usize]) -> SoftOutcome {
        let clicks = normalise_clicks(clicks, self.shown().len());
        match self {
            Interleaving::TeamDraft(i) => i.soft_outcome(&clicks),
            Interleaving::Balanced(i) => i.soft_outcome(&clicks),
            Interleaving::Probabilistic(i) => i.soft_outcome(&clicks),
            Interleaving::Optimized(i) => i.soft_outcome(&clicks),
            Interleaving::TeamDraftMultileave(i) => i.pairwise(&clicks, 0, 1),
            Interleaving::ProbabilisticMultileave(i) => i.preferences(&clicks).pair(0, 1),
            Interleaving::SampleOnlyScored(i) => i.preferences(&clicks).pair(0, 1),
            Interleaving::PairwisePreference(i) => i.preferences(&clicks).pair(0, 1),
        }
    }

    /// Which of A and B the clicks favour (the more likely side for Probabilistic: to record an
    /// outcome, draw it with [`SoftOutcome::sample`], which stays fair).
    pub fn credit(&self, clicks: &[usize]) -> Outcome {
        self.soft_outcome(clicks).most_likely()
    }

    /// Credit per ranker, in list order; what "credit" means is the method's (documented there).
    pub fn ranker_credit(&self, clicks: &[usize]) -> Vec<f64> {
        let clicks = normalise_clicks(clicks, self.shown().len());
        match self {
            Interleaving::TeamDraft(i) => i.ranker_credit(&clicks).to_vec(),
            Interleaving::Balanced(i) => i.ranker_credit(&clicks).to_vec(),
            Interleaving::Probabilistic(i) => i.ranker_credit(&clicks).to_vec(),
            Interleaving::Optimized(i) => i.ranker_credit(&clicks).to_vec(),
            Interleaving::TeamDraftMultileave(i) => i.ranker_credit(&clicks),
            Interleaving::ProbabilisticMultileave(i) => i.preferences(&clicks).credits().to_vec(),
            Interleaving::SampleOnlyScored(i) => i.preferences(&clicks).credits().to_vec(),
            Interleaving::PairwisePreference(i) => i.preferences(&clicks).credits().to_vec(),
        }
    }

    /// The judgement of ranker `i` against ranker `j` (any method; two-ranker methods accept
    /// only 0 and 1).
    pub fn pairwise(&self, clicks: &[usize], i: usize, j: usize) -> SoftOutcome {
        assert!(i < self.rankers() && j < self.rankers(), "no such ranker");
        match self {
            Interleaving::TeamDraftMultileave(m) => {
                m.pairwise(&normalise_clicks(clicks, m.shown.len()), i, j)
            }
            Interleaving::ProbabilisticMultileave(_)
            | Interleaving::SampleOnlyScored(_)
            | Interleaving::PairwisePreference(_) => self.preferences(clicks).pair(i, j),
            _ if i == j => SoftOutcome::TIE,
            _ if i == 0 => self.soft_outcome(clicks),
            _ => self.soft_outcome(clicks).swapped(),
        }
    }

    /// The judgement between every pair of rankers and each ranker's credit: the method-independent
    /// result (for two-ranker methods, the one pair (0, 1) is [`Self::soft_outcome`]).
    pub fn preferences(&self, clicks: &[usize]) -> Preferences {
        match self {
            Interleaving::ProbabilisticMultileave(i) => {
                i.preferences(&normalise_clicks(clicks, i.shown.len()))
            }
            Interleaving::SampleOnlyScored(i) => {
                i.preferences(&normalise_clicks(clicks, i.shown.len()))
            }
            Interleaving::PairwisePreference(i) => {
                i.preferences(&normalise_clicks(clicks, i.shown.len()))
            }
            _ => Preferences::from_fn(self.ranker_credit(clicks), |i, j| {
                self.pairwise(clicks, i, j)
            }),
        }
    }

    /// The judgement of A against B from events on shown positions, each with a value (an
    /// order's amount): each ranker's credit is the value-weighted sum of the method's credit
    /// for each event's document alone (for Team-Draft, the values of the events on its team's
    /// documents), and more credit wins.
    pub fn value_weighted(&self, events: &[(usize, f64)]) -> SoftOutcome {
        let (mut a, mut b) = (0.0, 0.0);
        for &(position, value) in events {
            let credit = self.ranker_credit(&[position]);
            a += value * credit.first().copied().unwrap_or(0.0);
            b += value * credit.get(1).copied().unwrap_or(0.0);
        }
        SoftOutcome::compare(a, b)
    }

    /// Credit per ranker, in list order (the same as [`Self::ranker_credit`]).
    pub fn credits(&self, clicks: &[usize]) -> Vec<f64> {
        self.ranker_credit(clicks)
    }

    /// Reports click positions that [`Interleaving::credit`] would ignore.
    pub fn check_clicks(&self, clicks: &[usize]) -> Result<(), String> {
        let len = self.shown().len();
        match clicks.iter().find(|&&c| c >= len) {
            Some(c) => Err(format!(
                "click at position {c}, but only {len} documents were shown"
            )),
            None => Ok(()),
        }
    }
}

/// The list without repeated documents, keeping each document's first occurrence.
pub fn dedup<D: Doc>(list: &[D]) -> Vec<D> {
    let mut seen = doc_set::DocSet::with_capacity(list.len());
    list.iter().filter(|&d| seen.insert(d)).cloned().collect()
}

/// Sorted, unique, in-range click positions.
fn normalise_clicks(clicks: &[usize], len: usize) -> Vec<usize> {
    let mut c: Vec<usize> = clicks.iter().copied().filter(|&p| p < len).collect();
    c.sort_unstable();
    c.dedup();
    c
}

/// 1-based rank of `d` in `list`, or `None`.
fn rank_in<D: Doc>(list: &[D], d: &D) -> Option<u32> {
    list.iter().position(|x| x == d).map(|p| p as u32 + 1)
}
