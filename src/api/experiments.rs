//! The bodies of `POST /v1/experiments` and `PATCH /v1/experiments/{id}`, and an experiment's
//! status as the API names it (stored as that name too).

use serde::{Deserialize, Serialize};

use super::json_object::{non_null_object, non_null_objects, nullable_object};
use super::non_null::non_null;
use super::settings::{
    BrowserClicks, DecisionSettingsInput, InterleavingSpec, MetricInput, SegmentSettings, StopRule,
    UnitSettings, Webhook,
};
use crate::bandit::{PolicySpec, TieRule};

/// `POST /v1/experiments`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateExperiment {
    pub name: String,
    /// The project's name: omitted, the key's project (the `default` project for a global key).
    #[serde(default, deserialize_with = "non_null")]
    pub project: Option<String>,
    pub rankers: Vec<String>,
    /// The bandit policy; when omitted, `auto` (its current version), or `self_sparring` above
    /// two rankers per query ([`PolicySpec::recorded`]).
    #[serde(default, deserialize_with = "non_null_object")]
    pub policy: Option<PolicySpec>,
    #[serde(default, deserialize_with = "non_null")]
    pub attribution_window_secs: Option<i64>,
    #[serde(default, deserialize_with = "non_null")]
    pub seed: Option<u64>,
    #[serde(default, deserialize_with = "non_null")]
    pub tie_rule: Option<TieRule>,
    /// How duels of this experiment are interleaved (Team-Draft by default; Team-Draft
    /// Multileave when queries compare more than two rankers).
    #[serde(default, deserialize_with = "non_null_object")]
    pub interleaving: Option<InterleavingSpec>,
    /// How many rankers each query compares: 2 (a duel, the default) up to
    /// the engine's `MAX_RANKERS_PER_QUERY` (a multileaved list; needs a policy and a method that
    /// take it).
    #[serde(default, deserialize_with = "non_null")]
    pub rankers_per_query: Option<usize>,
    /// The origins whose pages may post clicks with no API key (off when omitted).
    #[serde(default, deserialize_with = "non_null_object")]
    pub browser_clicks: Option<BrowserClicks>,
    /// How the decision is made; omitted settings take their defaults.
    #[serde(default, deserialize_with = "non_null_object")]
    pub decision: Option<DecisionSettingsInput>,
    /// Conclude once decided (off when omitted).
    #[serde(default, deserialize_with = "non_null_object")]
    pub stop_rule: Option<StopRule>,
    /// Where decision events are posted (none when omitted).
    #[serde(default, deserialize_with = "non_null_object")]
    pub webhook: Option<Webhook>,
    /// What duels are measured by (`click` only when omitted).
    #[serde(default, deserialize_with = "non_null_objects")]
    pub metrics: Option<Vec<MetricInput>>,
    /// The metric the policy learns from (`click` when omitted).
    #[serde(default, deserialize_with = "non_null")]
    pub primary_metric: Option<String>,
    /// How duel requests naming a unit are treated (the defaults when omitted).
    #[serde(default, deserialize_with = "non_null_object")]
    pub units: Option<UnitSettings>,
    /// How many segment labels the experiment accepts (the default when omitted).
    #[serde(default, deserialize_with = "non_null_object")]
    pub segments: Option<SegmentSettings>,
}

/// `PATCH /v1/experiments/{id}`: any of the settings that may change after creation.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatchExperiment {
    #[serde(default, deserialize_with = "non_null")]
    pub status: Option<Status>,
    /// Absent: unchanged; `null`: browser clicks off; an object: the new origins.
    #[serde(default, deserialize_with = "nullable_object")]
    pub browser_clicks: Option<Option<BrowserClicks>>,
    /// The decision settings to change; the others keep their values.
    #[serde(default, deserialize_with = "non_null_object")]
    pub decision: Option<DecisionSettingsInput>,
    /// Absent: unchanged; `null`: off; an object: the new rule.
    #[serde(default, deserialize_with = "nullable_object")]
    pub stop_rule: Option<Option<StopRule>>,
    /// Absent: unchanged; `null`: no webhook; an object: the new URL and secret.
    #[serde(default, deserialize_with = "nullable_object")]
    pub webhook: Option<Option<Webhook>>,
}

impl PatchExperiment {
    pub fn is_empty(&self) -> bool {
        self.status.is_none()
            && self.browser_clicks.is_none()
            && self.decision.is_none()
            && self.stop_rule.is_none()
            && self.webhook.is_none()
    }
}

/// The lifecycle of an experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Running,
    Paused,
    Concluded,
}
