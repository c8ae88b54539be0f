//! One access log line per request, at INFO under the target `joust::access`: method, route
//! (the matched template, so ids do not explode the cardinality of log queries), status,
//! latency and the request id that the response's `x-request-id` header also carries.
//! `RUST_LOG=info,joust::access=off` silences it.

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use std::time::Instant;

pub async fn log(req: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = req.method().clone();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".to_owned());
    let request_id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-")
        .to_owned();
    let response = next.run(req).await;
    tracing::info!(
        target: "joust::access",
        %method,
        %route,
        status = response.status().as_u16(),
        latency_ms = start.elapsed().as_secs_f64() * 1e3,
        %request_id,
        "request"
    );
    response
}
