//! Each metric's champion report and decision, and whether the metrics agree on the champion.
//! The primary metric's are the experiment's own (its policy's champion report and decision);
//! every other metric's come from its own win matrix through the same pure functions
//! (`bandit::champion_report`, `bandit::decide`), with the experiment's decision settings.

use crate::bandit::{ChampionReport, Decision, View, champion_report, decide};

use super::snapshot::Snapshot;

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
