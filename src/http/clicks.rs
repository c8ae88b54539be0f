//! `POST /v1/clicks`: the clicks on an interleaving, credited and recorded as the duel's outcome
//! (answered once durable, exactly once per duel).

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

use crate::engine::interleavings::ClicksInput;

use super::AppState;
use super::auth::IngestKey;
use super::error::ApiError;
use super::json::Json;

pub async fn create(
    _: IngestKey,
    State(app): State<Arc<AppState>>,
    Json(input): Json<ClicksInput>,
) -> Result<Response, ApiError> {
    let record = app.engine.record_clicks(input).await?;
    Ok(axum::Json(record).into_response())
}
