//! `POST /v1/experiments/{id}/duels`: the next pair to compare, from memory. The body is
//! optional: `{"unit", "query", "segment"}` (see docs/units-and-segments.md).

use serde_json::json;

use crate::engine::duels::DuelRequest;

use super::auth::IngestAccess;
use super::error::ApiError;
use super::json::{OptionalJson, Path};

pub async fn create(
    IngestAccess(engine): IngestAccess,
    Path(id): Path<i64>,
    OptionalJson(request): OptionalJson<DuelRequest>,
) -> Result<impl axum::response::IntoResponse, ApiError> {
    let duel = engine.issue_duel(id, &request).await?;
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
