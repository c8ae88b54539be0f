//! `POST /v1/conversions` and `POST /v1/conversions/batch`: later events on shown documents,
//! answered once durable.

use axum::response::IntoResponse;
use serde::Deserialize;

use crate::api::objects;

use crate::api::ConversionInput;
use crate::engine::MAX_CONVERSION_BATCH;

use crate::http::stack::auth::IngestAccess;
use crate::http::stack::error::ApiError;
use crate::http::stack::json::Json;
use crate::http::views::batch_answer;

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
    crate::engine::check_batch(&batch.conversions)?;
    let results = engine.record_conversions(batch.conversions).await?;
    Ok(axum::Json(batch_answer::answer(results)))
}
