//! The layer every request passes first, written out by hand as one tower layer: it gives the
//! request its id (or keeps the `x-request-id` it came with) and returns it on the response,
//! makes the id the current one while the request is handled ([`super::request_id::current`]),
//! answers a handler's panic with the one JSON error shape (a 500 naming the request id), and
//! counts and logs every answered request ([`super::access_log`]).
//!
//! One layer rather than a stack of ready-made ones (tower-http's request-id setter and
//! propagator, tracing span, panic catcher, and the access log): each of those wraps the request's
//! future in one more future and is cloned with the service for every request, and the panic
//! catcher also boxed every response body. `perf record` of the duel load of
//! `scripts/bench-http` put the stack's own code at about a tenth of a duel
//! ([benchmarks.md](../../docs/benchmarks.md)).

use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Method, Request, Response};
use axum::response::IntoResponse;
use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::task::futures::TaskLocalFuture;
use tower::{Layer, Service};

use super::error::ApiError;
use super::request_id::{self, SequentialIds};
use super::route_label::RouteLabel;

/// The header that carries a request's id, both ways.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// See the module documentation.
#[derive(Clone, Default)]
pub struct FrontLayer {
    ids: SequentialIds,
}

impl<S> Layer<S> for FrontLayer {
    type Service = Front<S>;
    fn layer(&self, inner: S) -> Front<S> {
        Front {
            inner,
            ids: self.ids.clone(),
        }
    }
}

#[derive(Clone)]
pub struct Front<S> {
    inner: S,
    ids: SequentialIds,
}

impl<S, ReqBody> Service<Request<ReqBody>> for Front<S>
where
    S: Service<Request<ReqBody>, Response = Response<Body>, Error = Infallible>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = FrontFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let start = Instant::now();
        let method = req.method().clone();
        let id = match req.headers().get(REQUEST_ID) {
            Some(id) => id.clone(),
            None => self.ids.next_id(),
        };
        let inner = &mut self.inner;
        // A panic while the router is called (before any future exists) is answered like one
        // while the future is polled.
        let handling = std::panic::catch_unwind(AssertUnwindSafe(move || inner.call(req)))
            .ok()
            .map(|future| request_id::within(Some(id.clone()), future));
        FrontFuture {
            handling,
            start,
            method,
            id,
        }
    }
}

pin_project_lite::pin_project! {
    pub struct FrontFuture<F> {
        // `None` when calling the router panicked.
        #[pin]
        handling: Option<TaskLocalFuture<Option<HeaderValue>, F>>,
        start: Instant,
        method: Method,
        id: HeaderValue,
    }
}

impl<F> Future for FrontFuture<F>
where
    F: Future<Output = Result<Response<Body>, Infallible>>,
{
    type Output = Result<Response<Body>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let polled = match this.handling.as_pin_mut() {
            Some(handling) => {
                std::panic::catch_unwind(AssertUnwindSafe(move || handling.poll(cx))).ok()
            }
            None => None,
        };
        let mut response = match polled {
            Some(Poll::Pending) => return Poll::Pending,
            Some(Poll::Ready(Ok(response))) => response,
            // A panic: the default hook has printed its message; this line ties it to the id
            // the client is told.
            None => {
                let id = this.id.to_str().ok();
                tracing::error!(request_id = id, "the request's handler panicked");
                ApiError::internal_of(id).into_response()
            }
        };
        if !response.headers().contains_key(REQUEST_ID) {
            response.headers_mut().insert(REQUEST_ID, this.id.clone());
        }
        super::access_log::finish(
            this.method,
            RouteLabel::of(&response),
            response.status(),
            this.start.elapsed(),
            Some(this.id),
        );
        Poll::Ready(Ok(response))
    }
}
