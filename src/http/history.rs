//! `GET /v1/experiments/{id}/history`: the experiment's history points, thinned evenly.

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::engine::ErrorCode;
use crate::engine::history::MAX_POINTS;

use super::auth::ReadAccess;
use super::error::ApiError;
use super::etag::ETag;
use super::json::{Path, Query};
use super::views;

/// Points returned when `max_points` is not given.
pub const DEFAULT_POINTS: i64 = 500;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryQuery {
    #[serde(default)]
    since: Option<chrono::DateTime<chrono::Utc>>,
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
    // Points are written only with a new state version, so the version tags the history.
    let snap = engine.snapshot(id).await?;
    let tag = ETag::of(format_args!("h{id}-v{}", snap.version));
    if tag.matches(&headers) {
        return Ok(tag.tagged(StatusCode::NOT_MODIFIED.into_response()));
    }
    let (points, total) = engine.history(id, q.since, max_points).await?;
    Ok(tag.tagged(axum::Json(views::history(&snap, &points, total)).into_response()))
}
