//! `"segments"` of the experiment view: per segment label, its counts, its win matrix (for an
//! experiment small enough to show one), its champion and its decision, each computed from the
//! segment's own counts with the experiment's decision settings (the policy learns from all
//! traffic; a segment's numbers only read it).

use serde_json::{Value, json};

use crate::bandit::{Arm, View, WinMatrix, champion_report, decide};
use crate::engine::Snapshot;

/// Largest experiment (active rankers) whose segments' win matrices are listed; beyond it each
/// segment gives its counts, champion and decision only.
pub const MAX_SEGMENT_MATRIX_RANKERS: usize = 50;

pub fn segments(s: &Snapshot) -> Value {
    let counts = &s.segments;
    let k = s.names.len();
    let active: Vec<Arm> = (0..k).filter(|&a| s.state.active[a]).collect();
    let name = |a: Arm| s.names[a].clone();
    let list: Vec<Value> = counts
        .segments()
        .into_iter()
        .map(|seg| {
            let mut wins = WinMatrix::new(k);
            let (mut decisive, mut ties) = (0i64, 0i64);
            for (&(g, w, l), &n) in counts.wins.range((seg, i32::MIN, i32::MIN)..) {
                if g != seg {
                    break;
                }
                wins.add_wins(w as Arm, l as Arm, n as u32);
                decisive += n;
            }
            for (&(g, a, b), &n) in counts.ties.range((seg, i32::MIN, i32::MIN)..) {
                if g != seg {
                    break;
                }
                wins.add_ties(a as Arm, b as Arm, n as u32);
                ties += n;
            }
            let view = View::new(&wins, &s.state.active, s.state.ties);
            let settings = s.decision_settings;
            let report = champion_report(&view, None, None, settings.delta);
            let decision = decide(&view, &settings);
            let matrix = (active.len() <= MAX_SEGMENT_MATRIX_RANKERS).then(|| {
                active
                    .iter()
                    .map(|&i| active.iter().map(|&j| wins.wins(i, j)).collect::<Vec<_>>())
                    .collect::<Vec<_>>()
            });
            json!({
                "label": counts.label(seg),
                "outcomes": decisive,
                "ties": ties,
                "wins": matrix,
                "champion": report.ranker.map(name),
                "champion_confident": report.confident,
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
