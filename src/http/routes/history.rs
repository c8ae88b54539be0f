//! `GET /v1/experiments/{id}/history`: the experiment's history points, thinned evenly.

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::api::ErrorCode;
use crate::engine::MAX_POINTS;

use crate::http::stack::auth::ReadAccess;
use crate::http::stack::error::ApiError;
use crate::http::stack::etag::ETag;
use crate::http::stack::json::{Path, Query};
use crate::http::views::experiment;

/// Points returned when `max_points` is not given.
pub const DEFAULT_POINTS: i64 = 500;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryQuery {
    /// Parsed by `parse_since`, so that a time without a timezone gets an answer that says so
    /// (serde's own message for it is "premature end of input").
    #[serde(default)]
    since: Option<String>,
    #[serde(default)]
    max_points: Option<i64>,
}

pub async fn get(
    ReadAccess(engine): ReadAccess,
    Path(id): Path<i64>,
    Query(q): Query<HistoryQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let max_points = q.max_points.unwrap_or(DEFAULT_POINTS);
    if !(1..=MAX_POINTS).contains(&max_points) {
        return Err(ApiError::new(
            ErrorCode::InvalidQuery,
            format!("max_points must be in 1..={MAX_POINTS}"),
        ));
    }
    // Every parameter is checked before the conditional answer: a bad query gets its 400 even
    // from a client that already holds the current version.
    let since = q.since.as_deref().map(parse_since).transpose()?;
    // Points are written only with a new state version, so the version tags the history.
    let snap = engine.applied_snapshot(id).await?;
    let tag = ETag::of(format_args!("h{id}-{}", snap.version_tag()));
    if tag.matches(&headers) {
        return Ok(tag.tagged(StatusCode::NOT_MODIFIED.into_response()));
    }
    let (points, total) = engine.history(id, since, max_points).await?;
    Ok(tag.tagged(axum::Json(experiment::history(&snap, &points, total)).into_response()))
}

/// `since` is an RFC 3339 time, which always names its offset: a time without one is ambiguous
/// (the server's zone or the client's?), so it is refused rather than guessed.
fn parse_since(text: &str) -> Result<chrono::DateTime<chrono::Utc>, ApiError> {
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|time| time.with_timezone(&chrono::Utc))
        .map_err(|_| {
            ApiError::new(
                ErrorCode::InvalidQuery,
                format!(
                    "since must be an RFC 3339 time with its timezone, such as \
                     2026-11-25T12:00:00Z or 2026-11-25T13:00:00+01:00; got {text:?}"
                ),
            )
        })
}
