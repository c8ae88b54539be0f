//! `/v1/keys`: create, list and revoke the API keys stored in Postgres (admin keys; a project's
//! admin key reaches its project's keys only). The key itself is in the creation's answer only.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::api::CreateKey;
use crate::http::stack::auth::AdminAccess;
use crate::http::stack::error::ApiError;
use crate::http::stack::json::{Json, Path};

pub async fn create(
    AdminAccess(engine): AdminAccess,
    Json(req): Json<CreateKey>,
) -> Result<Response, ApiError> {
    let created = engine.create_key(req).await?;
    Ok((StatusCode::CREATED, axum::Json(created)).into_response())
}

pub async fn list(AdminAccess(engine): AdminAccess) -> Result<Response, ApiError> {
    let keys = engine.list_keys().await?;
    Ok(axum::Json(json!({ "keys": keys })).into_response())
}

pub async fn revoke(
    AdminAccess(engine): AdminAccess,
    Path(id): Path<i64>,
) -> Result<Response, ApiError> {
    Ok(axum::Json(engine.revoke_key(id).await?).into_response())
}
