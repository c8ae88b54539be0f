//! The one JSON error shape: `{"error": {"code": "...", "message": "..."}}` with the right status.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::request_id;
use crate::api::ErrorCode;
use crate::engine::{EngineError, InternalError};

/// Seconds a client should wait before retrying after a 503.
pub const RETRY_AFTER_SECS: u32 = 1;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: ErrorCode,
    pub message: String,
}

impl ApiError {
    /// An error with the status its code always has.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        let status = code
            .status()
            .and_then(|s| StatusCode::from_u16(s).ok())
            .unwrap_or(StatusCode::BAD_REQUEST);
        Self::with_status(status, code, message)
    }

    /// An error of a code whose status depends on where it arises.
    pub fn with_status(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    /// A 500. The client learns only where to look: the request id of the log line that holds
    /// the cause.
    pub fn internal() -> Self {
        Self::internal_of(request_id::current().as_deref())
    }

    /// A 500 of the request with this id.
    pub fn internal_of(request_id: Option<&str>) -> Self {
        let message = match request_id {
            Some(id) => format!("internal error; see the server log (request id {id})"),
            None => "internal error; see the server log".to_string(),
        };
        Self::new(ErrorCode::Internal, message)
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        let (status, code) = match &e {
            EngineError::Invalid { code, .. } => (StatusCode::UNPROCESSABLE_ENTITY, *code),
            EngineError::UnknownExperiment(_) => {
                (StatusCode::NOT_FOUND, ErrorCode::UnknownExperiment)
            }
            EngineError::Missing { code, .. } => (StatusCode::NOT_FOUND, *code),
            EngineError::Forbidden(_) => (StatusCode::FORBIDDEN, ErrorCode::Forbidden),
            EngineError::UnknownRanker(_) => {
                (StatusCode::UNPROCESSABLE_ENTITY, ErrorCode::UnknownRanker)
            }
            EngineError::Conflict { code, .. } => (StatusCode::CONFLICT, *code),
            EngineError::InvalidToken => (StatusCode::BAD_REQUEST, ErrorCode::InvalidToken),
            EngineError::ExpiredToken => (StatusCode::GONE, ErrorCode::DuelExpired),
            EngineError::OutcomeConflict { .. } | EngineError::PairResultsConflict => {
                (StatusCode::CONFLICT, ErrorCode::OutcomeConflict)
            }
            EngineError::Unavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::DatabaseUnavailable,
            ),
            EngineError::Internal(cause) => {
                log_internal(cause);
                return ApiError::internal();
            }
        };
        ApiError::with_status(status, code, e.to_string())
    }
}

/// The cause of a 500 with its whole chain, at ERROR, beside the request id the client was given.
fn log_internal(cause: &InternalError) {
    let request_id = request_id::current();
    tracing::error!(
        error = %cause,
        request_id = request_id.as_deref().unwrap_or("-"),
        "internal error"
    );
}

/// The JSON body of an error, also used for per-item errors of batch requests.
pub fn error_body(code: ErrorCode, message: &str) -> serde_json::Value {
    json!({ "error": { "code": code.as_str(), "message": message } })
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
        if self.status == StatusCode::REQUEST_TIMEOUT {
            // The rest of the body is unread: the connection cannot carry another request.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    /// A log sink the test reads back.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn an_internal_error_logs_its_chain_and_tells_the_client_only_the_request_id() {
        let log = Captured::default();
        let sink = log.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || sink.clone())
            .with_ansi(false)
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        let cause = anyhow::anyhow!("relation \"duels\" does not exist").context("loading duels");
        let id = HeaderValue::from_static("5eed-2a");
        let e = request_id::within(Some(id), async {
            ApiError::from(EngineError::internal(cause))
        })
        .await;
        assert_eq!(
            (e.status, e.code),
            (StatusCode::INTERNAL_SERVER_ERROR, ErrorCode::Internal)
        );
        assert_eq!(
            e.message,
            "internal error; see the server log (request id 5eed-2a)"
        );
        let log = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
        assert!(log.contains("ERROR"), "{log}");
        assert!(log.contains("5eed-2a"), "{log}");
        assert!(
            log.contains(r#"loading duels: relation "duels" does not exist"#),
            "{log}"
        );
    }
}
