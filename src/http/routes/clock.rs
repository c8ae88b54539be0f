//! `PUT /v1/admin/clock`: moves the clock conversion windows are judged by, on a server started
//! with `--test-clock` (for integration tests; `GET` reads it). Without the flag the endpoint
//! does not exist (404).

use axum::response::IntoResponse;
use serde::Deserialize;
use serde_json::json;

use crate::http::stack::auth::AdminAccess;
use crate::http::stack::error::ApiError;
use crate::http::stack::json::Json;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockInput {
    /// Seconds ahead of (positive) or behind (negative) the system clock.
    offset_seconds: f64,
}

fn off() -> ApiError {
    ApiError::not_found("no such endpoint (the test clock is on only with --test-clock)")
}

pub async fn get(AdminAccess(engine): AdminAccess) -> Result<impl IntoResponse, ApiError> {
    let clock = engine.clock();
    if !clock.is_settable() {
        return Err(off());
    }
    Ok(axum::Json(json!({
        "offset_seconds": clock.offset_secs(),
        "now": clock.now(),
    })))
}

pub async fn put(
    AdminAccess(engine): AdminAccess,
    Json(input): Json<ClockInput>,
) -> Result<impl IntoResponse, ApiError> {
    let offset = engine
        .set_clock_offset(input.offset_seconds)?
        .ok_or_else(off)?;
    Ok(axum::Json(json!({
        "offset_seconds": offset,
        "now": engine.clock().now(),
    })))
}
