//! `POST /v1/interleavings`: the list to show for a duel, merged from its rankers' lists.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::sync::Arc;

use crate::engine::interleavings::InterleaveInput;

use super::AppState;
use super::auth::IngestKey;
use super::error::ApiError;
use super::json::Json;

pub async fn create(
    _: IngestKey,
    State(app): State<Arc<AppState>>,
    Json(input): Json<InterleaveInput>,
) -> Result<Response, ApiError> {
    let issued = app.engine.interleave_duel(input).await?;
    Ok(axum::Json(json!({
        "interleaving_token": issued.token,
        "duel_id": issued.duel_id,
        "experiment_id": issued.experiment_id,
        "method": issued.method,
        "documents": issued.documents,
        "expires_at": chrono::DateTime::from_timestamp_millis(issued.expires_at_ms),
    }))
    .into_response())
}
