//! `POST /v1/experiments/{id}/duels`: the next pair to compare, from memory.

use serde_json::json;

use super::auth::IngestAccess;
use super::error::ApiError;
use super::json::Path;

pub async fn create(
    IngestAccess(engine): IngestAccess,
    Path(id): Path<i64>,
) -> Result<impl axum::response::IntoResponse, ApiError> {
    let duel = engine.issue_duel(id).await?;
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
    })))
}
