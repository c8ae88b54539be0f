//! One access log line per request under the target `joust::access`: method, route (the matched
//! template, so ids do not explode the cardinality of log queries), status, latency, the
//! request id that the response's `x-request-id` header also carries, and the key that acted
//! (`key`: a stored key's id, `config-N` for the N-th configured key, `open`, or `-`). The same call counts the
//! request and records its latency in the per-route metrics ([`super::telemetry`]), from the same
//! clock reading.
//!
//! The level follows the status, so the default `info` log keeps what an operator looks for
//! without paying for the rest: server errors (5xx) at WARN, refused requests (4xx) at INFO, and
//! every other request at DEBUG (`RUST_LOG=info,joust::access=debug` logs them all). A line per
//! served duel costs about a third of the duel itself (benches/bench-http: 48-54 us of server
//! CPU per duel with it, 32-42 us without), which a service answering tens of thousands of duels
//! a second should not pay by default. `RUST_LOG=info,joust::access=off` silences the log.
//!
//! Called by the front layer ([`super::front`]) when a request is answered, a request answered
//! 500 after a panic included; the route comes from the response
//! ([`super::route_label::RouteLabel`]).

use axum::http::{HeaderValue, Method, StatusCode};
use std::time::Duration;
use tracing::Level;

use super::auth::KeyLabel;

/// A key's label, or `-` for a request whose key was missing or refused.
struct KeyOrDash(Option<KeyLabel>);

impl std::fmt::Display for KeyOrDash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(key) => key.fmt(f),
            None => f.write_str("-"),
        }
    }
}

const TARGET: &str = "joust::access";

/// Counts a finished request and logs its line when its level is enabled (see the module
/// documentation).
pub fn finish(
    method: &Method,
    route: &str,
    status: StatusCode,
    elapsed: Duration,
    request_id: Option<&HeaderValue>,
    key: Option<KeyLabel>,
) {
    super::telemetry::record_request(route, method, status.as_u16(), elapsed);
    let level = level_of(status);
    let enabled = match level {
        Level::WARN => tracing::enabled!(target: TARGET, Level::WARN),
        Level::INFO => tracing::enabled!(target: TARGET, Level::INFO),
        _ => tracing::enabled!(target: TARGET, Level::DEBUG),
    };
    if enabled {
        write_line(
            level,
            method,
            route,
            status,
            elapsed.as_secs_f64() * 1e3,
            request_id,
            key,
        );
    }
}

/// The level of a request's line: see the module documentation.
fn level_of(status: StatusCode) -> Level {
    if status.is_server_error() {
        Level::WARN
    } else if status.is_client_error() {
        Level::INFO
    } else {
        Level::DEBUG
    }
}

fn write_line(
    level: Level,
    method: &Method,
    route: &str,
    status: StatusCode,
    latency_ms: f64,
    request_id: Option<&HeaderValue>,
    key: Option<KeyLabel>,
) {
    let request_id = request_id.and_then(|v| v.to_str().ok()).unwrap_or("-");
    let key = KeyOrDash(key);
    let status = status.as_u16();
    // `tracing` fixes an event's level at its call site, hence one call per level.
    macro_rules! line {
        ($level:expr) => {
            tracing::event!(target: TARGET, $level, %method, %route, status, latency_ms,
                %request_id, %key, "request")
        };
    }
    match level {
        Level::WARN => line!(Level::WARN),
        Level::INFO => line!(Level::INFO),
        _ => line!(Level::DEBUG),
    }
}
