//! One access log line per request under the target `joust::access`: method, route (the matched
//! template, so ids do not explode the cardinality of log queries), status, latency and the
//! request id that the response's `x-request-id` header also carries. The same layer counts the
//! request and records its latency in the per-route metrics ([`super::metrics`]), from the same
//! clock reading.
//!
//! The level follows the status, so the default `info` log keeps what an operator looks for
//! without paying for the rest: server errors (5xx) at WARN, refused requests (4xx) at INFO, and
//! every other request at DEBUG (`RUST_LOG=info,joust::access=debug` logs them all). A line per
//! served duel costs about a third of the duel itself (scripts/bench-http: 48-54 us of server
//! CPU per duel with it, 32-42 us without), which a service answering tens of thousands of duels
//! a second should not pay by default. `RUST_LOG=info,joust::access=off` silences the log.
//!
//! A hand-written tower layer rather than `axum::middleware::from_fn`, which boxes the rest of
//! the stack into a new `Next` on every request. It wraps the whole router, outside the panic
//! catcher (a request answered 500 after a panic is logged and counted too); the route comes
//! from the response ([`RouteLabel`]).

use axum::http::{HeaderValue, Method, Request, Response, StatusCode};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::task::futures::TaskLocalFuture;
use tower::{Layer, Service};
use tracing::Level;

use super::route_label::RouteLabel;

const TARGET: &str = "joust::access";

/// Logs and counts every request; see the module documentation.
#[derive(Debug, Clone, Copy, Default)]
pub struct AccessLogLayer;

impl<S> Layer<S> for AccessLogLayer {
    type Service = AccessLog<S>;
    fn layer(&self, inner: S) -> AccessLog<S> {
        AccessLog { inner }
    }
}

#[derive(Debug, Clone)]
pub struct AccessLog<S> {
    inner: S,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for AccessLog<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = AccessLogFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let start = Instant::now();
        // Cheap clones (reference-counted): the line is only formatted when its level is enabled.
        let method = req.method().clone();
        let request_id = req.headers().get("x-request-id").cloned();
        let inner = super::request_id::within(request_id.clone(), self.inner.call(req));
        AccessLogFuture {
            inner,
            start,
            method,
            request_id,
        }
    }
}

pin_project_lite::pin_project! {
    pub struct AccessLogFuture<F> {
        #[pin]
        inner: TaskLocalFuture<Option<HeaderValue>, F>,
        start: Instant,
        method: Method,
        request_id: Option<HeaderValue>,
    }
}

impl<F, B, E> Future for AccessLogFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<B>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let response = std::task::ready!(this.inner.poll(cx))?;
        let status = response.status();
        let route = RouteLabel::of(&response);
        let elapsed = this.start.elapsed();
        super::metrics::record_request(route, this.method, status.as_u16(), elapsed);
        let level = level_of(status);
        let enabled = match level {
            Level::WARN => tracing::enabled!(target: TARGET, Level::WARN),
            Level::INFO => tracing::enabled!(target: TARGET, Level::INFO),
            _ => tracing::enabled!(target: TARGET, Level::DEBUG),
        };
        if enabled {
            write_line(
                level,
                this.method,
                route,
                status,
                elapsed.as_secs_f64() * 1e3,
                this.request_id.as_ref(),
            );
        }
        Poll::Ready(Ok(response))
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
) {
    let request_id = request_id.and_then(|v| v.to_str().ok()).unwrap_or("-");
    let status = status.as_u16();
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
