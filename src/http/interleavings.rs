//! `POST /v1/interleavings`: the list to show for a duel, merged from its rankers' lists.

use serde_json::json;

use crate::engine::interleavings::InterleaveInput;

use super::auth::IngestAccess;
use super::error::ApiError;
use super::json::Json;

pub async fn create(
    IngestAccess(engine): IngestAccess,
    Json(input): Json<InterleaveInput>,
) -> Result<impl axum::response::IntoResponse, ApiError> {
    let issued = engine.interleave_duel(input).await?;
    Ok(axum::Json(json!({
        "interleaving_token": issued.token,
        "duel_id": issued.duel_id,
        "experiment_id": issued.experiment_id,
        "method": issued.method,
        "documents": issued.documents,
        "offset": issued.offset,
        "expires_at": chrono::DateTime::from_timestamp_millis(issued.expires_at_ms),
    })))
}
