//! `POST /v1/experiments/{id}/duels`: the next pair to compare, from memory. The body is
//! optional: `{"unit", "query", "segment"}` (see docs/units-and-segments.md).

use serde::Serialize;

use crate::engine::duels::DuelRequest;

use super::auth::IngestAccess;
use super::error::ApiError;
use super::json::{OptionalJson, Path};

/// The answer, serialised straight from the duel (on the hot path of every query, so no JSON
/// tree is built in between).
#[derive(Serialize)]
struct DuelAnswer {
    duel_token: Option<String>,
    duel_id: Option<String>,
    experiment_id: i64,
    rankers: Vec<String>,
    expires_at: Option<chrono::DateTime<chrono::Utc>>,
    concluded: bool,
}

pub async fn create(
    IngestAccess(engine): IngestAccess,
    Path(id): Path<i64>,
    OptionalJson(request): OptionalJson<DuelRequest>,
) -> Result<impl axum::response::IntoResponse, ApiError> {
    let duel = engine.issue_duel(id, &request).await?;
    let expires_at = duel
        .expires_at_ms
        .and_then(chrono::DateTime::from_timestamp_millis);
    Ok(axum::Json(DuelAnswer {
        duel_token: duel.token,
        duel_id: duel.duel_id,
        experiment_id: id,
        rankers: duel.rankers,
        expires_at,
        concluded: duel.concluded,
    }))
}
