//! `POST /v1/conversions` and `POST /v1/conversions/batch`: later events on shown documents,
//! answered once durable.

use axum::response::IntoResponse;
use serde::Deserialize;

use crate::engine::json_object::objects;

use crate::engine::conversions::{ConversionInput, MAX_CONVERSION_BATCH};

use super::auth::IngestAccess;
use super::batch_answer;
use super::error::ApiError;
use super::json::Json;

pub async fn create(
    IngestAccess(engine): IngestAccess,
    Json(input): Json<ConversionInput>,
) -> Result<impl IntoResponse, ApiError> {
    Ok(axum::Json(engine.record_conversion(input).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Batch {
    #[serde(deserialize_with = "objects")]
    conversions: Vec<ConversionInput>,
}

pub async fn batch(
    IngestAccess(engine): IngestAccess,
    Json(batch): Json<Batch>,
) -> Result<impl IntoResponse, ApiError> {
    batch_answer::check_size(batch.conversions.len(), MAX_CONVERSION_BATCH, "conversions")?;
    crate::engine::conversions::check_batch(&batch.conversions)?;
    let results = engine.record_conversions(batch.conversions).await?;
    Ok(axum::Json(batch_answer::answer(results)))
}
