//! An experiment's settings as a request gives them. Those that are valid as sent are also stored
//! as sent (`browser_clicks`, `interleaving`, `segments`, `stop_rule`, `units`): their JSON is the
//! stored form, which is why they derive `Serialize`. The engine's `settings` module checks them
//! and builds what it computes with (`engine::settings`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::non_null::non_null;

/// `"browser_clicks": {"origins": [...]}` of an experiment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrowserClicks {
    pub origins: Vec<String>,
}

/// `"decision": {...}`: any of the decision settings; the others are taken from the defaults (at
/// creation) or from the current settings (PATCH).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionSettingsInput {
    #[serde(default, deserialize_with = "non_null")]
    pub delta: Option<f64>,
    #[serde(default, deserialize_with = "non_null")]
    pub epsilon: Option<f64>,
    #[serde(default, deserialize_with = "non_null")]
    pub confirmation: Option<bool>,
    #[serde(default, deserialize_with = "non_null")]
    pub max_confirmation_share: Option<f64>,
}

/// The interleaving settings as posted (and stored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterleavingSpec {
    pub method: String,
    #[serde(default)]
    pub options: Map<String, Value>,
    #[serde(default)]
    pub max_length: Option<usize>,
}

/// One metric as a request gives it (strings, so that a bad value gets a clear message).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricInput {
    pub name: String,
    #[serde(default)]
    pub credit: Option<String>,
    #[serde(default)]
    pub window_seconds: Option<i64>,
    #[serde(default)]
    pub missing: Option<String>,
}

/// `"segments": {"max_segments": N}`: how many distinct segment labels the experiment accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SegmentSettings {
    #[serde(default = "default_max")]
    pub max_segments: i32,
}

fn default_max() -> i32 {
    DEFAULT_MAX_SEGMENTS
}

/// `"stop_rule": {"min_outcomes": N}`: conclude once decided and at least N outcomes applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StopRule {
    /// Outcomes (ties not counted) that must have been applied before the experiment concludes,
    /// however early it is decided: a guard for teams that want a minimum exposure.
    #[serde(default)]
    pub min_outcomes: u64,
}

/// What one piece of evidence is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregation {
    /// Every query's outcome counts once (units only make the duel sticky).
    #[default]
    Query,
    /// Each unit's net preference per pair counts once, however many queries it sent.
    Unit,
}

/// `"units": {"window_seconds": N, "aggregation": ...}`: how duel requests naming a unit are
/// treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitSettings {
    #[serde(default = "default_window")]
    pub window_seconds: i64,
    #[serde(default)]
    pub aggregation: Aggregation,
}

fn default_window() -> i64 {
    DEFAULT_WINDOW_SECONDS
}

/// The webhook as a request sets it.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Webhook {
    pub url: String,
    pub secret: String,
}

/// Thirty minutes: a search session.
pub const DEFAULT_WINDOW_SECONDS: i64 = 1800;

/// Segment labels an experiment accepts when it does not say.
pub const DEFAULT_MAX_SEGMENTS: i32 = 20;
