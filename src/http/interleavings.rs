//! `POST /v1/interleavings`: the list to show for a duel, merged from its rankers' lists.

use serde::Serialize;

use crate::engine::interleavings::{InterleaveInput, ShownDocument};

use super::auth::IngestAccess;
use super::error::ApiError;
use super::json::Json;

/// The answer, serialised straight from the interleaving (on the hot path of every query, so no
/// JSON tree is built in between).
#[derive(Serialize)]
struct InterleavingAnswer {
    interleaving_token: String,
    duel_id: String,
    experiment_id: i64,
    method: &'static str,
    documents: Vec<ShownDocument>,
    offset: usize,
    expires_at: Option<chrono::DateTime<chrono::Utc>>,
}

pub async fn create(
    IngestAccess(engine): IngestAccess,
    Json(input): Json<InterleaveInput>,
) -> Result<impl axum::response::IntoResponse, ApiError> {
    let issued = engine.interleave_duel(input).await?;
    Ok(axum::Json(InterleavingAnswer {
        interleaving_token: issued.token,
        duel_id: issued.duel_id,
        experiment_id: issued.experiment_id,
        method: issued.method,
        documents: issued.documents,
        offset: issued.offset,
        expires_at: chrono::DateTime::from_timestamp_millis(issued.expires_at_ms),
    }))
}
