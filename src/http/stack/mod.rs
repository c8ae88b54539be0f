//! What every request passes through, whatever its route: the connection loop and its limits,
//! the front layer (request ids, the access log, per-route Prometheus series), API keys, the one
//! JSON error shape, the extractors that keep malformed requests in that shape, and ETags.

pub mod access_log;
pub mod auth;
pub mod connections;
pub mod error;
pub mod etag;
pub mod front;
pub mod json;
pub mod request_id;
pub mod route_label;
pub mod telemetry;
pub mod tls;
