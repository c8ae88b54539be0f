//! Per-metric outcomes: the duels whose outcome under a conversion metric is open or decided
//! (`metric_duels`), and each metric's win and tie counts. Written only by the experiment's owner,
//! in the transaction that applies conversions or closes windows
//! (`engine::apply::metric_outcomes`).

use sqlx::{PgPool, Postgres, Row, Transaction};
use uuid::Uuid;

use super::upsert::{self as count_upsert, Key};
use crate::store::StoreError;

/// A duel's outcome under one metric, to open or decide.
#[derive(Debug, Clone)]
pub struct MetricDuel {
    pub metric: String,
    pub duel: Uuid,
    pub first: i32,
    pub second: i32,
    pub closes_at: chrono::DateTime<chrono::Utc>,
}

/// Opens the duels' metric outcomes (those already open or decided are left as they are).
pub async fn open(
    tx: &mut Transaction<'_, Postgres>,
    experiment: i64,
    duels: &[MetricDuel],
) -> Result<(), StoreError> {
    if duels.is_empty() {
        return Ok(());
    }
    let metric: Vec<&str> = duels.iter().map(|d| d.metric.as_str()).collect();
    let duel: Vec<Uuid> = duels.iter().map(|d| d.duel).collect();
    let first: Vec<i32> = duels.iter().map(|d| d.first).collect();
    let second: Vec<i32> = duels.iter().map(|d| d.second).collect();
    let closes: Vec<chrono::DateTime<chrono::Utc>> = duels.iter().map(|d| d.closes_at).collect();
    sqlx::query(
        "INSERT INTO metric_duels (experiment_id, metric, duel_id, first_idx, second_idx, closes_at)
         SELECT $1, * FROM UNNEST($2::text[], $3::uuid[], $4::int[], $5::int[], $6::timestamptz[])
         ON CONFLICT (experiment_id, metric, duel_id) DO NOTHING",
    )
    .bind(experiment)
    .bind(&metric)
    .bind(&duel)
    .bind(&first)
    .bind(&second)
    .bind(&closes)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Decides a duel's outcome under a metric (1: first won, -1: second won, 0: tie, `None`:
/// nothing counted); `false` when it was decided already (the transaction must then be rolled
/// back: another application decided it first).
pub async fn decide(
    tx: &mut Transaction<'_, Postgres>,
    experiment: i64,
    metric: &str,
    duel: Uuid,
    result: Option<i16>,
) -> Result<bool, StoreError> {
    let n = sqlx::query(
        "UPDATE metric_duels SET result = $4, decided_at = now()
         WHERE experiment_id = $1 AND metric = $2 AND duel_id = $3 AND decided_at IS NULL",
    )
    .bind(experiment)
    .bind(metric)
    .bind(duel)
    .bind(result)
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(n == 1)
}

/// Of `duels` (metric, duel id), those whose outcome is decided already.
pub async fn decided(
    pool: &PgPool,
    experiment: i64,
    duels: &[(String, Uuid)],
) -> Result<Vec<(String, Uuid)>, StoreError> {
    if duels.is_empty() {
        return Ok(Vec::new());
    }
    let metric: Vec<&str> = duels.iter().map(|d| d.0.as_str()).collect();
    let duel: Vec<Uuid> = duels.iter().map(|d| d.1).collect();
    let rows = sqlx::query(
        "SELECT m.metric, m.duel_id FROM metric_duels m
         JOIN UNNEST($2::text[], $3::uuid[]) AS t(metric, duel_id)
           ON m.metric = t.metric AND m.duel_id = t.duel_id
         WHERE m.experiment_id = $1 AND m.decided_at IS NOT NULL",
    )
    .bind(experiment)
    .bind(&metric)
    .bind(&duel)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("metric")?, r.try_get("duel_id")?)))
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Into::into)
}

/// Open metric outcomes whose window closed before `now`, oldest first, at most `limit`.
pub async fn due(
    pool: &PgPool,
    experiment: i64,
    now: chrono::DateTime<chrono::Utc>,
    limit: i64,
) -> Result<Vec<MetricDuel>, StoreError> {
    let rows = sqlx::query(
        "SELECT metric, duel_id, first_idx, second_idx, closes_at FROM metric_duels
         WHERE experiment_id = $1 AND decided_at IS NULL AND closes_at <= $2
         ORDER BY closes_at, metric, duel_id LIMIT $3",
    )
    .bind(experiment)
    .bind(now)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(MetricDuel {
                metric: r.try_get("metric")?,
                duel: r.try_get("duel_id")?,
                first: r.try_get("first_idx")?,
                second: r.try_get("second_idx")?,
                closes_at: r.try_get("closes_at")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Into::into)
}

/// Adds win counts `(winner, loser, n)` and tie counts `(a, b, n)`, a <= b, to one metric.
pub async fn add(
    tx: &mut Transaction<'_, Postgres>,
    experiment: i64,
    metric: &str,
    wins: &[(i32, i32, i64)],
    ties: &[(i32, i32, i64)],
) -> Result<(), StoreError> {
    let key = || Key::Metric(metric);
    count_upsert::add(
        tx,
        &count_upsert::METRIC_WIN_COUNTS,
        experiment,
        key(),
        wins,
    )
    .await?;
    count_upsert::add(
        tx,
        &count_upsert::METRIC_TIE_COUNTS,
        experiment,
        key(),
        ties,
    )
    .await?;
    Ok(())
}

/// One metric's counts as stored: `(winner, loser, wins)` and `(a, b, ties)`.
#[derive(Debug, Clone, Default)]
pub struct MetricCounts {
    pub wins: Vec<(i32, i32, i64)>,
    pub ties: Vec<(i32, i32, i64)>,
}
