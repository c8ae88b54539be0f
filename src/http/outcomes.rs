//! `POST /v1/outcomes` and `POST /v1/outcomes/batch`: answers come after the outcomes are durable.

use axum::response::IntoResponse;
use serde::Deserialize;

use crate::engine::json_object::objects;

use crate::engine::outcomes::{MAX_BATCH, OutcomeInput};

use super::auth::IngestAccess;
use super::batch_answer;
use super::error::ApiError;
use super::json::Json;

pub async fn create(
    IngestAccess(engine): IngestAccess,
    Json(input): Json<OutcomeInput>,
) -> Result<impl IntoResponse, ApiError> {
    Ok(axum::Json(engine.record_outcome(input).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Batch {
    #[serde(deserialize_with = "objects")]
    outcomes: Vec<OutcomeInput>,
}

pub async fn batch(
    IngestAccess(engine): IngestAccess,
    Json(batch): Json<Batch>,
) -> Result<impl IntoResponse, ApiError> {
    batch_answer::check_size(batch.outcomes.len(), MAX_BATCH, "outcomes")?;
    let results = engine.record_outcomes(batch.outcomes).await?;
    Ok(axum::Json(batch_answer::answer(results)))
}
