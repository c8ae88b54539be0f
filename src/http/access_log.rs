//! One access log line per request under the target `joust::access`: method, route (the matched
//! template, so ids do not explode the cardinality of log queries), status, latency and the
//! request id that the response's `x-request-id` header also carries.
//!
//! The level follows the status, so the default `info` log keeps what an operator looks for
//! without paying for the rest: server errors (5xx) at WARN, refused requests (4xx) at INFO, and
//! every other request at DEBUG (`RUST_LOG=info,joust::access=debug` logs them all). A line per
//! served duel costs about a third of the duel itself (scripts/bench-http: 48-54 us of server
//! CPU per duel with it, 32-42 us without), which a service answering tens of thousands of duels
//! a second should not pay by default. `RUST_LOG=info,joust::access=off` silences the log.

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use std::time::Instant;
use tracing::Level;

const TARGET: &str = "joust::access";

pub async fn log(req: Request, next: Next) -> Response {
    let start = Instant::now();
    // Cheap clones (reference-counted): the line is only formatted when its level is enabled.
    let method = req.method().clone();
    let route = req.extensions().get::<MatchedPath>().cloned();
    let request_id = req.headers().get("x-request-id").cloned();
    let response = super::request_id::within(request_id.clone(), next.run(req)).await;
    let status = response.status();
    let level = level_of(status);
    let enabled = match level {
        Level::WARN => tracing::enabled!(target: TARGET, Level::WARN),
        Level::INFO => tracing::enabled!(target: TARGET, Level::INFO),
        _ => tracing::enabled!(target: TARGET, Level::DEBUG),
    };
    if enabled {
        write_line(
            level,
            &method,
            route.as_ref(),
            status,
            start,
            request_id.as_ref(),
        );
    }
    response
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
    route: Option<&MatchedPath>,
    status: StatusCode,
    start: Instant,
    request_id: Option<&HeaderValue>,
) {
    let route = route.map_or("unmatched", MatchedPath::as_str);
    let request_id = request_id.and_then(|v| v.to_str().ok()).unwrap_or("-");
    let status = status.as_u16();
    let latency_ms = start.elapsed().as_secs_f64() * 1e3;
    // `tracing` fixes an event's level at its call site, hence one call per level.
    macro_rules! line {
        ($level:expr) => {
            tracing::event!(target: TARGET, $level, %method, %route, status, latency_ms,
                %request_id, "request")
        };
    }
    match level {
        Level::WARN => line!(Level::WARN),
        Level::INFO => line!(Level::INFO),
        _ => line!(Level::DEBUG),
    }
}
