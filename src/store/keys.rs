//! API keys as stored: a SHA-256 hash, the project (none for a global key), the scope, the
//! expiry and the revocation. The key itself is never stored.

use sqlx::{PgPool, Row};

use super::StoreError;

/// A key as listed (everything but its hash).
#[derive(Debug, Clone)]
pub struct KeyRow {
    pub id: i64,
    pub project: Option<String>,
    pub scope: String,
    pub name: String,
    pub prefix: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
    pub revoked_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// What a replica needs to check a presented key: the live keys by hash.
#[derive(Debug, Clone)]
pub struct ActiveKey {
    pub id: i64,
    pub hash: Vec<u8>,
    pub project_id: Option<i64>,
    pub scope: String,
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// What creating a key writes.
pub struct NewKey<'a> {
    pub project_id: Option<i64>,
    pub scope: &'a str,
    pub name: &'a str,
    pub prefix: &'a str,
    pub hash: &'a [u8],
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
}

const KEY_COLUMNS: &str = "k.id, p.name AS project, k.scope, k.name, k.prefix, \
     k.created_at, k.expires_at, k.revoked_at";

fn key_from_row(row: &sqlx::postgres::PgRow) -> Result<KeyRow, sqlx::Error> {
    Ok(KeyRow {
        id: row.try_get("id")?,
        project: row.try_get("project")?,
        scope: row.try_get("scope")?,
        name: row.try_get("name")?,
        prefix: row.try_get("prefix")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        revoked_at: row.try_get("revoked_at")?,
    })
}

pub async fn insert(pool: &PgPool, new: NewKey<'_>) -> Result<KeyRow, StoreError> {
    let row = sqlx::query(&format!(
        "WITH k AS (
             INSERT INTO api_keys (project_id, scope, name, prefix, hash, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING *)
         SELECT {KEY_COLUMNS} FROM k LEFT JOIN projects p ON p.id = k.project_id"
    ))
    .bind(new.project_id)
    .bind(new.scope)
    .bind(new.name)
    .bind(new.prefix)
    .bind(new.hash)
    .bind(new.expires_at)
    .fetch_one(pool)
    .await?;
    Ok(key_from_row(&row)?)
}

/// Keys of project `only` (every key, global ones included, when `None`), revoked ones too,
/// in id order.
pub async fn list(pool: &PgPool, only: Option<i64>) -> Result<Vec<KeyRow>, StoreError> {
    let rows = sqlx::query(&format!(
        "SELECT {KEY_COLUMNS} FROM api_keys k LEFT JOIN projects p ON p.id = k.project_id
         WHERE $1::bigint IS NULL OR k.project_id = $1 ORDER BY k.id"
    ))
    .bind(only)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(key_from_row).collect::<Result<_, _>>()?)
}

/// Revokes key `id` if it belongs to project `only` (any key when `None`); returns the key
/// as it now stands, or `None` when there is no such key within reach. Revoking twice keeps
/// the first revocation's time.
pub async fn revoke(
    pool: &PgPool,
    id: i64,
    only: Option<i64>,
) -> Result<Option<KeyRow>, StoreError> {
    let row = sqlx::query(&format!(
        "WITH k AS (
             UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
             WHERE id = $1 AND ($2::bigint IS NULL OR project_id = $2) RETURNING *)
         SELECT {KEY_COLUMNS} FROM k LEFT JOIN projects p ON p.id = k.project_id"
    ))
    .bind(id)
    .bind(only)
    .fetch_optional(pool)
    .await?;
    Ok(row.as_ref().map(key_from_row).transpose()?)
}

/// Every key neither revoked nor expired, and whether any key was ever stored (keys are never
/// deleted, so once true this stays true).
pub async fn active(pool: &PgPool) -> Result<(Vec<ActiveKey>, bool), StoreError> {
    let rows = sqlx::query(
        "SELECT id, hash, project_id, scope, expires_at FROM api_keys
         WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())",
    )
    .fetch_all(pool)
    .await?;
    let keys = rows
        .iter()
        .map(|row| {
            Ok(ActiveKey {
                id: row.try_get("id")?,
                hash: row.try_get("hash")?,
                project_id: row.try_get("project_id")?,
                scope: row.try_get("scope")?,
                expires_at: row.try_get("expires_at")?,
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    let any = !keys.is_empty()
        || sqlx::query_scalar::<_, bool>("SELECT EXISTS (SELECT 1 FROM api_keys)")
            .fetch_one(pool)
            .await?;
    Ok((keys, any))
}
