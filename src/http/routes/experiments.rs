//! `/v1/experiments`: create, list, read, change status, delete, add and retire rankers.

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;

use crate::api::ErrorCode;
use crate::api::{CreateExperiment, PatchExperiment};
use crate::engine::{Snapshot, offload};

use crate::http::stack::auth::{AdminAccess, ReadAccess};
use crate::http::stack::error::ApiError;
use crate::http::stack::etag::ETag;
use crate::http::stack::json::{Json, Path, Query};
use crate::http::views::detail_body::DetailBody;
use crate::http::views::experiment;

/// A JSON body already serialised.
fn json_response(body: Vec<u8>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn json_bytes(value: &serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("a JSON value serialises")
}

/// The detail view of an experiment, serialised once per version ([`DetailBody`]). Its champion
/// report and per-ranker counts grow with the number of rankers, so for a large experiment they
/// are built and serialised off the runtime.
async fn detail_json(snap: Arc<Snapshot>, duels_issued: i64) -> Response {
    let k = snap.names.len();
    json_response(
        offload(k, move || {
            snap.rendering(|| DetailBody::render(&snap))
                .with_duels(duels_issued)
        })
        .await,
    )
}

pub async fn create(
    AdminAccess(engine): AdminAccess,
    Json(req): Json<CreateExperiment>,
) -> Result<Response, ApiError> {
    let snap = engine.create_experiment(req).await?;
    Ok((StatusCode::CREATED, detail_json(snap, 0).await).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    #[serde(default)]
    after: Option<i64>,
    #[serde(default)]
    limit: Option<i64>,
}

pub const MAX_PAGE: i64 = 200;

pub async fn list(
    ReadAccess(engine): ReadAccess,
    Query(q): Query<ListQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let limit = q.limit.unwrap_or(50);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ApiError::new(
            ErrorCode::InvalidQuery,
            format!("limit must be in 1..={MAX_PAGE}"),
        ));
    }
    // One more than asked tells whether another page follows.
    let mut page = engine.list(q.after.unwrap_or(0), limit + 1).await?;
    let more = page.len() as i64 > limit;
    page.truncate(limit as usize);
    let next_after = if more {
        page.last().map(|s| s.id)
    } else {
        None
    };
    // The page is determined by its experiments' ids and versions (each named with its write
    // mark, as a version can be written twice) and whether more follow.
    let tag = ETag::hashed(
        page.iter()
            .flat_map(|s| [s.id, s.version, s.write_mark()])
            .chain([next_after.unwrap_or(-1)]),
    );
    Ok(tag.respond(&headers, || {
        let items: Vec<_> = page.iter().map(|s| experiment::summary(s)).collect();
        axum::Json(json!({ "experiments": items, "next_after": next_after })).into_response()
    }))
}

pub async fn get(
    ReadAccess(engine): ReadAccess,
    Path(id): Path<i64>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let snap = engine.applied_snapshot(id).await?;
    let issued = engine.duels_issued(id).await?;
    // Duels issued change without a new version (they are counted in memory), so they are part
    // of the tag.
    let tag = ETag::of(format_args!("e{id}-{}-d{issued}", snap.version_tag()));
    if tag.matches(&headers) {
        return Ok(tag.tagged(StatusCode::NOT_MODIFIED.into_response()));
    }
    Ok(tag.tagged(detail_json(snap, issued).await))
}

pub async fn matrix(
    ReadAccess(engine): ReadAccess,
    Path(id): Path<i64>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let snap = engine.applied_snapshot(id).await?;
    let tag = ETag::of(format_args!("m{id}-{}", snap.version_tag()));
    if tag.matches(&headers) {
        return Ok(tag.tagged(StatusCode::NOT_MODIFIED.into_response()));
    }
    let k = snap.names.len();
    let body = offload(k, move || experiment::matrix(&snap).map(|m| json_bytes(&m)))
        .await
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::MatrixTooLarge,
                format!(
                    "the matrix endpoint returns experiments of at most {} active rankers",
                    experiment::MAX_MATRIX_RANKERS
                ),
            )
        })?;
    Ok(tag.tagged(json_response(body)))
}

pub async fn patch(
    AdminAccess(engine): AdminAccess,
    Path(id): Path<i64>,
    Json(req): Json<PatchExperiment>,
) -> Result<Response, ApiError> {
    let snap = engine.patch_experiment(id, req).await?;
    let issued = engine.duels_issued(id).await?;
    Ok(detail_json(snap, issued).await.into_response())
}

pub async fn delete(
    AdminAccess(engine): AdminAccess,
    Path(id): Path<i64>,
) -> Result<Response, ApiError> {
    engine.delete_experiment(id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddRanker {
    name: String,
}

pub async fn add_ranker(
    AdminAccess(engine): AdminAccess,
    Path(id): Path<i64>,
    Json(req): Json<AddRanker>,
) -> Result<Response, ApiError> {
    let snap = engine.add_ranker(id, &req.name).await?;
    Ok((StatusCode::CREATED, ranker_json(&snap, req.name, true)).into_response())
}

pub async fn retire_ranker(
    AdminAccess(engine): AdminAccess,
    Path((id, name)): Path<(i64, String)>,
) -> Result<Response, ApiError> {
    let snap = engine.retire_ranker(id, &name).await?;
    Ok(ranker_json(&snap, name, false).into_response())
}

/// A ranker as the rankers endpoints answer it.
fn ranker_json(snap: &Snapshot, name: String, active: bool) -> axum::Json<serde_json::Value> {
    let index = snap.by_name[&name];
    axum::Json(json!({ "name": name, "index": index, "active": active }))
}
