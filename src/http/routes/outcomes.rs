//! `POST /v1/outcomes` and `POST /v1/outcomes/batch`: answers come after the outcomes are durable.

use axum::response::IntoResponse;
use serde::Deserialize;

use crate::api::objects;

use crate::api::OutcomeInput;
use crate::engine::MAX_BATCH;

use crate::http::stack::auth::IngestAccess;
use crate::http::stack::error::ApiError;
use crate::http::stack::json::Json;
use crate::http::views::batch_answer;

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
