//! The bandit state pinned for one window of an experiment (see `engine::requests::unit_duels`):
//! written once per experiment and window by the first replica that needs it, read by the others.

use sqlx::PgPool;

use super::StoreError;

/// The state pinned for `(experiment, epoch)`: the stored one if some replica pinned it already,
/// else `state` (at `version`), which this call pins. Replicas that race here all get the first
/// one written. Pinning also drops the experiment's windows before the previous one.
pub async fn pin(
    pool: &PgPool,
    experiment: i64,
    epoch: i64,
    version: i64,
    state: impl FnOnce() -> serde_json::Value,
) -> Result<(i64, serde_json::Value), StoreError> {
    if let Some(found) = get(pool, experiment, epoch).await? {
        return Ok(found);
    }
    let mut tx = pool.begin().await?;
    sqlx::query(
        "INSERT INTO unit_window_states (experiment_id, epoch, state_version, state)
         VALUES ($1, $2, $3, $4) ON CONFLICT (experiment_id, epoch) DO NOTHING",
    )
    .bind(experiment)
    .bind(epoch)
    .bind(version)
    .bind(state())
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM unit_window_states WHERE experiment_id = $1 AND epoch < $2 - 1")
        .bind(experiment)
        .bind(epoch)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    // A new statement sees the row of whichever replica won the race.
    get(pool, experiment, epoch)
        .await?
        .ok_or_else(|| StoreError::from(sqlx::Error::RowNotFound))
}

async fn get(
    pool: &PgPool,
    experiment: i64,
    epoch: i64,
) -> Result<Option<(i64, serde_json::Value)>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT state_version, state FROM unit_window_states
         WHERE experiment_id = $1 AND epoch = $2",
    )
    .bind(experiment)
    .bind(epoch)
    .fetch_optional(pool)
    .await?)
}
