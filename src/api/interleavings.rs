//! The bodies of `POST /v1/experiments/{id}/interleavings` and `POST /v1/clicks`, and their
//! answers' shapes.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

use super::outcomes::OutcomeRecord;

use super::non_null::non_null;

/// `POST /v1/interleavings`: a duel and each of its rankers' result lists, best first.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterleaveInput {
    pub duel_token: String,
    /// Ranker name -> document ids; exactly the duel's rankers (two, or as many as a
    /// multi-ranker query compares).
    pub lists: HashMap<String, Vec<String>>,
    /// A later page of the same interleaving: the 0-based position of its first document
    /// (`offset`) or its 1-based number (`page`, pages of the method's `max_length`).
    #[serde(default, deserialize_with = "non_null")]
    pub offset: Option<usize>,
    #[serde(default, deserialize_with = "non_null")]
    pub page: Option<usize>,
}

/// One shown document and, for methods with teams, the ranker it was drafted for.
#[derive(Debug, Clone, Serialize)]
pub struct ShownDocument {
    pub id: String,
    pub ranker: Option<String>,
}

/// `POST /v1/clicks`: the clicked documents, by id or by 0-based position in the shown list
/// (exactly one of the two; an empty list means the user clicked nothing).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClicksInput {
    pub interleaving_token: String,
    #[serde(default, deserialize_with = "non_null")]
    pub clicks: Option<Vec<String>>,
    #[serde(default, deserialize_with = "non_null")]
    pub click_positions: Option<Vec<usize>>,
}

/// The recorded outcome of the clicks, with each ranker's credit under the method (and, for a
/// multi-ranker query, the result of every pair in `outcome`).
#[derive(Debug, Clone, Serialize)]
pub struct ClickRecord {
    #[serde(flatten)]
    pub outcome: OutcomeRecord,
    pub method: &'static str,
    pub credit: BTreeMap<String, f64>,
}
