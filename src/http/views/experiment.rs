//! JSON views of experiments for the API.

use serde::Serialize;
use serde_json::{Value, json};

use crate::bandit::{Arm, PolicySpec};
use crate::bandit::{CHAMPION_DELTA, PreferenceEstimate};
use crate::engine::HistoryPoint;
use crate::engine::Snapshot;
use crate::engine::tie_rule_str;

/// Largest experiment whose full matrices the matrix endpoint returns.
pub use crate::engine::MAX_MATRIX_RANKERS;

#[derive(Serialize)]
pub struct ExperimentSummary<'a> {
    pub id: i64,
    pub name: &'a str,
    pub status: &'static str,
    pub policy: &'a PolicySpec,
    pub rankers: usize,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub version: i64,
    pub outcomes_applied: i64,
    pub ties_recorded: i64,
    /// The champion's name, if any, and whether it is confident (computed once per version):
    /// the decided champion once there is one (for a concluded experiment, the one it concluded
    /// with, which it serves), else the champion report's.
    pub champion: Option<&'a str>,
    pub champion_confident: bool,
    /// Whether the decision is decided (see the detail view's `decision`).
    pub decided: bool,
}

pub fn summary(s: &Snapshot) -> ExperimentSummary<'_> {
    let report = s.champion();
    let decision = s.decision();
    // A decided champion is what the experiment stands by (and serves once concluded); the
    // counts' report may point elsewhere after a lucky stretch, which the detail view shows.
    let (champion, confident) = match decision.champion {
        Some(c) if decision.decided => (Some(c), true),
        _ => (report.ranker, report.confident),
    };
    ExperimentSummary {
        id: s.id,
        name: &s.name,
        status: s.status.as_str(),
        policy: &s.policy,
        rankers: s.names.len(),
        created_at: s.created_at,
        version: s.version,
        outcomes_applied: s.outcomes_applied,
        ties_recorded: s.ties_applied,
        champion: champion.map(|a| s.names[a].as_str()),
        champion_confident: confident,
        decided: decision.decided,
    }
}

fn names(s: &Snapshot, arms: &[Arm]) -> Vec<String> {
    arms.iter().map(|&a| s.names[a].clone()).collect()
}

/// The champion with the evidence behind it, with ranker names.
pub fn champion(s: &Snapshot) -> Value {
    let r = s.champion();
    let name = |a: Option<Arm>| a.map(|a| s.names[a].clone());
    json!({
        "ranker": name(r.ranker),
        "basis": r.basis.as_str(),
        "confident": r.confident,
        "condorcet_candidate": name(r.condorcet_candidate),
        "copeland_leaders": names(s, &r.copeland_leaders),
        "copeland_score": r.copeland_score,
        "policy_belief": name(r.policy_belief),
        "contenders": names(s, &r.contenders),
    })
}

/// Per-ranker counts: wins, losses, ties and duels with an outcome.
fn rankers(s: &Snapshot) -> Vec<Value> {
    let k = s.names.len();
    let w = &s.state.wins;
    let mut wins = vec![0u64; k];
    let mut losses = vec![0u64; k];
    let mut ties = vec![0u64; k];
    for (i, j, n) in w.win_cells() {
        wins[i] += n as u64;
        losses[j] += n as u64;
    }
    for (a, b, n) in w.tie_cells() {
        ties[a] += n as u64;
        if a != b {
            ties[b] += n as u64;
        }
    }
    (0..k)
        .map(|i| {
            json!({
                "name": s.names[i],
                "index": i,
                "active": s.state.active[i],
                "wins": wins[i],
                "losses": losses[i],
                "ties": ties[i],
                "comparisons": wins[i] + losses[i] + ties[i],
            })
        })
        .collect()
}

/// Everything a dashboard needs about one experiment.
pub fn detail(s: &Snapshot, duels_issued: i64) -> Value {
    let (metrics, primary_metric, metrics_agree) = super::metrics::metrics(s);
    json!({
        "id": s.id,
        "name": s.name,
        "status": s.status.as_str(),
        "policy": s.policy,
        "tie_rule": tie_rule_str(s.state.ties),
        "interleaving": s.interleaving.to_spec(),
        "rankers_per_query": s.rankers_per_query,
        "attribution_window_secs": s.attribution_window_secs,
        "browser_clicks": s.browser_click_origins.as_deref().map(|o| json!({ "origins": o })),
        "seed": s.seed,
        "created_at": s.created_at,
        "version": s.version,
        "updated_at": s.updated_at,
        "duels_issued": duels_issued,
        "outcomes_applied": s.outcomes_applied,
        "ties_recorded": s.ties_applied,
        "rankers": rankers(s),
        "champion": champion(s),
        "decision": super::decision::decision(s),
        "decision_settings": super::decision::settings(s),
        "stop_rule": s.stop_rule,
        // The URL only: the secret is write-only.
        "webhook": s.webhook_url.as_deref().map(|url| json!({ "url": url })),
        "matrix_url": format!("/v1/experiments/{}/matrix", s.id),
        "metrics": metrics,
        "primary_metric": primary_metric,
        "metrics_agree": metrics_agree,
        "units": super::units::units(s),
        "segments": super::segments::segments(s),
    })
}

/// The win matrix and the estimated preference matrix with confidence intervals, over active
/// rankers. `None` when the experiment is too large to return whole.
pub fn matrix(s: &Snapshot) -> Option<Value> {
    let est = s.estimates()?;
    let active = &est.active;
    let wins: Vec<Vec<u32>> = active
        .iter()
        .map(|&i| active.iter().map(|&j| s.state.wins.wins(i, j)).collect())
        .collect();
    let ties: Vec<Vec<u32>> = active
        .iter()
        .map(|&i| {
            active
                .iter()
                .map(|&j| if i == j { 0 } else { s.state.wins.ties(i, j) })
                .collect()
        })
        .collect();
    let k = active.len();
    let estimate = |f: fn(&PreferenceEstimate) -> f64| -> Vec<Vec<f64>> {
        (0..k)
            .map(|r| (0..k).map(|c| f(est.get(r, c))).collect())
            .collect()
    };
    Some(json!({
        "rankers": names(s, active),
        "wins": wins,
        "ties": ties,
        "preference": estimate(|e| e.p),
        "lower": estimate(|e| e.lower),
        "upper": estimate(|e| e.upper),
        "confidence": 1.0 - CHAMPION_DELTA,
        "version": s.version,
    }))
}

/// History points with ranker names; each point's `wins` and `losses` follow `rankers` (zero for
/// a ranker added after the point).
pub fn history(s: &Snapshot, points: &[HistoryPoint], total: i64) -> Value {
    let k = s.names.len();
    let padded =
        |v: &[i64]| -> Vec<i64> { (0..k).map(|i| v.get(i).copied().unwrap_or(0)).collect() };
    let points: Vec<Value> = points
        .iter()
        .map(|p| {
            json!({
                "at": p.at,
                "version": p.version,
                "outcomes_applied": p.outcomes_applied,
                "ties_recorded": p.ties_applied,
                "duels_issued": p.duels_issued,
                "champion": p.champion.and_then(|a| s.names.get(a as usize)),
                "basis": p.basis,
                "confident": p.confident,
                "wins": padded(&p.wins),
                "losses": padded(&p.losses),
            })
        })
        .collect();
    json!({
        "experiment_id": s.id,
        "rankers": &*s.names,
        "total_points": total,
        "points": points,
    })
}
