//! The bodies of `POST /v1/outcomes` and its batch form, and what is answered for each outcome.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

use super::non_null::non_null;

/// One outcome as posted: exactly one of `winner`, `credits` and `ordering`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutcomeInput {
    pub duel_token: String,
    /// A ranker name of that duel, or `"tie"` (two-ranker duels).
    #[serde(default, deserialize_with = "non_null")]
    pub winner: Option<String>,
    /// Every ranker of the duel with its credit (e.g. clicks); a higher credit wins each pair,
    /// equal credits tie.
    #[serde(default, deserialize_with = "non_null")]
    pub credits: Option<HashMap<String, f64>>,
    /// Every ranker of the duel once, best first; a list of names in place of one name is a
    /// group of tied rankers.
    #[serde(default, deserialize_with = "non_null")]
    pub ordering: Option<Vec<Rank>>,
}

/// One place of an ordering: a ranker, or rankers tied with one another.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Rank {
    One(String),
    Tied(Vec<String>),
}

/// What was recorded for one outcome.
#[derive(Debug, Clone, Serialize)]
pub struct OutcomeRecord {
    pub duel_id: String,
    pub experiment_id: i64,
    /// A two-ranker duel's winner, or `"tie"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub winner: Option<String>,
    /// A multi-ranker query's result for every pair of its rankers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcomes: Option<Vec<PairOutcome>>,
    /// `recorded` the first time, `duplicate` for a retry of the same outcome.
    pub status: &'static str,
}

/// One pair's result as the API answers it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairOutcome {
    pub rankers: [String; 2],
    /// One of the two names, or `"tie"`.
    pub winner: String,
}
