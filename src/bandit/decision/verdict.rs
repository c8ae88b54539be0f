//! The decision: which ranker (or Copeland set) the evidence names with probability at least
//! 1 - delta, and, until then, which rankers may still be best and what evidence each lacks.
//!
//! Computed from the win matrix and the active arms only, so it is the same whatever the policy.
//! Every bound is a confidence sequence of [`super::confidence`]: the Condorcet statements use
//! 0.9 delta split over the active arms, the Copeland ones 0.1 delta split over all pairs (why
//! that suffices: the module documentation of `confidence`). With probability at least 1 - delta
//! no decision below is ever wrong, however often anyone looks.
//!
//! - **Condorcet** (the default, epsilon = 0): decided when some arm's lower bound against every
//!   other active arm exceeds 1/2 - epsilon: it beats every other arm, or none beats it by more
//!   than epsilon.
//! - **Possible best**: arms no rival beats confidently (no lower bound against the arm above
//!   1/2 + epsilon). The true Condorcet winner, if there is one, is among them.
//! - **Copeland**: once every arm is confidently beaten by some rival, there is no Condorcet
//!   winner; the decision is then the set of arms with the highest Copeland score (rivals beaten),
//!   decided once every pair that can change who has the highest score is resolved: one side's
//!   lower bound above 1/2, or (epsilon > 0) the whole interval within 1/2 +- epsilon, which
//!   counts for neither side.

use serde::{Deserialize, Serialize};

use super::confidence::Boundary;
use super::settings::DecisionSettings;
use crate::bandit::{Arm, View};

/// Which kind of winner a decision names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    /// One arm beats every other (or none beats it by more than epsilon).
    Condorcet,
    /// The evidence rules out a Condorcet winner: the arms with the highest Copeland score.
    Copeland,
}

/// What the evidence says about which ranker is best.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Whether the decision is made, with probability at least 1 - delta of being right.
    pub decided: bool,
    pub kind: DecisionKind,
    /// The decided Condorcet winner; `None` until decided, and for a Copeland decision.
    pub champion: Option<Arm>,
    /// The decided set: the champion, or the Copeland set; empty until decided.
    pub winners: Vec<Arm>,
    /// Arms not confidently beaten by any other (they may still be best), fewest missing
    /// rivals first. Empty once every arm is beaten (then the decision is Copeland).
    pub possible_best: Vec<Contender>,
    /// Rough number of further comparisons to decide: 0 once decided; otherwise the fewest, over
    /// the possible-best arms whose estimates all point their way, of the comparisons their
    /// missing pairs need at the current estimates; `None` when no estimate says so.
    pub outcomes_needed: Option<u64>,
}

/// An arm that may still be best and the rivals it is not yet separated from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contender {
    pub arm: Arm,
    /// Rivals against which its lower bound does not yet exceed 1/2 - epsilon, what the
    /// decision needs most first: compared rivals by the further comparisons they need (most
    /// first), then rivals never compared.
    pub missing: Vec<MissingEvidence>,
}

/// The evidence missing between a contender and one rival.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissingEvidence {
    pub rival: Arm,
    /// Comparisons so far (ties count when they count as half a win).
    pub comparisons: f64,
    /// Estimated probability that the contender beats the rival (1/2 with no comparisons).
    pub p: f64,
    /// Its confidence sequence at the decision's level, clipped to [0, 1].
    pub lower: f64,
    pub upper: f64,
    /// Rough number of further comparisons until the bound separates, if the estimate held:
    /// in the contender's favour when the estimate exceeds 1/2 - epsilon, else in the rival's
    /// (it would then beat the contender). `None` when the estimate sits on the threshold or
    /// there is no comparison yet.
    pub needed: Option<u64>,
}

/// Bounds of one ordered pair.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    p: f64,
    lower: f64,
    upper: f64,
    n: f64,
}

fn bounds(view: &View, boundary: &Boundary, i: Arm, j: Arm) -> Bounds {
    let n = view.count(i, j);
    if n <= 0.0 {
        return Bounds {
            p: 0.5,
            lower: f64::NEG_INFINITY,
            upper: f64::INFINITY,
            n,
        };
    }
    let p = view.score(i, j) / n;
    let r = boundary.radius(n);
    Bounds {
        p,
        lower: p - r,
        upper: p + r,
        n,
    }
}

/// Further comparisons until a pair at estimate `p` after `n` comparisons separates from the
/// threshold `at` (1/2 - epsilon for the contender, 1/2 + epsilon for the rival).
fn needed(boundary: &Boundary, b: Bounds, epsilon: f64) -> Option<u64> {
    if b.n <= 0.0 {
        return None;
    }
    let favour = b.p - (0.5 - epsilon);
    let against = (1.0 - b.p) - (0.5 + epsilon);
    let gap = if favour > 0.0 { favour } else { against };
    let total = boundary.comparisons_for(gap)?;
    Some((total - b.n).max(0.0).ceil() as u64)
}

/// How much the decision still needs a pair's evidence, larger first: compared pairs by the
/// further comparisons they need at the current estimate (the pair that sets the time to decide
/// first; one whose estimate sits on the threshold needs without end), then pairs never compared,
/// about which the counts say nothing yet. A stable sort keeps equals in index order.
fn need_rank(m: &MissingEvidence) -> u64 {
    if m.comparisons <= 0.0 {
        return 0;
    }
    m.needed.map_or(u64::MAX, |n| n.saturating_add(1))
}

/// Bounds of every ordered pair of `active` arms, by position: `table[x * ka + y]`.
fn bounds_table(view: &View, active: &[Arm], boundary: &Boundary) -> Vec<Bounds> {
    let ka = active.len();
    let mut table = vec![
        Bounds {
            p: 0.5,
            lower: 0.5,
            upper: 0.5,
            n: 0.0
        };
        ka * ka
    ];
    for (x, &i) in active.iter().enumerate() {
        for (y, &j) in active.iter().enumerate().skip(x + 1) {
            let b = bounds(view, boundary, i, j);
            table[x * ka + y] = b;
            table[y * ka + x] = Bounds {
                p: 1.0 - b.p,
                lower: 1.0 - b.upper,
                upper: 1.0 - b.lower,
                n: b.n,
            };
        }
    }
    table
}

/// The decision over the active arms of `view` under `settings`.
pub fn decide(view: &View, settings: &DecisionSettings) -> Decision {
    let active: Vec<Arm> = view.active_arms().collect();
    let ka = active.len();
    let eps = settings.epsilon;
    let boundary = Boundary::condorcet(settings.delta, ka);
    let table = bounds_table(view, &active, &boundary);
    let at = |x: usize, y: usize| table[x * ka + y];
    let holds = |x: usize, y: usize| x == y || at(x, y).lower > 0.5 - eps;
    let beaten = |x: usize| (0..ka).any(|y| y != x && at(y, x).lower > 0.5 + eps);

    // Condorcet: an arm that holds against every other (unique when epsilon is 0; with epsilon,
    // the one with the highest mean estimate).
    let mean = |x: usize| (0..ka).filter(|&y| y != x).map(|y| at(x, y).p).sum::<f64>();
    let champion = if ka < 2 {
        None
    } else {
        (0..ka)
            .filter(|&x| (0..ka).all(|y| holds(x, y)))
            .max_by(|&a, &b| mean(a).total_cmp(&mean(b)).then(b.cmp(&a)))
    };

    let mut possible_best: Vec<Contender> = (0..ka)
        .filter(|&x| !beaten(x))
        .map(|x| {
            let mut missing: Vec<(u64, MissingEvidence)> = (0..ka)
                .filter(|&y| !holds(x, y))
                .map(|y| {
                    let b = at(x, y);
                    let evidence = MissingEvidence {
                        rival: active[y],
                        comparisons: b.n,
                        p: b.p,
                        lower: b.lower.clamp(0.0, 1.0),
                        upper: b.upper.clamp(0.0, 1.0),
                        needed: needed(&boundary, b, eps),
                    };
                    (need_rank(&evidence), evidence)
                })
                .collect();
            // What the rule needs most first: see `need_rank`; then by index.
            missing.sort_by_key(|m| std::cmp::Reverse(m.0));
            Contender {
                arm: active[x],
                missing: missing.into_iter().map(|(_, m)| m).collect(),
            }
        })
        .collect();
    possible_best.sort_by_key(|c| c.missing.len());

    if let Some(c) = champion {
        return Decision {
            decided: true,
            kind: DecisionKind::Condorcet,
            champion: Some(active[c]),
            winners: vec![active[c]],
            possible_best,
            outcomes_needed: Some(0),
        };
    }
    // No Condorcet winner: every arm beaten by some rival, on the all-pairs bounds.
    let wide = bounds_table(view, &active, &Boundary::all_pairs(settings.delta, ka));
    let wide_at = |x: usize, y: usize| wide[x * ka + y];
    let all_beaten =
        ka >= 2 && (0..ka).all(|x| (0..ka).any(|y| y != x && wide_at(y, x).lower > 0.5 + eps));
    if all_beaten {
        return copeland(&active, &wide_at, eps);
    }
    let outcomes_needed = possible_best
        .iter()
        .filter_map(|c| {
            c.missing
                .iter()
                .map(|m| (m.p > 0.5 - eps).then_some(m.needed).flatten())
                .sum::<Option<u64>>()
        })
        .min();
    Decision {
        decided: false,
        kind: DecisionKind::Condorcet,
        champion: None,
        winners: Vec::new(),
        possible_best,
        outcomes_needed,
    }
}

/// The Copeland decision once every arm is confidently beaten (all-pairs bounds, so that every
/// statement below holds at once with probability 1 - 0.1 delta): each arm's score lies between
/// its resolved wins and those plus its unresolved pairs; the set of highest scores is decided
/// when every arm that could reach the top has no unresolved pair.
fn copeland(active: &[Arm], at: &dyn Fn(usize, usize) -> Bounds, eps: f64) -> Decision {
    let ka = active.len();
    let won = |x: usize, y: usize| at(x, y).lower > 0.5;
    let indifferent = |x: usize, y: usize| {
        let b = at(x, y);
        eps > 0.0 && b.lower >= 0.5 - eps && b.upper <= 0.5 + eps
    };
    let resolved = |x: usize, y: usize| won(x, y) || won(y, x) || indifferent(x, y);
    let lo: Vec<usize> = (0..ka)
        .map(|x| (0..ka).filter(|&y| y != x && won(x, y)).count())
        .collect();
    let open: Vec<usize> = (0..ka)
        .map(|x| (0..ka).filter(|&y| y != x && !resolved(x, y)).count())
        .collect();
    let top = lo.iter().copied().max().unwrap_or(0);
    let reach: Vec<usize> = (0..ka).filter(|&x| lo[x] + open[x] >= top).collect();
    let decided = reach.iter().all(|&x| open[x] == 0);
    Decision {
        decided,
        kind: DecisionKind::Copeland,
        champion: None,
        winners: if decided {
            reach.iter().map(|&x| active[x]).collect()
        } else {
            Vec::new()
        },
        possible_best: Vec::new(),
        outcomes_needed: decided.then_some(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::WinMatrix;
    use crate::bandit::testing::view_of;

    fn matrix(k: usize, cells: &[(Arm, Arm, u32, u32)]) -> WinMatrix {
        let mut w = WinMatrix::new(k);
        for &(a, b, wa, wb) in cells {
            w.add_wins(a, b, wa);
            w.add_wins(b, a, wb);
        }
        w
    }

    #[test]
    fn no_evidence_decides_nothing_and_everyone_may_be_best() {
        let w = WinMatrix::new(3);
        let d = decide(&view_of(&w, &[true; 3]), &DecisionSettings::default());
        assert!(!d.decided);
        assert_eq!(d.kind, DecisionKind::Condorcet);
        assert_eq!(d.possible_best.len(), 3);
        assert!(d.possible_best.iter().all(|c| c.missing.len() == 2));
        assert_eq!(d.possible_best[0].missing[0].needed, None);
        assert_eq!(d.outcomes_needed, None);
    }

    #[test]
    fn a_clear_condorcet_winner_is_decided() {
        let w = matrix(3, &[(0, 1, 800, 200), (0, 2, 800, 200), (1, 2, 500, 500)]);
        let d = decide(&view_of(&w, &[true; 3]), &DecisionSettings::default());
        assert!(d.decided);
        assert_eq!(d.champion, Some(0));
        assert_eq!(d.winners, vec![0]);
        assert_eq!(d.outcomes_needed, Some(0));
        // 1 and 2 are both beaten by 0.
        assert_eq!(d.possible_best.len(), 1);
        assert!(d.possible_best[0].missing.is_empty());
    }

    #[test]
    fn an_unseparated_rival_is_missing_with_a_rough_count() {
        // 0 leads 1 at 0.55 over 1,000 comparisons: not yet separated; 2 is clearly beaten.
        let w = matrix(3, &[(0, 1, 550, 450), (0, 2, 900, 100), (1, 2, 900, 100)]);
        let d = decide(&view_of(&w, &[true; 3]), &DecisionSettings::default());
        assert!(!d.decided);
        let arms: Vec<Arm> = d.possible_best.iter().map(|c| c.arm).collect();
        assert_eq!(arms, vec![0, 1]);
        let m = &d.possible_best[0].missing;
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].rival, 1);
        assert!((m[0].p - 0.55).abs() < 1e-12 && m[0].lower < 0.5 && m[0].upper > 0.55);
        let needed = m[0].needed.unwrap();
        // At 0.55 the radius must fall to 0.05: the boundary says how many comparisons that is.
        let boundary = Boundary::condorcet(0.05, 3);
        let total = boundary.comparisons_for(0.05).unwrap();
        assert_eq!(needed, (total - 1000.0) as u64);
        assert_eq!(d.outcomes_needed, Some(needed));
        // Once there, the decision is made.
        let n = (total * 1.1) as u32;
        let w = matrix(
            3,
            &[
                (0, 1, n * 55 / 100, n * 45 / 100),
                (0, 2, 900, 100),
                (1, 2, 900, 100),
            ],
        );
        assert_eq!(
            decide(&view_of(&w, &[true; 3]), &DecisionSettings::default()).champion,
            Some(0)
        );
    }

    #[test]
    fn the_evidence_needed_most_comes_first_and_rivals_never_compared_last() {
        // Arm 3 leads 1 at 0.52 (far from separated) and 2 at 0.6 (nearly), never met 0.
        let w = matrix(4, &[(3, 1, 520, 480), (3, 2, 120, 80), (1, 2, 500, 500)]);
        let d = decide(&view_of(&w, &[true; 4]), &DecisionSettings::default());
        let c = d.possible_best.iter().find(|c| c.arm == 3).unwrap();
        let rivals: Vec<Arm> = c.missing.iter().map(|m| m.rival).collect();
        assert_eq!(rivals, vec![1, 2, 0]);
        assert!(c.missing[0].needed.unwrap() > c.missing[1].needed.unwrap());
        assert_eq!(c.missing[2].comparisons, 0.0);
    }

    #[test]
    fn epsilon_accepts_a_near_tie() {
        // 0 and 1 are indistinguishable at 20,000 comparisons; both beat 2 clearly.
        let w = matrix(
            3,
            &[(0, 1, 10_000, 10_000), (0, 2, 900, 100), (1, 2, 850, 150)],
        );
        let view_active = [true; 3];
        let view = view_of(&w, &view_active);
        assert!(!decide(&view, &DecisionSettings::default()).decided);
        let loose = DecisionSettings {
            epsilon: 0.05,
            ..Default::default()
        };
        let d = decide(&view, &loose);
        assert!(d.decided);
        // Both hold within epsilon; 0 beats 2 by more.
        assert_eq!(d.champion, Some(0));
    }

    #[test]
    fn a_cycle_is_a_copeland_decision_once_every_pair_is_resolved() {
        // 0 > 1 > 2 > 0, and all three beat 3: every arm is beaten, Copeland set {0, 1, 2}.
        let strong = (800, 200);
        let cells = [
            (0, 1, strong.0, strong.1),
            (1, 2, strong.0, strong.1),
            (2, 0, strong.0, strong.1),
            (0, 3, strong.0, strong.1),
            (1, 3, strong.0, strong.1),
            (2, 3, strong.0, strong.1),
        ];
        let w = matrix(4, &cells);
        let d = decide(&view_of(&w, &[true; 4]), &DecisionSettings::default());
        assert!(d.decided);
        assert_eq!(d.kind, DecisionKind::Copeland);
        assert_eq!(d.champion, None);
        assert_eq!(d.winners, vec![0, 1, 2]);
        assert!(d.possible_best.is_empty());
        // With a pair of arm 0 unresolved, 0 might still reach the top score: not decided.
        let mut open = cells;
        open[3] = (0, 3, 52, 48);
        let w = matrix(4, &open);
        let d = decide(&view_of(&w, &[true; 4]), &DecisionSettings::default());
        assert_eq!(d.kind, DecisionKind::Copeland);
        assert!(!d.decided && d.winners.is_empty());
    }

    #[test]
    fn retired_arms_do_not_count() {
        // Arm 1 would beat 0, but it is retired.
        let w = matrix(3, &[(0, 2, 900, 100), (1, 0, 900, 100), (1, 2, 900, 100)]);
        let d = decide(&view_of(&w, &[true, false, true]), &Default::default());
        assert_eq!(d.champion, Some(0));
    }
}
