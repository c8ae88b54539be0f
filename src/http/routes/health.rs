//! `/healthz` (the process is up), `/readyz` (database reachable, migrations applied) and
//! `/metrics` (Prometheus text format, behind a key with `--metrics-require-key`).

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::sync::Arc;

use crate::api::ErrorCode;
use crate::engine::Reach;
use crate::http::AppState;
use crate::http::stack::auth::{self, Scope};
use crate::http::stack::error::ApiError;

pub async fn healthz() -> Response {
    axum::Json(json!({ "status": "ok" })).into_response()
}

pub async fn readyz(State(app): State<Arc<AppState>>) -> Result<Response, ApiError> {
    match app.engine.ready().await {
        Ok(()) => Ok(axum::Json(json!({ "status": "ready" })).into_response()),
        Err(why) => {
            tracing::warn!(detail = %why.detail, "not ready: {}", why.reason);
            Err(ApiError::new(ErrorCode::NotReady, why.reason))
        }
    }
}

/// With `--metrics-require-key`, only a global read or admin key reads the metrics: they hold
/// every project's experiments.
pub async fn metrics(
    State(app): State<Arc<AppState>>,
    parts: axum::http::request::Parts,
) -> Response {
    if app.keys.metrics_need_key() {
        let allowed = auth::caller(&parts.extensions, &parts.headers, &app).and_then(|c| {
            c.require(Scope::Read)?;
            if c.reach != Reach::All {
                return Err(ApiError::new(
                    ErrorCode::Forbidden,
                    "the metrics cover every project: they need a global read or admin key",
                ));
            }
            Ok(())
        });
        if let Err(e) = allowed {
            return e.into_response();
        }
    }
    let mut text = app.metrics.render();
    // Without the database the request metrics still answer; the experiments' series are left
    // out rather than reported stale.
    match app.engine.running_counters().await {
        Ok((experiments, running)) => text.push_str(
            &crate::http::stack::telemetry::experiment_series(&experiments, running),
        ),
        Err(e) => tracing::warn!(error = %e, "per-experiment metrics left out"),
    }
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4",
        )],
        text,
    )
        .into_response()
}
