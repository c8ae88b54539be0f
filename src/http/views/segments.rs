//! `"segments"` of the experiment view: per segment label, its counts, its win matrix (for an
//! experiment small enough to show one), its champion and its decision, as the engine computed
//! them from the segment's own counts (`engine::segment_verdicts`).

use serde_json::{Value, json};

use crate::bandit::Arm;
use crate::engine::{Snapshot, segment_verdicts};

/// Largest experiment (active rankers) whose segments' win matrices are listed; beyond it each
/// segment gives its counts, champion and decision only.
pub const MAX_SEGMENT_MATRIX_RANKERS: usize = 50;

pub fn segments(s: &Snapshot) -> Value {
    let k = s.names.len();
    let active: Vec<Arm> = (0..k).filter(|&a| s.state.active[a]).collect();
    let name = |a: Arm| s.names[a].clone();
    let list: Vec<Value> = segment_verdicts(s)
        .into_iter()
        .map(|v| {
            let matrix = (active.len() <= MAX_SEGMENT_MATRIX_RANKERS).then(|| {
                active
                    .iter()
                    .map(|&i| active.iter().map(|&j| v.wins.wins(i, j)).collect::<Vec<_>>())
                    .collect::<Vec<_>>()
            });
            let decision = &v.decision;
            json!({
                "label": v.label,
                "outcomes": v.outcomes,
                "ties": v.ties,
                "wins": matrix,
                "champion": v.report.ranker.map(name),
                "champion_confident": v.report.confident,
                "decision": {
                    "decided": decision.decided,
                    "kind": decision.kind,
                    "champion": decision.champion.map(name),
                    "winners": decision.winners.iter().map(|&a| name(a)).collect::<Vec<_>>(),
                    "possible_best": decision.possible_best.iter().map(|c| name(c.arm)).collect::<Vec<_>>(),
                },
            })
        })
        .collect();
    json!({
        "max_segments": s.max_segments,
        "rankers": active.iter().map(|&a| name(a)).collect::<Vec<_>>(),
        "segments": list,
    })
}
