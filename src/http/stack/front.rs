//! The layer every request passes first, written out by hand as one tower layer: it gives the
//! request its id (or keeps the `x-request-id` it came with) and returns it on the response,
//! makes the id the current one while the request is handled ([`super::request_id::current`]),
//! answers a handler's panic with the one JSON error shape (a 500 naming the request id), and
//! counts and logs every answered request ([`super::access_log`]). It also identifies the
//! request's API key ([`super::auth`]): the key is named in the access log, the request runs
//! within the key's reach ([`Reach`]), and the finding is left in the request for the handler's
//! extractor.
//!
//! One layer rather than a stack of ready-made ones (tower-http's request-id setter and
//! propagator, tracing span, panic catcher, and the access log): each of those wraps the request's
//! future in one more future and is cloned with the service for every request, and the panic
//! catcher also boxed every response body. `perf record` of the duel load of
//! `benches/bench-http` put the stack's own code at about a tenth of a duel
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

use super::auth::{Identified, KeyLabel};
use super::error::ApiError;
use super::request_id::{self, SequentialIds};
use super::route_label::RouteLabel;
use crate::engine::Reach;
use crate::http::AppState;
use std::sync::Arc;

/// The header that carries a request's id, both ways.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// See the module documentation.
#[derive(Clone, Default)]
pub struct FrontLayer {
    ids: SequentialIds,
    /// Whose keys identify requests; `None` leaves requests unidentified (unit tests).
    app: Option<Arc<AppState>>,
}

impl FrontLayer {
    /// The layer that identifies requests by `app`'s keys.
    pub fn with_keys(app: Arc<AppState>) -> FrontLayer {
        FrontLayer {
            ids: SequentialIds::default(),
            app: Some(app),
        }
    }
}

impl<S> Layer<S> for FrontLayer {
    type Service = Front<S>;
    fn layer(&self, inner: S) -> Front<S> {
        Front {
            inner,
            ids: self.ids.clone(),
            app: self.app.clone(),
        }
    }
}

#[derive(Clone)]
pub struct Front<S> {
    inner: S,
    ids: SequentialIds,
    app: Option<Arc<AppState>>,
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

    fn call(&mut self, mut req: Request<ReqBody>) -> Self::Future {
        let start = Instant::now();
        let (reach, key) = match &self.app {
            Some(app) => {
                let found = app.keys.identify(app.engine.key_ring(), req.headers());
                req.extensions_mut().insert(Identified(found));
                // A refused key reaches nothing it could use: every extractor refuses it; only a
                // keyless click is served, on the strength of its token.
                found.map_or((Reach::All, None), |c| (c.reach, Some(c.key)))
            }
            None => (Reach::All, None),
        };
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
            .map(|future| request_id::within(Some(id.clone()), reach.within(future)));
        FrontFuture {
            handling,
            start,
            method,
            id,
            key,
        }
    }
}

pin_project_lite::pin_project! {
    pub struct FrontFuture<F> {
        // `None` when calling the router panicked.
        #[pin]
        handling: Option<TaskLocalFuture<Option<HeaderValue>, TaskLocalFuture<Reach, F>>>,
        start: Instant,
        method: Method,
        id: HeaderValue,
        key: Option<KeyLabel>,
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
            *this.key,
        );
        Poll::Ready(Ok(response))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::routing::get;
    use tower::ServiceExt;

    async fn boom() -> &'static str {
        panic!("a handler's bug")
    }

    fn get_request(path: &str, id: Option<&'static str>) -> Request<Body> {
        let mut request = Request::get(path);
        if let Some(id) = id {
            request = request.header(REQUEST_ID, id);
        }
        request.body(Body::empty()).unwrap()
    }

    #[tokio::test]
    async fn ids_are_kept_or_made_and_a_panic_is_a_500_naming_its_id() {
        let router = Router::new()
            .route("/ok", get(|| async { "ok" }))
            .route("/boom", get(boom));
        let app = FrontLayer::default().layer(router);

        let r = app
            .clone()
            .oneshot(get_request("/ok", Some("client-7")))
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()[REQUEST_ID], "client-7");

        let ids: Vec<String> = made_ids(&app).await;
        assert_ne!(ids[0], ids[1]);

        let r = app
            .clone()
            .oneshot(get_request("/boom", None))
            .await
            .unwrap();
        assert_eq!(r.status(), 500);
        let id = r.headers()[REQUEST_ID].to_str().unwrap().to_string();
        let body = axum::body::to_bytes(r.into_body(), 1 << 16).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["code"], "internal", "{body}");
        assert_eq!(
            body["error"]["message"],
            format!("internal error; see the server log (request id {id})")
        );
    }

    /// The ids the layer gives two requests that bring none.
    async fn made_ids<S>(app: &Front<S>) -> Vec<String>
    where
        S: Service<Request<Body>, Response = Response<Body>, Error = Infallible> + Clone,
    {
        let mut ids = Vec::new();
        for _ in 0..2 {
            let r = app.clone().oneshot(get_request("/ok", None)).await.unwrap();
            ids.push(r.headers()[REQUEST_ID].to_str().unwrap().to_string());
        }
        ids
    }
}
