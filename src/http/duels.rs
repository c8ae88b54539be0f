//! `POST /v1/experiments/{id}/duels`: the next pair to compare, from memory.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::sync::Arc;

use super::AppState;
use super::auth::IngestKey;
use super::error::ApiError;
use super::json::Path;

pub async fn create(
    _: IngestKey,
    State(app): State<Arc<AppState>>,
    Path(id): Path<i64>,
) -> Result<Response, ApiError> {
    let duel = app.engine.issue_duel(id).await?;
    let expires_at = duel
        .expires_at_ms
        .and_then(chrono::DateTime::from_timestamp_millis);
    Ok(axum::Json(json!({
        "duel_token": duel.token,
        "duel_id": duel.duel_id,
        "experiment_id": id,
        "rankers": duel.rankers,
        "expires_at": expires_at,
        "concluded": duel.concluded,
    }))
    .into_response())
}
