//! `POST /v1/interleavings`: the list to show for a duel, merged from its rankers' lists.

use serde::Serialize;

use crate::api::{InterleaveInput, ShownDocument};

use crate::http::stack::auth::IngestAccess;
use crate::http::stack::error::ApiError;
use crate::http::stack::json::Json;
use crate::http::views::answer;
use crate::http::views::timestamp::Timestamp;

/// The answer, serialised straight from the interleaving (on the hot path of every query, so no
/// JSON tree is built in between).
#[derive(Serialize)]
struct InterleavingAnswer {
    interleaving_token: String,
    duel_id: String,
    experiment_id: i64,
    method: &'static str,
    documents: Vec<ShownDocument>,
    offset: usize,
    expires_at: Timestamp,
}

/// Bytes of a usual answer: two 10-document lists interleaved, and the token.
const ANSWER_BYTES: usize = 1536;

pub async fn create(
    IngestAccess(engine): IngestAccess,
    Json(input): Json<InterleaveInput>,
) -> Result<axum::response::Response, ApiError> {
    let issued = engine.interleave_duel(input).await?;
    let answer = InterleavingAnswer {
        interleaving_token: issued.token,
        duel_id: issued.duel_id,
        experiment_id: issued.experiment_id,
        method: issued.method,
        documents: issued.documents,
        offset: issued.offset,
        expires_at: Timestamp(issued.expires_at_ms),
    };
    Ok(answer::json(&answer, ANSWER_BYTES))
}
