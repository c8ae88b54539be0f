//! `POST /v1/outcomes` and `POST /v1/outcomes/batch`: answers come after the outcomes are durable.

use axum::response::IntoResponse;
use serde::Deserialize;
use serde_json::json;

use crate::engine::ErrorCode;
use crate::engine::outcomes::{MAX_BATCH, OutcomeInput};

use super::auth::IngestAccess;
use super::error::{ApiError, error_body};
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
    outcomes: Vec<OutcomeInput>,
}

pub async fn batch(
    IngestAccess(engine): IngestAccess,
    Json(batch): Json<Batch>,
) -> Result<impl IntoResponse, ApiError> {
    if batch.outcomes.is_empty() || batch.outcomes.len() > MAX_BATCH {
        return Err(ApiError::new(
            ErrorCode::InvalidBatch,
            format!(
                "a batch holds 1 to {MAX_BATCH} outcomes, got {}",
                batch.outcomes.len()
            ),
        ));
    }
    let results = engine.record_outcomes(batch.outcomes).await?;
    let mut recorded = 0;
    let mut duplicates = 0;
    let mut rejected = 0;
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
