//! The dashboard under `/ui/`: static pages whose scripts read the public JSON API from the
//! browser (so whatever a page shows, a user's own dashboard can show too). Every asset is
//! embedded in the binary; nothing is fetched from elsewhere.
//!
//! Pages are sent with a Content-Security-Policy that allows scripts, styles and requests from
//! this origin only: no inline script can run, so an untrusted experiment or ranker name that
//! slipped into the page as markup could still execute nothing (the scripts only ever insert
//! names as text).

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use std::sync::Arc;

use crate::http::AppState;
use crate::http::stack::error::ApiError;
use crate::http::stack::json::Path;

/// Scripts, styles, images and requests from this origin only; nothing inline; no framing.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
    frame-ancestors 'none'";

/// One embedded file: its name under `/ui/assets/`, content type and bytes.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $type:expr) => {
        Asset {
            name: $name,
            content_type: $type,
            body: include_bytes!(concat!("assets/", $name)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

static ASSETS: &[Asset] = &[
    asset!("common.js", JS),
    asset!("list.js", JS),
    asset!("experiment.js", JS),
    asset!("charts.js", JS),
    asset!("heatmap.js", JS),
    asset!("metrics.js", JS),
    asset!("segments.js", JS),
    asset!("style.css", CSS),
    asset!("uPlot.iife.min.js", JS),
    asset!("uPlot.min.css", CSS),
    asset!("uPlot.LICENSE", "text/plain; charset=utf-8"),
];

static LIST_PAGE: &[u8] = include_bytes!("assets/list.html");
static EXPERIMENT_PAGE: &[u8] = include_bytes!("assets/experiment.html");

pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route("/ui/", get(|| async { page(LIST_PAGE) }))
        .route("/ui/experiments/{id}", get(experiment_page))
        .route("/ui/assets/{name}", get(asset))
}

async fn experiment_page(Path(_id): Path<i64>) -> Response {
    page(EXPERIMENT_PAGE)
}

fn page(body: &'static [u8]) -> Response {
    let mut r = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response();
    secure(&mut r);
    r
}

async fn asset(Path(name): Path<String>) -> Result<Response, ApiError> {
    let a = ASSETS
        .iter()
        .find(|a| a.name == name)
        .ok_or_else(|| ApiError::not_found("no such dashboard asset"))?;
    let mut r = (
        StatusCode::OK,
        [(header::CONTENT_TYPE, a.content_type)],
        a.body,
    )
        .into_response();
    // Assets change only with the binary; an hour of caching keeps reloads cheap.
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    secure(&mut r);
    Ok(r)
}

fn secure(r: &mut Response) {
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
}
