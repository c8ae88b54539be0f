//! `POST /v1/clicks`: the clicks on an interleaving, credited and recorded as the duel's outcome
//! (answered once durable, exactly once per duel).
//!
//! Clicks may also come straight from the browser (docs/interleaving.md, "Clicks from the
//! browser"): for an experiment with `browser_clicks`, a request with no API key is accepted on
//! the strength of its signed interleaving token, from a page whose `Origin` the experiment lists
//! (or with no `Origin`, as from a server), and the body may be `text/plain` (what
//! `navigator.sendBeacon` sends for a string). `OPTIONS /v1/clicks` answers CORS preflights for
//! the origins some experiment lists; the POST answer allows its origin when the token's
//! experiment lists it.

use axum::extract::{FromRequest, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

use crate::api::ErrorCode;
use crate::api::{ClickRecord, ClicksInput};

use crate::http::AppState;
use crate::http::stack::auth::{self, ApiKeys, Scope};
use crate::http::stack::error::ApiError;
use crate::http::stack::json::JsonOrText;
use crate::http::views::answer;

/// Bytes of a usual answer: a duel's outcome and two rankers' credit.
const ANSWER_BYTES: usize = 256;

/// How long a browser may reuse a preflight's answer: two hours, Chromium's cap. Turning an
/// origin off takes effect at once anyway: the POST itself is refused.
pub const PREFLIGHT_MAX_AGE_SECS: u32 = 7200;

pub async fn create(State(app): State<Arc<AppState>>, req: Request) -> Response {
    let origin = req
        .headers()
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let (result, listed) = record(&app, req, origin.as_deref()).await;
    let ok = result.is_ok();
    let mut response = match result {
        Ok(record) => answer::json(&record, ANSWER_BYTES),
        Err(e) => e.into_response(),
    };
    // A success is readable by the pages the token's experiment lists; an error also by any
    // page some experiment lists, so that a page sees why it was refused (an error tells nothing
    // the page did not send).
    let allowed = origin.filter(|o| listed || (!ok && app.engine.origin_listed(o)));
    cors_headers(response.headers_mut(), allowed.as_deref());
    response
}

/// Records the clicks if the request may post them. Also says whether the token's experiment
/// lists the request's origin.
async fn record(
    app: &AppState,
    req: Request,
    origin: Option<&str>,
) -> (Result<ClickRecord, ApiError>, bool) {
    // Without a key (on a server that has keys) only the token can make the request acceptable.
    let open = app.keys.is_open(app.engine.key_ring());
    let token_only = !open && !ApiKeys::presented(req.headers());
    if !token_only {
        let checked = auth::caller(req.extensions(), req.headers(), app)
            .and_then(|c| c.require(Scope::Ingest));
        if let Err(e) = checked {
            return (Err(e), false);
        }
    }
    let input = match JsonOrText::<ClicksInput>::from_request(req, &()).await {
        Ok(JsonOrText(input)) => input,
        Err(_) if token_only => return (Err(key_needed()), false),
        Err(e) => return (Err(e), false),
    };
    // The token's experiment decides a keyless request, and which origin may read the answer.
    // A request from a server (a key, or an open server, and no `Origin`) needs neither, so it
    // is not looked up here: `record_clicks` verifies the token once, as before browser clicks.
    let experiment = if token_only || origin.is_some() {
        match app.engine.click_experiment(&input.interleaving_token).await {
            Ok(experiment) => experiment,
            Err(e) => return (Err(e.into()), false),
        }
    } else {
        None
    };
    let browser = experiment
        .as_ref()
        .is_some_and(|s| s.browser_click_origins.is_some());
    let listed = origin.is_some_and(|o| experiment.as_ref().is_some_and(|s| s.lists_origin(o)));
    if token_only && !browser {
        return (Err(key_needed()), false);
    }
    if (token_only || open) && browser && origin.is_some() && !listed {
        return (
            Err(ApiError::new(
                ErrorCode::OriginNotAllowed,
                format!(
                    "this experiment's browser_clicks does not list origin {}; clicks from a \
                     page are accepted only from the origins it lists",
                    origin.unwrap_or_default()
                ),
            )),
            false,
        );
    }
    match app.engine.record_clicks(input).await {
        Ok(record) => (Ok(record), listed),
        Err(e) => (Err(e.into()), listed),
    }
}

fn key_needed() -> ApiError {
    ApiError::new(
        ErrorCode::Unauthorized,
        "an API key is required: send `Authorization: Bearer KEY` (clicks without a key are \
         accepted only with a valid interleaving token of an experiment with browser_clicks)",
    )
}

/// `OPTIONS /v1/clicks`: the CORS preflight of a page about to post clicks (a JSON content type
/// is not one a page may send cross-origin without asking). An origin that some live experiment
/// lists is allowed to POST with `content-type`; any other is refused with 403
/// `origin_not_allowed` and no CORS headers, so the browser stops there and the refusal, with its
/// reason, shows in the page's network log and in the server's access log and metrics. A request
/// with no `Origin` is not a preflight: it is told the allowed methods.
pub async fn preflight(State(app): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    let mut response = match origin {
        None => (
            StatusCode::NO_CONTENT,
            [(header::ALLOW, HeaderValue::from_static("POST, OPTIONS"))],
        )
            .into_response(),
        Some(o) if app.engine.origin_listed(o) => {
            let mut response = StatusCode::NO_CONTENT.into_response();
            let h = response.headers_mut();
            h.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static("POST"),
            );
            h.insert(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                HeaderValue::from_static("content-type"),
            );
            h.insert(
                header::ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from(PREFLIGHT_MAX_AGE_SECS),
            );
            response
        }
        Some(o) => ApiError::new(
            ErrorCode::OriginNotAllowed,
            format!("no experiment lists origin {o} in its browser_clicks"),
        )
        .into_response(),
    };
    let allowed = origin.filter(|o| app.engine.origin_listed(o));
    cors_headers(response.headers_mut(), allowed);
    response
}

/// `Access-Control-Allow-Origin` for `allowed`, and `Vary: Origin` always (the answer depends on
/// it, so a cache must not give one page's answer to another).
fn cors_headers(headers: &mut HeaderMap, allowed: Option<&str>) {
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
    if let Some(value) = allowed.and_then(|o| HeaderValue::from_str(o).ok()) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, value);
    }
}
