//! `/v1/projects`: create a project (a global admin key) and list the projects a key reaches.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::api::CreateProject;
use crate::http::stack::auth::{AdminAccess, ReadAccess};
use crate::http::stack::error::ApiError;
use crate::http::stack::json::Json;

pub async fn create(
    AdminAccess(engine): AdminAccess,
    Json(req): Json<CreateProject>,
) -> Result<Response, ApiError> {
    let project = engine.create_project(&req.name).await?;
    Ok((StatusCode::CREATED, axum::Json(project)).into_response())
}

pub async fn list(ReadAccess(engine): ReadAccess) -> Result<Response, ApiError> {
    let projects = engine.list_projects().await?;
    Ok(axum::Json(json!({ "projects": projects })).into_response())
}
