//! The cached view of one experiment: its settings, ranker names and bandit state at one version.
//! Snapshots are immutable; a change builds a new one and swaps it in.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

use crate::bandit::{AnyPolicy, Arm, BanditState, PolicySpec, TieRule, WinMatrix};
use crate::bandit::{ChampionReport, Decision, DecisionSettings, View, champion_report, decide};
use crate::store::state::StoredExperiment;

use rand::SeedableRng;

use super::derived::{Derived, Estimates};
use super::segment_counts::SegmentCounts;
use crate::api::{Aggregation, Status, StopRule, UnitSettings};
use crate::bandit::BanditRng;
use crate::engine::EngineError;
use crate::engine::settings::{self, InterleavingConfig, Metrics};

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Paused => "paused",
            Status::Concluded => "concluded",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "running" => Some(Status::Running),
            "paused" => Some(Status::Paused),
            "concluded" => Some(Status::Concluded),
            _ => None,
        }
    }
}

pub fn tie_rule_str(rule: TieRule) -> &'static str {
    match rule {
        TieRule::Ignore => "ignore",
        TieRule::HalfWin => "half_win",
    }
}

/// The policy part of the stored state, and the decision kept once made. The win matrix and the
/// active flags are stored in their own tables, and the decision settings with the experiment, so
/// they are not repeated here.
#[derive(Serialize, Deserialize)]
pub struct PersistedPolicy {
    pub format_version: u32,
    pub policy: AnyPolicy,
    /// The Condorcet winner decided, kept from the first time the counts decided it
    /// ([`crate::bandit::DecisionLayer`]): the counts alone may no longer say so, so every
    /// snapshot read from the database needs it. Absent while undecided (and in states written
    /// before it was stored). Written with every state write; a change of the decision settings
    /// writes the state too, so it always speaks of the stored settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_champion: Option<Arm>,
}

impl PersistedPolicy {
    pub fn to_json(state: &BanditState) -> serde_json::Value {
        serde_json::to_value(PersistedPolicyRef {
            format_version: state.format_version,
            policy: &state.policy,
            decided_champion: state.decided_champion(),
        })
        .expect("policy state serialises")
    }
}

#[derive(Serialize)]
struct PersistedPolicyRef<'a> {
    format_version: u32,
    policy: &'a AnyPolicy,
    #[serde(skip_serializing_if = "Option::is_none")]
    decided_champion: Option<Arm>,
}

#[derive(Debug, Clone)]
pub struct Snapshot {
    pub id: i64,
    /// The project it belongs to (see `runtime::reach`).
    pub project_id: i64,
    pub name: String,
    pub status: Status,
    pub policy: PolicySpec,
    pub interleaving: InterleavingConfig,
    /// Rankers compared per query: 2 for a duel, more for a multileaved list.
    pub rankers_per_query: usize,
    pub attribution_window_secs: i64,
    pub seed: i64,
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// The origins whose pages may post this experiment's clicks with no API key; `None` when
    /// browser clicks are off (`settings::browser_clicks`).
    pub browser_click_origins: Option<Arc<[String]>>,
    /// How the decision is made (also in the bandit state, which selects with them).
    pub decision_settings: DecisionSettings,
    /// When set, the experiment concludes itself once decided (`apply::decision_events`).
    pub stop_rule: Option<StopRule>,
    /// Where its events are posted (the secret stays in the database).
    pub webhook_url: Option<String>,
    /// The decision the experiment concluded with: once set, its decision
    /// ([`Snapshot::decision`]), whatever outcomes are applied after the conclusion.
    pub final_decision: Option<Arc<Decision>>,
    /// The winners the last `decided` or `champion_changed` event named; `None` until `decided`
    /// was announced (`apply::decision_events`).
    pub announced_winners: Option<Vec<Arm>>,
    /// What the experiment measures duels by, and which metric the policy learns from.
    pub metrics: Arc<Metrics>,
    /// How duel requests naming a unit are treated (`settings::units`).
    pub units: UnitSettings,
    /// The most distinct segment labels accepted (`settings::segments`).
    pub max_segments: i32,
    /// Each segment's label and counts at this version ([`SegmentCounts`]).
    pub segments: Arc<SegmentCounts>,
    /// The unit-level win matrix of an experiment that aggregates evidence by unit
    /// (`apply::unit_evidence`): what its champion and decision read. `None` otherwise.
    pub unit_wins: Option<Arc<WinMatrix>>,
    /// Shared between versions: the writer clones a snapshot for every group of outcomes, and
    /// the names only change when a ranker is added (which reloads the snapshot).
    pub names: Arc<[String]>,
    pub by_name: Arc<HashMap<String, Arm>>,
    pub state: BanditState,
    pub version: i64,
    pub outcomes_applied: i64,
    pub ties_applied: i64,
    /// When the write that made this version was made, to the microsecond Postgres keeps: see
    /// [`Snapshot::write_mark`].
    pub updated_at: chrono::DateTime<chrono::Utc>,
    /// The last acknowledged outcome this version has applied, in apply order: every outcome at
    /// or before it is in the state, none after it.
    pub applied_through: crate::store::apply::Cursor,
    /// The last conversion this version has applied, in apply order.
    pub conversions_through: crate::store::conversions::ConversionCursor,
    /// The win matrix of every metric but the primary one (whose matrix is the state's).
    pub metric_wins: Arc<std::collections::BTreeMap<String, WinMatrix>>,
    /// For a version the experiment's owner applied in memory and has not written yet
    /// (`engine::apply::checkpoint`): the stored version it was applied on, as
    /// [`Snapshot::stored_tag`] names it. `None` for a version as the database holds it.
    pub ahead_of: Option<(i64, i64)>,
    /// The champion report and estimates of this version, computed on first use.
    derived: Derived,
}

/// A version and its write mark, written `v{version}.{mark}` ([`Snapshot::version_tag`]).
pub struct VersionTag(i64, i64);

impl std::fmt::Display for VersionTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "v{}.{}", self.0, self.1)
    }
}

impl Snapshot {
    /// Names this version's write together with `version`. An application commits without
    /// waiting for its WAL flush, so a crash of Postgres can lose it, and the next application
    /// then writes the same version number again with other contents: the time of the write
    /// tells the two apart (tags, and the refresh that compares the cache with the database).
    pub fn write_mark(&self) -> i64 {
        self.updated_at.timestamp_micros()
    }

    /// This version as answers' tags name it: `v{version}.{write mark}`.
    pub fn version_tag(&self) -> VersionTag {
        VersionTag(self.version, self.write_mark())
    }

    /// The time to write as a new version's `updated_at`: now, to the microsecond, so the
    /// snapshot holds the value Postgres stores.
    pub fn write_time() -> chrono::DateTime<chrono::Utc> {
        use chrono::SubsecRound;
        chrono::Utc::now().trunc_subsecs(6)
    }

    pub fn from_stored(s: StoredExperiment) -> Result<Snapshot, EngineError> {
        let bad = |what: String| {
            EngineError::internal(anyhow::anyhow!("experiment {}: {what}", s.experiment.id))
        };
        let e = &s.experiment;
        let status =
            Status::parse(&e.status).ok_or_else(|| bad(format!("unknown status {}", e.status)))?;
        let policy: PolicySpec = serde_json::from_value(e.policy.clone())
            .map_err(|err| bad(format!("policy spec: {err}")))?;
        let interleaving = InterleavingConfig::from_json(&e.interleaving)
            .map_err(|err| bad(format!("interleaving: {err}")))?;
        let ties = match e.tie_rule.as_str() {
            "half_win" => TieRule::HalfWin,
            _ => TieRule::Ignore,
        };
        let persisted: PersistedPolicy = serde_json::from_value(s.policy_state.clone())
            .map_err(|err| bad(format!("policy state: {err}")))?;
        let k = s.rankers.len();
        let mut wins = WinMatrix::new(k);
        for &(w, l, n) in &s.wins {
            wins.add_wins(w as Arm, l as Arm, n as u32);
        }
        for &(a, b, n) in &s.ties {
            wins.add_ties(a as Arm, b as Arm, n as u32);
        }
        let mut state = BanditState {
            format_version: persisted.format_version,
            active: s.rankers.iter().map(|r| !r.retired).collect(),
            ties,
            wins,
            policy: persisted.policy,
            decision: Default::default(),
        };
        state.check_version().map_err(|err| bad(err.to_string()))?;
        // Every replica selects with the experiment's decision settings (the confirmation layer).
        let decision_settings = settings::decision_from_stored(e.decision.as_ref())
            .map_err(|err| bad(format!("decision settings: {err}")))?;
        state.set_decision_settings(decision_settings);
        if let Some(champion) = persisted.decided_champion {
            state.restore_decided_champion(champion);
        }
        let stop_rule: Option<StopRule> = e
            .stop_rule
            .clone()
            .map(serde_json::from_value)
            .transpose()
            .map_err(|err| bad(format!("stop rule: {err}")))?;
        let final_decision = e
            .final_decision
            .clone()
            .map(serde_json::from_value::<Decision>)
            .transpose()
            .map_err(|err| bad(format!("final decision: {err}")))?
            .map(Arc::new);
        let announced_winners = e
            .announced_winners
            .as_ref()
            .map(|w| w.iter().map(|&a| a as Arm).collect());
        let metrics_list = Metrics::from_stored(e.metrics.as_ref(), e.primary_metric.as_deref())
            .map_err(|err| bad(format!("metrics: {err}")))?;
        let units = UnitSettings::from_stored(e.units.as_ref())
            .map_err(|err| bad(format!("unit settings: {err}")))?;
        // Caches are not persisted: rebuild them once here rather than on every selection.
        state.warm();
        let names: Vec<String> = s.rankers.iter().map(|r| r.name.clone()).collect();
        let by_name: HashMap<String, Arm> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        Ok(Snapshot {
            id: e.id,
            project_id: e.project_id,
            name: e.name.clone(),
            status,
            policy,
            interleaving,
            rankers_per_query: e.rankers_per_query.max(2) as usize,
            attribution_window_secs: e.attribution_window_secs,
            seed: e.seed,
            created_at: e.created_at,
            browser_click_origins: e.browser_click_origins.clone().map(Into::into),
            decision_settings,
            stop_rule,
            webhook_url: e.webhook_url.clone(),
            final_decision,
            announced_winners,
            metrics: Arc::new(metrics_list.clone()),
            units,
            max_segments: e.max_segments,
            segments: Arc::new(SegmentCounts::from_rows(&s.segments)),
            unit_wins: (units.aggregation == Aggregation::Unit).then(|| {
                let mut m = WinMatrix::new(k);
                for &(w, l, n) in &s.unit_wins {
                    m.add_wins(w as Arm, l as Arm, n as u32);
                }
                Arc::new(m)
            }),
            names: names.into(),
            by_name: Arc::new(by_name),
            state,
            version: s.version,
            outcomes_applied: s.outcomes_applied,
            ties_applied: s.ties_applied,
            updated_at: s.updated_at,
            applied_through: s.applied_through,
            conversions_through: s.conversions_through,
            metric_wins: Arc::new(settings::metric_matrices(
                &metrics_list,
                k,
                &s.metric_counts,
            )),
            ahead_of: None,
            derived: Derived::default(),
        })
    }

    /// The stored version this snapshot is, or was applied on, and that version's write mark:
    /// what the database holds of it.
    pub fn stored_tag(&self) -> (i64, i64) {
        self.ahead_of
            .unwrap_or_else(|| (self.version, self.write_mark()))
    }

    /// The champion report of this version (computed once). An experiment that aggregates by
    /// unit reports from its unit-level evidence, where no policy's belief applies.
    pub fn champion(&self) -> &ChampionReport {
        match &self.unit_wins {
            Some(wins) => self.derived.champion_with(|| {
                let view = View::new(wins, &self.state.active, self.state.ties);
                champion_report(&view, None, None, self.decision_settings.delta)
            }),
            None => self.derived.champion(&self.state),
        }
    }

    /// The decision of this version (computed once): decided or not, and what is missing. For a
    /// concluded experiment, the decision it concluded with; an experiment that aggregates by unit
    /// decides from its unit-level evidence.
    pub fn decision(&self) -> &Decision {
        if let Some(d) = &self.final_decision {
            return d;
        }
        match &self.unit_wins {
            Some(wins) => self.derived.decision_with(|| {
                let view = View::new(wins, &self.state.active, self.state.ties);
                decide(&view, &self.decision_settings)
            }),
            None => self.derived.decision(&self.state),
        }
    }

    /// Forgets what was derived from this snapshot's evidence, after the evidence changed.
    pub fn forget_derived(&mut self) {
        self.derived = Derived::default();
    }

    /// A rendering of this version that a reader builds once and reuses (see
    /// [`Derived::rendering`]).
    pub fn rendering<T: std::any::Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Arc<T> {
        self.derived.rendering(make)
    }

    /// The estimated preference matrix of this version (computed once); `None` above
    /// [`super::derived::MAX_MATRIX_RANKERS`] active rankers.
    pub fn estimates(&self) -> Option<Arc<Estimates>> {
        self.derived.estimates(&self.state)
    }

    /// Whether browser clicks are on and list `origin`.
    pub fn lists_origin(&self, origin: &str) -> bool {
        self.browser_click_origins
            .as_deref()
            .is_some_and(|list| list.iter().any(|o| o == origin))
    }

    pub fn arm(&self, name: &str) -> Result<Arm, EngineError> {
        self.by_name
            .get(name)
            .copied()
            .ok_or_else(|| EngineError::UnknownRanker(name.to_string()))
    }
}

/// RNG for the policy's updates: derived from the experiment's seed and the version the
/// application starts from, so any replica applying the same outcomes to the same version makes
/// the same choices.
pub fn update_rng(seed: i64, version: i64) -> BanditRng {
    BanditRng::seed_from_u64((seed as u64) ^ (version as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::{Outcome, Pair};

    /// The stored policy state carries the kept decision, and one written before it was stored
    /// reads without it.
    #[test]
    fn the_persisted_policy_keeps_the_decided_champion() {
        let mut rng = BanditRng::seed_from_u64(1);
        let mut state =
            BanditState::new(&PolicySpec::new("rucb"), 2, TieRule::Ignore, &mut rng).unwrap();
        let undecided = PersistedPolicy::to_json(&state);
        assert!(undecided.get("decided_champion").is_none(), "{undecided}");
        for _ in 0..200 {
            state
                .record(Pair::new(1, 0), Outcome::FirstWins, &mut rng)
                .unwrap();
        }
        assert_eq!(state.decided_champion(), Some(1));
        let json = PersistedPolicy::to_json(&state);
        let read: PersistedPolicy = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(read.decided_champion, Some(1), "{json}");
        let old: PersistedPolicy = serde_json::from_value(undecided).unwrap();
        assert_eq!(old.decided_champion, None);
    }
}
