//! The matched route template of a request, carried out on its response.
//!
//! The layer that logs and counts requests by route (`front`, through `access_log`) wraps the
//! whole router once, outside it: a layer added with `Router::layer` wraps every route
//! separately instead, and each request then clones and drops one boxed service per layer
//! (measured with `perf` under `benches/bench-http`: about a tenth of a duel's CPU). Outside the
//! router the request has not been routed yet, so the route is learnt from the response: this
//! layer, the only one inside the router (`Router::route_layer`), copies axum's [`MatchedPath`]
//! into the response's extensions.

use axum::extract::{MatchedPath, Request};
use axum::response::Response;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tower::{Layer, Service};

/// The route template a response answered (absent for a request no route matched).
#[derive(Debug, Clone)]
pub struct RouteLabel(pub MatchedPath);

impl RouteLabel {
    /// The route template of a response, or `unmatched`.
    pub fn of(response: &Response<impl Sized>) -> &str {
        response
            .extensions()
            .get::<RouteLabel>()
            .map_or("unmatched", |r| r.0.as_str())
    }
}

/// Adds [`RouteLabel`] to every routed response.
#[derive(Debug, Clone, Copy, Default)]
pub struct RouteLabelLayer;

impl<S> Layer<S> for RouteLabelLayer {
    type Service = Labelled<S>;
    fn layer(&self, inner: S) -> Labelled<S> {
        Labelled { inner }
    }
}

#[derive(Debug, Clone)]
pub struct Labelled<S> {
    inner: S,
}

impl<S> Service<Request> for Labelled<S>
where
    S: Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = LabelledFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let route = req.extensions().get::<MatchedPath>().cloned();
        LabelledFuture {
            inner: self.inner.call(req),
            route,
        }
    }
}

pin_project_lite::pin_project! {
    pub struct LabelledFuture<F> {
        #[pin]
        inner: F,
        route: Option<MatchedPath>,
    }
}

impl<F, E> Future for LabelledFuture<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut response = std::task::ready!(this.inner.poll(cx))?;
        if let Some(route) = this.route.take() {
            response.extensions_mut().insert(RouteLabel(route));
        }
        Poll::Ready(Ok(response))
    }
}
