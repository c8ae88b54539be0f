//! `POST /v1/clicks`: the clicks on an interleaving, credited and recorded as the duel's outcome
//! (answered once durable, exactly once per duel).

use crate::engine::interleavings::ClicksInput;

use super::auth::IngestAccess;
use super::error::ApiError;
use super::json::Json;

pub async fn create(
    IngestAccess(engine): IngestAccess,
    Json(input): Json<ClicksInput>,
) -> Result<impl axum::response::IntoResponse, ApiError> {
    Ok(axum::Json(engine.record_clicks(input).await?))
}
