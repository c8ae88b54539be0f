//! Per-experiment counters for the Prometheus series, read in one query.

use sqlx::PgPool;

use super::StoreError;

/// The counters of one running experiment that only the database holds (its applied counts are
/// the snapshot's: the owner's may be ahead of the stored row until its next checkpoint).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ExperimentCounts {
    pub id: i64,
    /// As flushed by every replica.
    pub duels_issued: i64,
}

/// The running experiments with the lowest ids, at most `limit`, and how many run in all.
pub async fn running(
    pool: &PgPool,
    limit: i64,
) -> Result<(Vec<ExperimentCounts>, i64), StoreError> {
    let rows = sqlx::query_as(
        "SELECT e.id,
                COALESCE((SELECT SUM(issued) FROM duel_counters d WHERE d.experiment_id = e.id), 0)::BIGINT
                    AS duels_issued
         FROM experiments e
         WHERE e.deleted_at IS NULL AND e.status = 'running'
         ORDER BY e.id LIMIT $1",
    )
    .bind(limit)
    .fetch_all(pool)
    .await?;
    let total: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM experiments WHERE deleted_at IS NULL AND status = 'running'",
    )
    .fetch_one(pool)
    .await?;
    Ok((rows, total))
}
