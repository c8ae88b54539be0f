//! JSON answers of the hot paths (duels, interleavings, outcomes, clicks), serialised straight
//! into one buffer of about their size. `axum::Json` starts from 128 bytes and grows (a duel's
//! answer is about 260 bytes, an interleaving's about 1,000), copying what it wrote each time.

use axum::body::Body;
use axum::http::{HeaderValue, Response, header};
use axum::response::IntoResponse;
use serde::Serialize;

use crate::http::stack::error::ApiError;

/// `value` as a 200 JSON answer; `capacity` is the usual size of its text.
pub fn json<T: Serialize>(value: &T, capacity: usize) -> Response<Body> {
    let mut text = Vec::with_capacity(capacity);
    match serde_json::to_writer(&mut text, value) {
        Ok(()) => {
            let mut response = Response::new(Body::from(text));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        }
        // Only a map with non-string keys or a failing Serialize impl can get here, and none of
        // the answers has either.
        Err(e) => {
            tracing::error!(error = %e, "an answer failed to serialise");
            ApiError::internal().into_response()
        }
    }
}
