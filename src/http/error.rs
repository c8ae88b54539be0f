//! The one JSON error shape: `{"error": {"code": "...", "message": "..."}}` with the right status.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::engine::EngineError;

/// Seconds a client should wait before retrying after a 503.
pub const RETRY_AFTER_SECS: u32 = 1;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        let message = e.to_string();
        let (status, code) = match e {
            EngineError::Invalid { code, .. } => (StatusCode::UNPROCESSABLE_ENTITY, code),
            EngineError::UnknownExperiment(_) => (StatusCode::NOT_FOUND, "unknown_experiment"),
            EngineError::UnknownRanker(_) => (StatusCode::UNPROCESSABLE_ENTITY, "unknown_ranker"),
            EngineError::Conflict { code, .. } => (StatusCode::CONFLICT, code),
            EngineError::InvalidToken => (StatusCode::BAD_REQUEST, "invalid_token"),
            EngineError::ExpiredToken => (StatusCode::GONE, "duel_expired"),
            EngineError::OutcomeConflict { .. } | EngineError::PairResultsConflict => {
                (StatusCode::CONFLICT, "outcome_conflict")
            }
            EngineError::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "database_unavailable"),
            EngineError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        ApiError::new(status, code, message)
    }
}

/// The JSON body of an error, also used for per-item errors of batch requests.
pub fn error_body(code: &str, message: &str) -> serde_json::Value {
    json!({ "error": { "code": code, "message": message } })
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            axum::Json(error_body(self.code, &self.message)),
        )
            .into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        }
        response
    }
}
