//! An experiment's history points: written by the outcome writer inside its transaction, read
//! back thinned evenly so that a long experiment is still one small response.

use sqlx::{PgConnection, Postgres, Transaction};

use super::StoreError;

/// One point of an experiment's history.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct HistoryPoint {
    pub at: chrono::DateTime<chrono::Utc>,
    pub version: i64,
    pub outcomes_applied: i64,
    pub ties_applied: i64,
    pub duels_issued: i64,
    /// The champion's ranker index, if there was one.
    pub champion: Option<i32>,
    pub basis: String,
    pub confident: bool,
    /// Wins and losses so far, by ranker index (rankers added later are missing at the end).
    pub wins: Vec<i64>,
    pub losses: Vec<i64>,
}

/// Records a point at the transaction's time unless the experiment already has one less than
/// `interval_secs` old (another group or replica wrote it); returns whether it was written.
/// `duels_issued` is ignored: the point takes the duel counts flushed so far.
pub async fn record(
    tx: &mut Transaction<'_, Postgres>,
    experiment: i64,
    interval_secs: f64,
    point: &HistoryPoint,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "INSERT INTO history_points (experiment_id, at, version, outcomes_applied, ties_applied,
                duels_issued, champion, basis, confident, wins, losses)
         SELECT $1, now(), $3, $4, $5,
                (SELECT COALESCE(SUM(issued), 0)::BIGINT FROM duel_counters WHERE experiment_id = $1),
                $6, $7, $8, $9, $10
         WHERE NOT EXISTS (SELECT 1 FROM history_points
                           WHERE experiment_id = $1 AND at > now() - make_interval(secs => $2))
         ON CONFLICT DO NOTHING",
    )
    .bind(experiment)
    .bind(interval_secs)
    .bind(point.version)
    .bind(point.outcomes_applied)
    .bind(point.ties_applied)
    .bind(point.champion)
    .bind(&point.basis)
    .bind(point.confident)
    .bind(&point.wins)
    .bind(&point.losses)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The points at or after `since`, in time order, thinned evenly to at most `max_points` (the
/// first and the last are always kept); also returns how many points there were before thinning.
pub async fn read(
    conn: &mut PgConnection,
    experiment: i64,
    since: Option<chrono::DateTime<chrono::Utc>>,
    max_points: i64,
) -> Result<(Vec<HistoryPoint>, i64), StoreError> {
    // Row r of n (from 0) is kept when it is the first of its bucket r * (m - 1) / (n - 1): the
    // buckets are the m values 0..m-1, every one is hit (the step is below 1), the first row
    // opens bucket 0 and the last row opens bucket m - 1.
    let rows: Vec<Thinned> = sqlx::query_as(
        "WITH p AS (
             SELECT *, row_number() OVER (ORDER BY at) - 1 AS r, count(*) OVER () AS n
             FROM history_points
             WHERE experiment_id = $1 AND ($2::timestamptz IS NULL OR at >= $2))
         SELECT n, at, version, outcomes_applied, ties_applied, duels_issued, champion, basis,
                confident, wins, losses
         FROM p
         WHERE n <= $3
            OR ($3 = 1 AND r = n - 1)
            OR ($3 > 1 AND (r = 0 OR (r * ($3 - 1)) / (n - 1) <> ((r - 1) * ($3 - 1)) / (n - 1)))
         ORDER BY at",
    )
    .bind(experiment)
    .bind(since)
    .bind(max_points)
    .fetch_all(conn)
    .await?;
    let total = rows.first().map_or(0, |t| t.n);
    Ok((rows.into_iter().map(|t| t.point).collect(), total))
}

/// A row of `read`'s query: a point and the number of points before thinning.
#[derive(sqlx::FromRow)]
struct Thinned {
    n: i64,
    #[sqlx(flatten)]
    point: HistoryPoint,
}

/// Removes an experiment's history (it is being deleted).
pub async fn delete(tx: &mut Transaction<'_, Postgres>, experiment: i64) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM history_points WHERE experiment_id = $1")
        .bind(experiment)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
