//! The decision part of an experiment's view, with ranker names: decided or not, the champion
//! (or the Copeland set), the rankers that may still be best (closest to a decision first) and,
//! for each, the evidence still missing against its rivals. Lists are cut to what a reader can use (the full lists of a
//! 136-ranker experiment early on would be some 18,000 entries); the totals say how much was cut.

use serde_json::{Value, json};

use crate::bandit::{Arm, Contender, MissingEvidence};
use crate::engine::Snapshot;

/// Most rankers of the possible-best set listed (the rest are counted).
pub const MAX_CONTENDERS_SHOWN: usize = 32;
/// Most rivals listed per contender (the rest are counted).
pub const MAX_MISSING_SHOWN: usize = 16;

/// `"decision"` of the experiment view.
pub fn decision(s: &Snapshot) -> Value {
    let d = s.decision();
    let name = |a: Arm| s.names[a].as_str();
    json!({
        "decided": d.decided,
        "kind": d.kind,
        "champion": d.champion.map(name),
        "winners": d.winners.iter().map(|&a| name(a)).collect::<Vec<_>>(),
        "possible_best": closest_first(s, &d.possible_best)
            .into_iter()
            .take(MAX_CONTENDERS_SHOWN)
            .map(|c| contender(s, c))
            .collect::<Vec<_>>(),
        "possible_best_total": d.possible_best.len(),
        "outcomes_needed": d.outcomes_needed,
    })
}

/// The possible-best rankers closest to a decision first: fewest rivals still missing, then the
/// highest share of comparisons won (then by index), so that a cut list keeps the leaders.
fn closest_first<'a>(s: &Snapshot, contenders: &'a [Contender]) -> Vec<&'a Contender> {
    let view = s.state.view();
    let share = |a: Arm| {
        let (won, of) = view
            .active_arms()
            .filter(|&j| j != a)
            .fold((0.0, 0.0), |(w, n), j| {
                (w + view.score(a, j), n + view.count(a, j))
            });
        if of > 0.0 { won / of } else { 0.0 }
    };
    let mut keyed: Vec<(usize, f64, &Contender)> = contenders
        .iter()
        .map(|c| (c.missing.len(), share(c.arm), c))
        .collect();
    keyed.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(b.1.total_cmp(&a.1))
            .then(a.2.arm.cmp(&b.2.arm))
    });
    keyed.into_iter().map(|(_, _, c)| c).collect()
}

fn contender(s: &Snapshot, c: &Contender) -> Value {
    json!({
        "ranker": s.names[c.arm],
        "missing": c
            .missing
            .iter()
            .take(MAX_MISSING_SHOWN)
            .map(|m| missing(s, m))
            .collect::<Vec<_>>(),
        "missing_total": c.missing.len(),
        "never_compared": c.missing.iter().filter(|m| m.comparisons <= 0.0).count(),
    })
}

fn missing(s: &Snapshot, m: &MissingEvidence) -> Value {
    json!({
        "rival": s.names[m.rival],
        "comparisons": m.comparisons,
        "preference": m.p,
        "lower": m.lower,
        "upper": m.upper,
        "outcomes_needed": m.needed,
    })
}

/// `"decision_settings"` of the experiment view.
pub fn settings(s: &Snapshot) -> Value {
    let d = &s.decision_settings;
    json!({
        "delta": d.delta,
        "epsilon": d.epsilon,
        "confirmation": d.confirmation,
        "max_confirmation_share": d.max_confirmation_share,
    })
}
