//! Service-wide settings shared by every replica on one database.

use sqlx::PgPool;

use super::StoreError;

/// Returns the value stored under `key`, storing `make()` first if there is none. Replicas that
/// race here all end up with the first value written.
pub async fn get_or_init(
    pool: &PgPool,
    key: &str,
    make: impl FnOnce() -> String,
) -> Result<String, StoreError> {
    sqlx::query("INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING")
        .bind(key)
        .bind(make())
        .execute(pool)
        .await?;
    let value = sqlx::query_scalar("SELECT value FROM settings WHERE key = $1")
        .bind(key)
        .fetch_one(pool)
        .await?;
    Ok(value)
}
