//! The HTTP API: an axum router with one module per resource. Handlers are thin: they parse,
//! check the API key's scope, call one engine function and render JSON.

pub mod access_log;
pub mod auth;
pub mod clicks;
pub mod decision_view;
pub mod detail_body;
pub mod duels;
pub mod error;
pub mod etag;
pub mod experiments;
pub mod health;
pub mod history;
pub mod interleavings;
pub mod json;
pub mod metrics;
pub mod outcomes;
pub mod request_id;
pub mod segments_view;
pub mod server;
pub mod ui;
pub mod units_view;
pub mod views;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{delete, get, post};
use std::future::Future;
use std::sync::Arc;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

use crate::engine::{Engine, ErrorCode};
use auth::ApiKeys;
use error::ApiError;

/// Largest request body: a full batch of outcomes (10,000 tokens of ~100 bytes) fits.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

pub struct AppState {
    pub engine: Arc<Engine>,
    pub keys: ApiKeys,
    pub metrics: metrics_exporter_prometheus::PrometheusHandle,
}

pub fn router(state: Arc<AppState>) -> Router {
    let v1 = Router::new()
        .route(
            "/experiments",
            post(experiments::create).get(experiments::list),
        )
        .route(
            "/experiments/{id}",
            get(experiments::get)
                .patch(experiments::patch)
                .delete(experiments::delete),
        )
        .route("/experiments/{id}/matrix", get(experiments::matrix))
        .route("/experiments/{id}/history", get(history::get))
        .route("/experiments/{id}/rankers", post(experiments::add_ranker))
        .route(
            "/experiments/{id}/rankers/{name}",
            delete(experiments::retire_ranker),
        )
        .route("/experiments/{id}/duels", post(duels::create))
        .route("/interleavings", post(interleavings::create))
        .route("/clicks", post(clicks::create).options(clicks::preflight))
        .route("/outcomes", post(outcomes::create))
        .route("/outcomes/batch", post(outcomes::batch))
        .route("/key", get(auth::describe));
    let request_id = axum::http::HeaderName::from_static("x-request-id");
    Router::new()
        .nest("/v1", v1)
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(health::metrics))
        .merge(ui::routes())
        .fallback(|| async { ApiError::not_found("no such endpoint") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                ErrorCode::MethodNotAllowed,
                "this endpoint does not accept that method",
            )
        })
        .layer(axum::middleware::from_fn(metrics::track))
        // Gzip for clients that ask for it (browsers): dashboards read large matrices.
        .layer(tower_http::compression::CompressionLayer::new())
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(CatchPanicLayer::custom(|_| {
            use axum::response::IntoResponse;
            ApiError::internal().into_response()
        }))
        // Outside the panic catcher, so that a request answered 500 after a panic is logged too.
        .layer(axum::middleware::from_fn(access_log::log))
        .layer(TraceLayer::new_for_http())
        .layer(PropagateRequestIdLayer::new(request_id.clone()))
        .layer(SetRequestIdLayer::new(
            request_id,
            request_id::SequentialIds::default(),
        ))
        .with_state(state)
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
        server::ConnectionLimits::default(),
        shutdown,
    )
    .await
}

/// [`serve`] with the given connection limits.
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    engine: Arc<Engine>,
    keys: ApiKeys,
    limits: server::ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let state = Arc::new(AppState {
        engine,
        keys,
        metrics: metrics::handle(),
    });
    server::serve_connections(listener, router(state), limits, shutdown).await
}
