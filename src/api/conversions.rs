//! The body of `POST /v1/conversions` (one event or a batch), and what is answered for each.

use serde::{Deserialize, Serialize};

use super::non_null::non_null;

/// One conversion as posted.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConversionInput {
    /// The interleaving token of the shown list the event comes from.
    pub interleaving_token: String,
    /// A conversion metric of the experiment (not `click`).
    pub metric: String,
    /// The document the event is on; it must have been shown.
    pub document: String,
    /// The event's value (e.g. an order's amount), for metrics credited by value (1 when
    /// omitted).
    #[serde(default, deserialize_with = "non_null")]
    pub value: Option<f64>,
    /// The client's id of the event: a retry with the same id is a duplicate.
    pub event_id: String,
}

/// What was recorded for one conversion.
#[derive(Debug, Clone, Serialize)]
pub struct ConversionRecord {
    pub duel_id: String,
    pub experiment_id: i64,
    pub metric: String,
    pub event_id: String,
    /// `recorded` the first time, `duplicate` for a retry.
    pub status: &'static str,
}
