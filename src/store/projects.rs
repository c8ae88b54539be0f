//! Projects: every experiment and every key but a global one belongs to one.

use sqlx::{PgPool, Row};

use super::StoreError;

/// The project an existing database's experiments moved to, and new ones go to by default.
pub const DEFAULT_PROJECT: i64 = 1;

#[derive(Debug, Clone)]
pub struct ProjectRow {
    pub id: i64,
    pub name: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

fn project_from_row(row: &sqlx::postgres::PgRow) -> Result<ProjectRow, sqlx::Error> {
    Ok(ProjectRow {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        created_at: row.try_get("created_at")?,
    })
}

/// Creates a project; `None` when the name is taken.
pub async fn insert(pool: &PgPool, name: &str) -> Result<Option<ProjectRow>, StoreError> {
    let row = sqlx::query(
        "INSERT INTO projects (name) VALUES ($1) ON CONFLICT (name) DO NOTHING
         RETURNING id, name, created_at",
    )
    .bind(name)
    .fetch_optional(pool)
    .await?;
    Ok(row.as_ref().map(project_from_row).transpose()?)
}

/// Every project, or only `only` when given, in id order.
pub async fn list(pool: &PgPool, only: Option<i64>) -> Result<Vec<ProjectRow>, StoreError> {
    let rows = sqlx::query(
        "SELECT id, name, created_at FROM projects
         WHERE $1::bigint IS NULL OR id = $1 ORDER BY id",
    )
    .bind(only)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .iter()
        .map(project_from_row)
        .collect::<Result<_, _>>()?)
}

/// The project of this name.
pub async fn by_name(pool: &PgPool, name: &str) -> Result<Option<ProjectRow>, StoreError> {
    let row = sqlx::query("SELECT id, name, created_at FROM projects WHERE name = $1")
        .bind(name)
        .fetch_optional(pool)
        .await?;
    Ok(row.as_ref().map(project_from_row).transpose()?)
}
