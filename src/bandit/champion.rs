//! The champion report: which arm joust currently believes is best, and how sure it is.
//!
//! It is computed from the shared win matrix (never from a policy's internals), restricted to the
//! policy's contenders where the policy eliminates arms: an elimination policy stops comparing
//! the arms it dropped, so global counts would favour arms that merely played weak opponents.
//!
//! Confidence intervals are the decision's anytime-valid confidence sequences
//! ([`super::decision`]) of the Condorcet decision (delta, 5% unless the experiment sets
//! another; 90% of it split over the active arms), so `confident` is wrong with probability at
//! most 0.9 delta however often anyone looks at the report and whatever pairs the policy chose.

use super::decision::Boundary;
use super::{Arm, View};

/// Default overall error probability of the intervals (all pairs at once).
pub const DELTA: f64 = super::decision::DEFAULT_DELTA;

/// Estimated probability that `i` beats `j`, with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PreferenceEstimate {
    pub p: f64,
    pub lower: f64,
    pub upper: f64,
    /// Comparisons counted as evidence (ties count when they count as half a win).
    pub comparisons: f64,
}

/// Estimate of P(i beats j) for an experiment with `k_active` active arms, at the default
/// [`DELTA`]. With no comparisons the estimate is 1/2 with the whole [0, 1] as its interval.
pub fn estimate(view: &View, i: Arm, j: Arm, k_active: usize) -> PreferenceEstimate {
    estimate_with(view, i, j, &Boundary::condorcet(DELTA, k_active))
}

/// Estimate of P(i beats j) with the confidence sequence `boundary`.
pub fn estimate_with(view: &View, i: Arm, j: Arm, boundary: &Boundary) -> PreferenceEstimate {
    let n = view.count(i, j);
    if n <= 0.0 || i == j {
        return PreferenceEstimate {
            p: 0.5,
            lower: if i == j { 0.5 } else { 0.0 },
            upper: if i == j { 0.5 } else { 1.0 },
            comparisons: n,
        };
    }
    let p = view.score(i, j) / n;
    let radius = boundary.radius(n);
    PreferenceEstimate {
        p,
        lower: (p - radius).max(0.0),
        upper: (p + radius).min(1.0),
        comparisons: n,
    }
}

/// How the champion was chosen, strongest evidence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChampionBasis {
    /// Its lower confidence bound against every other active arm exceeds 1/2.
    ConfidentCondorcet,
    /// The policy's own belief (e.g. the last arm an elimination policy kept).
    Policy,
    /// It beats every other contender empirically, not yet with confidence.
    CondorcetCandidate,
    /// No arm beats all others; it leads the Copeland scores.
    Copeland,
    /// No comparison yet.
    None,
}

impl ChampionBasis {
    /// The basis as the API names it (and history points store it).
    pub fn as_str(self) -> &'static str {
        match self {
            ChampionBasis::ConfidentCondorcet => "confident_condorcet",
            ChampionBasis::Policy => "policy",
            ChampionBasis::CondorcetCandidate => "condorcet_candidate",
            ChampionBasis::Copeland => "copeland",
            ChampionBasis::None => "none",
        }
    }
}

/// The champion and the evidence behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChampionReport {
    /// The current best arm, if there is any evidence.
    pub ranker: Option<Arm>,
    pub basis: ChampionBasis,
    /// An arm whose empirical preference over every other contender exceeds 1/2.
    pub condorcet_candidate: Option<Arm>,
    /// Whether the candidate's lower confidence bounds against every other active arm exceed 1/2.
    pub confident: bool,
    /// Contenders beating the most other contenders (empirically).
    pub copeland_leaders: Vec<Arm>,
    /// How many other contenders the Copeland leaders beat.
    pub copeland_score: usize,
    /// The policy's own belief, where it has one.
    pub policy_belief: Option<Arm>,
    /// Arms still in contention (all active arms unless the policy eliminates).
    pub contenders: Vec<Arm>,
}

/// Builds the report from the win matrix, the policy's contenders and its belief, with
/// intervals at error probability `delta` over all pairs.
pub fn report(
    view: &View,
    contenders: Option<Vec<Arm>>,
    belief: Option<Arm>,
    delta: f64,
) -> ChampionReport {
    let active: Vec<Arm> = view.active_arms().collect();
    let contenders = contenders
        .map(|c| {
            c.into_iter()
                .filter(|a| view.is_active(*a))
                .collect::<Vec<_>>()
        })
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| active.clone());
    let k_active = active.len();
    let boundary = Boundary::condorcet(delta, k_active);
    let any_evidence = view.wins.total_wins() > 0 || view.wins.total_ties() > 0;

    let beats = |i: Arm, j: Arm| view.count(i, j) > 0.0 && view.score(i, j) > view.score(j, i);
    let condorcet_candidate = if contenders.len() == 1 {
        Some(contenders[0]).filter(|_| any_evidence)
    } else {
        contenders
            .iter()
            .copied()
            .find(|&c| contenders.iter().all(|&j| j == c || beats(c, j)))
    };
    let confident = condorcet_candidate.is_some_and(|c| {
        k_active > 1
            && active
                .iter()
                .all(|&j| j == c || estimate_with(view, c, j, &boundary).lower > 0.5)
    });

    // Copeland scores among contenders; ties between leaders are broken by the sum of empirical
    // preferences (then by index) only to name a single ranker; all leaders are reported.
    let scores: Vec<usize> = contenders
        .iter()
        .map(|&i| {
            contenders
                .iter()
                .filter(|&&j| j != i && beats(i, j))
                .count()
        })
        .collect();
    let copeland_score = scores.iter().copied().max().unwrap_or(0);
    let copeland_leaders: Vec<Arm> = contenders
        .iter()
        .zip(&scores)
        .filter(|(_, s)| **s == copeland_score)
        .map(|(a, _)| *a)
        .collect();
    let mean_pref = |i: Arm| -> f64 {
        contenders
            .iter()
            .filter(|&&j| j != i)
            .map(|&j| estimate_with(view, i, j, &boundary).p)
            .sum()
    };
    let best_leader =
        copeland_leaders
            .iter()
            .copied()
            .fold(None, |best: Option<Arm>, a| match best {
                Some(b) if mean_pref(b) >= mean_pref(a) => Some(b),
                _ => Some(a),
            });

    let belief = belief.filter(|a| view.is_active(*a));
    let (ranker, basis) = if !any_evidence {
        (
            belief,
            if belief.is_some() {
                ChampionBasis::Policy
            } else {
                ChampionBasis::None
            },
        )
    } else if confident {
        (condorcet_candidate, ChampionBasis::ConfidentCondorcet)
    } else if belief.is_some() {
        (belief, ChampionBasis::Policy)
    } else if condorcet_candidate.is_some() {
        (condorcet_candidate, ChampionBasis::CondorcetCandidate)
    } else {
        (best_leader, ChampionBasis::Copeland)
    };

    ChampionReport {
        ranker,
        basis,
        condorcet_candidate,
        confident,
        copeland_leaders,
        copeland_score,
        policy_belief: belief,
        contenders,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::WinMatrix;
    use crate::bandit::testing::view_of;

    #[test]
    fn no_evidence_names_nobody() {
        let w = WinMatrix::new(3);
        let active = [true; 3];
        let r = report(&view_of(&w, &active), None, None, DELTA);
        assert_eq!(r.ranker, None);
        assert_eq!(r.basis, ChampionBasis::None);
    }

    #[test]
    fn clear_condorcet_winner_is_confident() {
        let mut w = WinMatrix::new(3);
        for (a, b) in [(0, 1), (0, 2), (1, 2)] {
            w.add_wins(a, b, 900);
            w.add_wins(b, a, 100);
        }
        let active = [true; 3];
        let r = report(&view_of(&w, &active), None, None, DELTA);
        assert_eq!(r.ranker, Some(0));
        assert_eq!(r.basis, ChampionBasis::ConfidentCondorcet);
        assert!(r.confident);
        assert_eq!(r.copeland_leaders, vec![0]);
    }

    #[test]
    fn two_copeland_winners_without_condorcet_winner() {
        // 0 beats 1, 1 beats 2... a 4-arm tournament where 0 and 1 each beat two others.
        let mut w = WinMatrix::new(4);
        for (a, b) in [(0, 2), (0, 3), (1, 0), (1, 3), (2, 1), (3, 2)] {
            w.add_wins(a, b, 60);
            w.add_wins(b, a, 40);
        }
        let active = [true; 4];
        let r = report(&view_of(&w, &active), None, None, DELTA);
        assert_eq!(r.condorcet_candidate, None);
        assert_eq!(r.copeland_leaders, vec![0, 1]);
        assert_eq!(r.copeland_score, 2);
        assert_eq!(r.basis, ChampionBasis::Copeland);
        assert!(matches!(r.ranker, Some(0 | 1)));
    }

    #[test]
    fn contenders_restrict_the_champion() {
        // Arm 2 has beaten only weak arm 3; the policy keeps only 0 and 1 in contention.
        let mut w = WinMatrix::new(4);
        w.add_wins(0, 1, 30);
        w.add_wins(1, 0, 10);
        w.add_wins(2, 3, 50);
        let active = [true; 4];
        let r = report(&view_of(&w, &active), Some(vec![0, 1]), None, DELTA);
        assert_eq!(r.condorcet_candidate, Some(0));
        assert_eq!(r.ranker, Some(0));
        assert_eq!(r.contenders, vec![0, 1]);
    }

    #[test]
    fn interval_shrinks_with_evidence_and_stays_in_unit_range() {
        let mut w = WinMatrix::new(2);
        w.add_wins(0, 1, 6);
        w.add_wins(1, 0, 4);
        let active = [true; 2];
        let few = estimate(&view_of(&w, &active), 0, 1, 2);
        w.add_wins(0, 1, 594);
        w.add_wins(1, 0, 396);
        let many = estimate(&view_of(&w, &active), 0, 1, 2);
        assert!((many.p - 0.6).abs() < 1e-12);
        assert!(many.upper - many.lower < few.upper - few.lower);
        assert!(few.lower >= 0.0 && few.upper <= 1.0);
    }
}
