//! The body of `POST /v1/experiments/{id}/duels` (optional: a unit, a query, a segment).

use serde::Deserialize;

use super::non_null::non_null;

/// `POST /v1/experiments/{id}/duels`'s optional body: who asks, for what, in which segment.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DuelRequest {
    /// An opaque user or session id: the same unit and query get the same duel within the
    /// experiment's window (`engine::requests::unit_duels`). Only its keyed hash is kept.
    #[serde(default, deserialize_with = "non_null")]
    pub unit: Option<String>,
    /// The query's key (needs `unit`).
    #[serde(default, deserialize_with = "non_null")]
    pub query: Option<String>,
    /// A segment label (`engine::requests::segments`).
    #[serde(default, deserialize_with = "non_null")]
    pub segment: Option<String>,
}
