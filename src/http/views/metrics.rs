//! The metrics part of an experiment's view: per metric its counts (and win matrix over the
//! active rankers, up to the matrix endpoint's size), champion and decision, side by side, and
//! whether the metrics agree on the champion (`engine::model::metric_verdicts`).

use serde_json::{Value, json};

use crate::bandit::Arm;
use crate::engine::MAX_MATRIX_RANKERS;
use crate::engine::Snapshot;
use crate::engine::{agree, verdicts};

/// `"metrics"`, `"primary_metric"` and `"metrics_agree"` of the experiment view.
pub fn metrics(s: &Snapshot) -> (Value, Value, Value) {
    let verdicts = verdicts(s);
    let name = |a: Arm| s.names[a].clone();
    let active: Vec<Arm> = s.state.view().active_arms().collect();
    let list: Vec<Value> = s
        .metrics
        .list
        .iter()
        .zip(&verdicts)
        .map(|(m, v)| {
            let w = s.metric_wins.get(&m.name).unwrap_or(&s.state.wins);
            let matrix = (active.len() <= MAX_MATRIX_RANKERS).then(|| {
                json!({
                    "rankers": active.iter().map(|&a| name(a)).collect::<Vec<_>>(),
                    "wins": active.iter().map(|&i| active.iter().map(|&j| w.wins(i, j)).collect::<Vec<_>>()).collect::<Vec<_>>(),
                    "ties": active.iter().map(|&i| active.iter().map(|&j| if i == j { 0 } else { w.ties(i, j) }).collect::<Vec<_>>()).collect::<Vec<_>>(),
                })
            });
            let mut out = json!({
                "name": m.name,
                "credit": m.credit.as_str(),
                "primary": m.name == s.metrics.primary().name,
                "outcomes": w.total_wins(),
                "ties": w.total_ties(),
                "champion": v.report.ranker.map(name),
                "champion_confident": v.report.confident,
                "decision": {
                    "decided": v.decision.decided,
                    "kind": v.decision.kind,
                    "champion": v.decision.champion.map(name),
                    "winners": v.decision.winners.iter().map(|&a| name(a)).collect::<Vec<_>>(),
                    "outcomes_needed": v.decision.outcomes_needed,
                },
                "matrix": matrix,
            });
            if let Some(window) = m.window_seconds {
                out["window_seconds"] = window.into();
                out["missing"] = m.missing.as_str().into();
            }
            out
        })
        .collect();
    (
        Value::Array(list),
        json!(s.metrics.primary().name),
        json!(agree(&verdicts)),
    )
}
