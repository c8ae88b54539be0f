//! `POST /v1/experiments/{id}/duels`: the next pair to compare, from memory. The body is
//! optional: `{"unit", "query", "segment"}` (see docs/units-and-segments.md).

use serde::Serialize;

use crate::api::DuelRequest;

use crate::http::stack::auth::IngestAccess;
use crate::http::stack::error::ApiError;
use crate::http::stack::json::{OptionalJson, Path};
use crate::http::views::answer;
use crate::http::views::timestamp::Timestamp;

/// The answer, serialised straight from the duel (on the hot path of every query, so no JSON
/// tree is built in between).
#[derive(Serialize)]
struct DuelAnswer {
    duel_token: Option<String>,
    duel_id: Option<String>,
    experiment_id: i64,
    rankers: Vec<String>,
    expires_at: Option<Timestamp>,
    concluded: bool,
}

/// Bytes of a usual answer: two rankers and a token of a pairwise duel.
const ANSWER_BYTES: usize = 320;

pub async fn create(
    IngestAccess(engine): IngestAccess,
    Path(id): Path<i64>,
    OptionalJson(request): OptionalJson<DuelRequest>,
) -> Result<axum::response::Response, ApiError> {
    let duel = engine.issue_duel(id, &request).await?;
    Ok(answer::json(
        &DuelAnswer {
            duel_token: duel.token,
            duel_id: duel.duel_id,
            experiment_id: id,
            rankers: duel.rankers,
            expires_at: duel.expires_at_ms.map(Timestamp),
            concluded: duel.concluded,
        },
        ANSWER_BYTES,
    ))
}
