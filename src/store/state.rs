//! Loading an experiment's whole stored state: settings, rankers, the policy's state, the win and
//! tie counts and the counters.

use serde_json::Value;
use sqlx::{PgConnection, Row};

use super::StoreError;
use super::experiments::{self, ExperimentRow, RankerRow};

/// Everything stored about one live experiment.
#[derive(Debug, Clone)]
pub struct StoredExperiment {
    pub experiment: ExperimentRow,
    pub rankers: Vec<RankerRow>,
    pub version: i64,
    pub policy_state: Value,
    pub outcomes_applied: i64,
    pub ties_applied: i64,
    pub updated_at: chrono::DateTime<chrono::Utc>,
    /// The last outcome row applied, in apply order (see [`super::apply`]).
    pub applied_through: super::apply::Cursor,
    /// `(winner, loser, wins)`
    pub wins: Vec<(i32, i32, i64)>,
    /// `(a, b, ties)` with a <= b
    pub ties: Vec<(i32, i32, i64)>,
    /// The last conversion applied (see [`super::conversions`]).
    pub conversions_through: super::conversions::ConversionCursor,
    /// Every non-primary metric's counts, by metric.
    pub metric_counts: std::collections::BTreeMap<String, super::counts::metrics::MetricCounts>,
    /// The segment labels (index, label) and each segment's win and tie cells.
    pub segments: super::counts::segments::SegmentRows,
    /// The unit-level win cells `(winner, loser, wins)` (see `unit_votes`).
    pub unit_wins: Vec<(i32, i32, i64)>,
}

/// Loads a live experiment, or `None` if it does not exist or was deleted. Run it inside a
/// transaction that locks the state row, or a repeatable-read one, to get a consistent snapshot
/// (the counts read with the state they belong to).
pub async fn load(
    conn: &mut PgConnection,
    id: i64,
) -> Result<Option<StoredExperiment>, StoreError> {
    let Some(experiment) = experiments::get(&mut *conn, id).await? else {
        return Ok(None);
    };
    let row = sqlx::query(
        "SELECT version, policy_state, outcomes_applied, ties_applied, updated_at,
                applied_xid, applied_duel, conversions_xid, conversions_seq
         FROM experiment_state WHERE experiment_id = $1",
    )
    .bind(id)
    .fetch_one(&mut *conn)
    .await?;
    // The rankers come with the counts.
    let cells = super::counts::cells::read(&mut *conn, id).await?;
    Ok(Some(StoredExperiment {
        experiment,
        rankers: cells.rankers,
        version: row.try_get("version")?,
        policy_state: row.try_get("policy_state")?,
        outcomes_applied: row.try_get("outcomes_applied")?,
        ties_applied: row.try_get("ties_applied")?,
        updated_at: row.try_get("updated_at")?,
        applied_through: (row.try_get("applied_xid")?, row.try_get("applied_duel")?),
        wins: cells.wins,
        ties: cells.ties,
        conversions_through: (
            row.try_get("conversions_xid")?,
            row.try_get("conversions_seq")?,
        ),
        metric_counts: cells.metrics,
        segments: cells.segments,
        unit_wins: cells.unit_wins,
    }))
}

/// [`load`] in a repeatable-read transaction of its own: the counts, the cursor and the state
/// all as of one moment. Replicas that do not own an experiment run this at every refresh while
/// its version moves, so it is kept to few round trips (five): the isolation level comes with
/// `BEGIN`, and the rankers and every count table are read by one statement
/// ([`super::counts::cells`]).
pub async fn load_consistent(
    pool: &sqlx::PgPool,
    id: i64,
) -> Result<Option<StoredExperiment>, StoreError> {
    let mut tx = pool
        .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        .await?;
    let stored = load(&mut tx, id).await?;
    tx.commit().await?;
    Ok(stored)
}

/// Total duels issued for an experiment, as flushed by every replica.
pub async fn duels_issued(conn: &mut PgConnection, id: i64) -> Result<i64, StoreError> {
    let n: Option<i64> = sqlx::query_scalar(
        "SELECT SUM(issued)::BIGINT FROM duel_counters WHERE experiment_id = $1",
    )
    .bind(id)
    .fetch_one(conn)
    .await?;
    Ok(n.unwrap_or(0))
}

/// Adds this replica's duel counts (experiment id, newly issued) to the shared counters.
pub async fn add_duels_issued(
    pool: &sqlx::PgPool,
    instance: &str,
    counts: &[(i64, i64)],
) -> Result<(), StoreError> {
    if counts.is_empty() {
        return Ok(());
    }
    let (ids, ns): (Vec<i64>, Vec<i64>) = counts.iter().copied().unzip();
    sqlx::query(
        "INSERT INTO duel_counters (experiment_id, instance_id, issued)
         SELECT e, $1, n FROM UNNEST($2::bigint[], $3::bigint[]) AS t(e, n)
         WHERE EXISTS (SELECT 1 FROM experiments WHERE id = e)
         ON CONFLICT (experiment_id, instance_id) DO UPDATE SET issued = duel_counters.issued + EXCLUDED.issued",
    )
    .bind(instance)
    .bind(&ids)
    .bind(&ns)
    .execute(pool)
    .await?;
    Ok(())
}
