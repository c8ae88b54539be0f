//! `POST /v1/conversions` and `POST /v1/conversions/batch`: later events on shown documents,
//! answered once durable.

use axum::response::IntoResponse;
use serde::Deserialize;
use serde_json::json;

use crate::engine::ErrorCode;
use crate::engine::conversions::{ConversionInput, MAX_CONVERSION_BATCH};

use super::auth::IngestAccess;
use super::error::{ApiError, error_body};
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
    conversions: Vec<ConversionInput>,
}

pub async fn batch(
    IngestAccess(engine): IngestAccess,
    Json(batch): Json<Batch>,
) -> Result<impl IntoResponse, ApiError> {
    if batch.conversions.is_empty() || batch.conversions.len() > MAX_CONVERSION_BATCH {
        return Err(ApiError::new(
            ErrorCode::InvalidBatch,
            format!(
                "a batch holds 1 to {MAX_CONVERSION_BATCH} conversions, got {}",
                batch.conversions.len()
            ),
        ));
    }
    crate::engine::conversions::check_batch(&batch.conversions)?;
    let results = engine.record_conversions(batch.conversions).await?;
    let (mut recorded, mut duplicates, mut rejected) = (0, 0, 0);
    let items: Vec<_> = results
        .into_iter()
        .map(|r| match r {
            Ok(rec) => {
                if rec.status == "recorded" {
                    recorded += 1;
                } else {
                    duplicates += 1;
                }
                serde_json::to_value(rec).expect("record serialises")
            }
            Err(e) => {
                rejected += 1;
                let e = ApiError::from(e);
                let mut body = error_body(e.code, &e.message);
                body["status"] = json!(e.status.as_u16());
                body
            }
        })
        .collect();
    Ok(axum::Json(json!({
        "recorded": recorded,
        "duplicates": duplicates,
        "rejected": rejected,
        "results": items,
    })))
}
