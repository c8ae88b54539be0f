//! The metrics part of an experiment's view: per metric its counts (and win matrix over the
//! active rankers, up to the matrix endpoint's size), champion and decision, side by side, and
//! whether the metrics agree on the champion. The primary metric's figures are the experiment's
//! own (its policy's champion report and decision); every other metric's come from its own
//! win matrix through the same pure functions (`bandit::champion_report`, `bandit::decide`),
//! with the experiment's decision settings.

use serde_json::{Value, json};

use crate::bandit::{Arm, ChampionReport, Decision, View, champion_report, decide};
use crate::engine::Snapshot;
use crate::engine::derived::MAX_MATRIX_RANKERS;

/// One metric's champion report and decision.
pub struct MetricVerdict {
    pub name: String,
    pub report: ChampionReport,
    pub decision: Decision,
}

/// Every metric's champion report and decision, in the experiment's order (`click` first).
pub fn verdicts(s: &Snapshot) -> Vec<MetricVerdict> {
    let settings = s.decision_settings;
    s.metrics
        .list
        .iter()
        .map(|m| match s.metric_wins.get(&m.name) {
            Some(w) => {
                let view = View::new(w, &s.state.active, s.state.ties);
                MetricVerdict {
                    name: m.name.clone(),
                    report: champion_report(&view, None, None, settings.delta),
                    decision: decide(&view, &settings),
                }
            }
            None => MetricVerdict {
                name: m.name.clone(),
                report: s.champion().clone(),
                decision: s.decision().clone(),
            },
        })
        .collect()
}

/// Whether every metric with a champion names the same one (metrics with no evidence yet do
/// not count against agreement).
pub fn agree(verdicts: &[MetricVerdict]) -> bool {
    let mut champions = verdicts.iter().filter_map(|v| v.report.ranker);
    match champions.next() {
        None => true,
        Some(first) => champions.all(|c| c == first),
    }
}

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
