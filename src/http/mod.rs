//! The HTTP API: an axum router over `routes/` (one module per resource: thin handlers that
//! parse, check the API key's scope, call one engine function and render), `views/` (the JSON
//! answers, rendered from what the engine computed) and `stack/` (what every request passes:
//! the connection loop, request ids, the access log, keys, the error shape, JSON extractors,
//! ETags, Prometheus). The request and answer shapes themselves are `crate::api`'s.

mod routes;
mod stack;
mod ui;
mod views;

pub use stack::auth::ApiKeys;
pub use stack::connections::{
    ConnectionLimits, DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_CONNECTIONS,
};
pub use stack::tls::{POLL_INTERVAL as TLS_POLL_INTERVAL, ServerTls};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{delete, get, post};
use std::future::Future;
use std::sync::Arc;
use tower_http::compression::CompressionLayer;
use tower_http::compression::predicate::{NotForContentType, Predicate, SizeAbove};

use crate::api::ErrorCode;
use crate::engine::Engine;
use routes::{
    clicks, clock, conversions, duels, experiments, export, health, history, interleavings, keys,
    outcomes, projects,
};
use stack::error::ApiError;
use stack::{front, route_label};

/// Largest request body: a full batch of outcomes (10,000 tokens of ~100 bytes) fits.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

pub struct AppState {
    pub engine: Arc<Engine>,
    pub keys: ApiKeys,
    pub metrics: metrics_exporter_prometheus::PrometheusHandle,
}

/// The routes, each labelled with its template for the access log and the metrics
/// ([`route_label`]). Every API path is written out under `/v1` rather than nested: a nested
/// router is one more boxed service per request.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route(
            "/v1/experiments",
            post(experiments::create).get(experiments::list),
        )
        .route(
            "/v1/experiments/{id}",
            get(experiments::get)
                .patch(experiments::patch)
                .delete(experiments::delete),
        )
        .route("/v1/experiments/{id}/matrix", get(experiments::matrix))
        .route("/v1/experiments/{id}/history", get(history::get))
        .route("/v1/experiments/{id}/outcomes", get(export::outcomes))
        .route("/v1/experiments/{id}/conversions", get(export::conversions))
        .route(
            "/v1/experiments/{id}/rankers",
            post(experiments::add_ranker),
        )
        .route(
            "/v1/experiments/{id}/rankers/{name}",
            delete(experiments::retire_ranker),
        )
        .route("/v1/experiments/{id}/duels", post(duels::create))
        .route("/v1/interleavings", post(interleavings::create))
        .route(
            "/v1/clicks",
            post(clicks::create).options(clicks::preflight),
        )
        .route("/v1/outcomes", post(outcomes::create))
        .route("/v1/outcomes/batch", post(outcomes::batch))
        .route("/v1/conversions", post(conversions::create))
        .route("/v1/conversions/batch", post(conversions::batch))
        .route("/v1/admin/clock", get(clock::get).put(clock::put))
        .route("/v1/key", get(stack::auth::describe))
        .route("/v1/keys", post(keys::create).get(keys::list))
        .route("/v1/keys/{key_id}", delete(keys::revoke))
        .route("/v1/projects", post(projects::create).get(projects::list))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(health::metrics))
        .merge(ui::routes())
        .route_layer(route_label::RouteLabelLayer)
        .fallback(|| async { ApiError::not_found("no such endpoint") })
        // A known path with another method: labelled with its route as a routed request is (the
        // route layer does not wrap a method router's fallback).
        .method_not_allowed_fallback(|req: axum::extract::Request| async move {
            use axum::response::IntoResponse;
            let mut response = ApiError::new(
                ErrorCode::MethodNotAllowed,
                "this endpoint does not accept that method",
            )
            .into_response();
            if let Some(route) = req.extensions().get::<axum::extract::MatchedPath>() {
                response
                    .extensions_mut()
                    .insert(route_label::RouteLabel(route.clone()));
            }
            response
        })
        .with_state(state)
}

/// Answers smaller than this go out uncompressed even to clients that accept gzip: they fit in
/// one packet either way, and gzip's setup costs more CPU than the whole request (a duel's
/// answer is about 260 bytes).
pub const COMPRESS_MIN_BYTES: u16 = 1024;

/// The service a connection serves: the router inside the middleware every request passes,
/// outermost first. The stack wraps the router once (see [`route_label`] for why not with
/// `Router::layer`).
pub fn app(
    state: Arc<AppState>,
) -> impl tower::Service<
    axum::extract::Request,
    Response = axum::http::Response<
        impl hyper::body::Body<Data = axum::body::Bytes, Error: Into<tower::BoxError>> + Send + 'static,
    >,
    Error = std::convert::Infallible,
    Future: Send + 'static,
> + Clone
+ Send
+ 'static {
    tower::ServiceBuilder::new()
        // Gzip for clients that ask for it (browsers): dashboards read large matrices. Outside
        // the front layer, so that a 500 answered for a panic is an ordinary response to it.
        .layer(
            CompressionLayer::new().compress_when(
                SizeAbove::new(COMPRESS_MIN_BYTES)
                    .and(NotForContentType::GRPC)
                    .and(NotForContentType::IMAGES)
                    .and(NotForContentType::SSE),
            ),
        )
        // Request ids, the panic catcher, the access log and the request metrics, in one layer.
        .layer(front::FrontLayer::with_keys(state.clone()))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .service(router(state))
}

/// Serves the API on `listener` with the default connection limits until `shutdown` resolves,
/// then finishes in-flight requests.
pub async fn serve(
    listener: tokio::net::TcpListener,
    engine: Arc<Engine>,
    keys: ApiKeys,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(
        listener,
        engine,
        keys,
        ConnectionLimits::default(),
        None,
        shutdown,
    )
    .await
}

/// [`serve`] with the given connection limits, over HTTPS when `tls` is given.
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    engine: Arc<Engine>,
    keys: ApiKeys,
    limits: ConnectionLimits,
    tls: Option<&ServerTls>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let state = Arc::new(AppState {
        engine,
        keys,
        metrics: stack::telemetry::handle(),
    });
    let acceptor = tls.map(ServerTls::acceptor);
    stack::connections::serve_connections(listener, app(state), limits, acceptor, shutdown).await
}
