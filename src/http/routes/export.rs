//! `GET /v1/experiments/{id}/outcomes` and `/conversions`: every recorded row of an experiment,
//! oldest first in the order its owner applies them, streamed as NDJSON or CSV a page at a time.
//! The next page's URL is in a `Link: <...>; rel="next"` header (absent on the last page), and
//! `Joust-Cursor` names the position after the page, where a later export picks up rows
//! recorded since.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use serde::Deserialize;

use crate::api::{DEFAULT_EXPORT_LIMIT, ErrorCode, ExportFormat, MAX_EXPORT_LIMIT};
use crate::engine::{Engine, ExportLabels, export_kind_name};
use crate::http::stack::auth::ReadAccess;
use crate::http::stack::error::ApiError;
use crate::http::stack::json::{Path, Query};
use crate::store::export::{ExportKind, ExportPosition};

/// The header that carries the position after the page.
pub const CURSOR_HEADER: &str = "joust-cursor";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportQuery {
    #[serde(default)]
    after: Option<String>,
    #[serde(default)]
    limit: Option<i64>,
    #[serde(default)]
    format: Option<String>,
}

pub async fn outcomes(
    ReadAccess(engine): ReadAccess,
    Path(id): Path<i64>,
    Query(q): Query<ExportQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    export(&engine, id, ExportKind::Outcomes, q, &headers).await
}

pub async fn conversions(
    ReadAccess(engine): ReadAccess,
    Path(id): Path<i64>,
    Query(q): Query<ExportQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    export(&engine, id, ExportKind::Conversions, q, &headers).await
}

async fn export(
    engine: &Engine,
    id: i64,
    kind: ExportKind,
    q: ExportQuery,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    // Every parameter is checked before anything is read.
    let format = match q.format.as_deref() {
        Some(name) => ExportFormat::from_name(name).ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidQuery,
                format!(
                    "format must be one of {}; got {name:?}",
                    ExportFormat::NAMES.join(", ")
                ),
            )
        })?,
        None => headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .map_or(ExportFormat::Ndjson, ExportFormat::from_accept),
    };
    let limit = q.limit.unwrap_or(DEFAULT_EXPORT_LIMIT);
    if !(1..=MAX_EXPORT_LIMIT).contains(&limit) {
        return Err(ApiError::new(
            ErrorCode::InvalidQuery,
            format!("limit must be in 1..={MAX_EXPORT_LIMIT}; got {limit}"),
        ));
    }
    let after = match q.after.as_deref() {
        Some(text) => engine
            .read_export_cursor(id, kind, text)
            .map_err(|message| ApiError::new(ErrorCode::InvalidCursor, message))?,
        None => ExportPosition::START,
    };
    let page = engine.export(id, kind, format, after, limit).await?;

    let mut response = Response::new(body(kind, format, page.chunks));
    *response.status_mut() = StatusCode::OK;
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    let resume = engine.export_cursor_text(&page.resume);
    h.insert(CURSOR_HEADER, header_value(&resume)?);
    if let Some(next) = &page.next {
        // A path-absolute reference, resolved against the request's URL: the same through any
        // proxy or host name the client used.
        let mut url = format!(
            "/v1/experiments/{id}/{}?after={}&limit={limit}",
            export_kind_name(kind),
            engine.export_cursor_text(next)
        );
        if q.format.is_some() {
            url.push_str(&format!("&format={}", format.name()));
        }
        h.insert(
            header::LINK,
            header_value(&format!("<{url}>; rel=\"next\""))?,
        );
    }
    Ok(response)
}

/// Cursors are URL-safe base64, always a valid header value.
fn header_value(text: &str) -> Result<HeaderValue, ApiError> {
    HeaderValue::from_str(text).map_err(|_| ApiError::internal())
}

/// The page's rows as a streamed body: the CSV header, then each chunk as the page's thread
/// formatted it. An error from the database ends the body early, which the client sees as a
/// broken transfer (its rows so far are still good: it reads the page again and skips them).
fn body(
    kind: ExportKind,
    format: ExportFormat,
    chunks: tokio::sync::mpsc::Receiver<Result<(Bytes, usize), crate::engine::EngineError>>,
) -> Body {
    let header = ExportLabels::header(kind, format);
    let first = (!header.is_empty())
        .then(|| Ok::<_, std::io::Error>(Bytes::from_static(header.as_bytes())));
    let chunks = futures_util::stream::unfold(chunks, |mut chunks| async move {
        let item = match chunks.recv().await? {
            Ok((bytes, _rows)) => Ok(bytes),
            Err(e) => {
                tracing::warn!(error = %e, "an export page ended early");
                Err(std::io::Error::other(e.to_string()))
            }
        };
        Some((item, chunks))
    });
    // Fused: the compression layer polls the body once more after its end.
    Body::from_stream(futures_util::stream::iter(first).chain(chunks).fuse())
}

use futures_util::StreamExt as _;
