//! Applying acknowledged outcomes: the owner's queries. An outcome row is final once its
//! inserting transaction's id (`xid`) is below the oldest transaction still running (the
//! horizon): no row can commit below the horizon any more. The owner takes rows after its
//! experiment's cursor and below the horizon, in (xid, duel id) order, and writes the state, the
//! counts and the new cursor in one transaction, fenced by the state version it started from.

use sqlx::{PgConnection, PgPool, Postgres, Row, Transaction};
use uuid::Uuid;

use super::StoreError;
use super::counts::upsert as count_upsert;

/// A position in the apply order: (inserting transaction id, duel id).
pub type Cursor = (i64, Uuid);

/// The oldest transaction still running, as a number comparable with `outcomes.xid` (and
/// `conversions.xid`): rows below it are committed or never will be.
pub(super) const HORIZON: &str = "pg_snapshot_xmin(pg_current_snapshot())::text::bigint";

/// One acknowledged outcome row, as the owner applies it.
#[derive(Debug, Clone)]
pub struct PendingRow {
    pub at: Cursor,
    pub first: i32,
    pub second: i32,
    /// `None` for a tie (and for a multi-ranker query, whose results are in `set`).
    pub winner: Option<i32>,
    /// A multi-ranker query's rankers and pair results.
    pub set: Option<(Vec<i32>, Vec<i16>)>,
    /// When the duel was issued: where its conversion metrics' windows start.
    pub issued_at: chrono::DateTime<chrono::Utc>,
    /// The unit's keyed hash, if the duel was issued for a unit.
    pub unit: Option<Vec<u8>>,
    /// The segment's index, if the duel request named one.
    pub segment: Option<i16>,
}

fn pending_row(r: &sqlx::postgres::PgRow) -> Result<PendingRow, StoreError> {
    let rankers: Option<Vec<i32>> = r.try_get("rankers")?;
    let results: Option<Vec<i16>> = r.try_get("results")?;
    Ok(PendingRow {
        at: (r.try_get("xid")?, r.try_get("duel_id")?),
        first: r.try_get("first_idx")?,
        second: r.try_get("second_idx")?,
        winner: r.try_get("winner_idx")?,
        set: rankers.zip(results),
        issued_at: r.try_get("issued_at")?,
        unit: r.try_get("unit_hash")?,
        segment: r.try_get("segment")?,
    })
}

/// The rows to apply next, for several experiments in one statement: for each `(experiment,
/// cursor)` asked, in the order asked, the experiment's final rows after the cursor (below the
/// horizon) in apply order, at most `limit`. One statement reads them all under one snapshot and
/// one horizon, so each answer is what a read of that experiment alone would have found then.
pub async fn pending_many(
    pool: &PgPool,
    after: &[(i64, Cursor)],
    limit: i64,
) -> Result<Vec<Vec<PendingRow>>, StoreError> {
    let sql = format!(
        "SELECT c.n, o.xid, o.duel_id, o.first_idx, o.second_idx, o.winner_idx,
                o.rankers, o.results, o.issued_at, o.unit_hash, o.segment
         FROM unnest($1::bigint[], $2::bigint[], $3::uuid[])
              WITH ORDINALITY AS c(experiment_id, xid, duel, n)
         CROSS JOIN LATERAL (
             SELECT * FROM outcomes o
             WHERE o.experiment_id = c.experiment_id AND (o.xid, o.duel_id) > (c.xid, c.duel)
               AND o.xid < {HORIZON}
             ORDER BY o.xid, o.duel_id LIMIT $4) o
         ORDER BY c.n, o.xid, o.duel_id"
    );
    let rows = sqlx::query(&sql)
        .bind(after.iter().map(|a| a.0).collect::<Vec<i64>>())
        .bind(after.iter().map(|a| a.1.0).collect::<Vec<i64>>())
        .bind(after.iter().map(|a| a.1.1).collect::<Vec<Uuid>>())
        .bind(limit)
        .fetch_all(pool)
        .await?;
    let mut answers: Vec<Vec<PendingRow>> = after.iter().map(|_| Vec::new()).collect();
    for r in &rows {
        let n: i64 = r.try_get("n")?;
        if let Some(answer) = usize::try_from(n - 1).ok().and_then(|i| answers.get_mut(i)) {
            answer.push(pending_row(r)?);
        }
    }
    Ok(answers)
}

/// Live experiments with final rows not yet applied, or with conversion-metric outcomes still
/// open (their windows close later, and someone must own the experiment to close them): what an
/// owner (or a would-be owner) polls.
///
/// Each "is a row waiting" test is the first row after the cursor in index order, not an
/// `EXISTS`: Postgres drops an `EXISTS`'s `ORDER BY`, and for an experiment holding most of the
/// table it then expected a sequential scan to meet a waiting row at once, and read all of them
/// when none was waiting (3.9 s of a poll every second at 10,000,000 outcomes; 0.3 ms now).
pub async fn experiments_with_pending(pool: &PgPool) -> Result<Vec<i64>, StoreError> {
    let sql = format!(
        "SELECT s.experiment_id FROM experiment_state s
         JOIN experiments e ON e.id = s.experiment_id AND e.deleted_at IS NULL
         WHERE (SELECT o.xid FROM outcomes o WHERE o.experiment_id = s.experiment_id
                       AND (o.xid, o.duel_id) > (s.applied_xid, s.applied_duel)
                       AND o.xid < {HORIZON}
                       ORDER BY o.xid, o.duel_id LIMIT 1) IS NOT NULL
            OR (SELECT c.xid FROM conversions c WHERE c.experiment_id = s.experiment_id
                       AND (c.xid, c.seq) > (s.conversions_xid, s.conversions_seq)
                       AND c.xid < {HORIZON}
                       ORDER BY c.xid, c.seq LIMIT 1) IS NOT NULL
            OR EXISTS (SELECT 1 FROM metric_duels m WHERE m.experiment_id = s.experiment_id
                       AND m.decided_at IS NULL)"
    );
    Ok(sqlx::query_scalar(&sql).fetch_all(pool).await?)
}

/// What one application writes to the experiment's state row and its win and tie counts.
pub struct StateWrite<'a> {
    pub experiment: i64,
    /// The stored version the application started from; the write happens only if it is still
    /// current.
    pub from_version: i64,
    /// The applications it writes, in order, at least one: each one's version and the last row
    /// it took, logged in `outcome_applies`. The last is the version written and the new cursor:
    /// `from_version + 1`, or more when the owner held applications in memory since
    /// (`engine::apply::checkpoint`).
    pub applications: &'a [(i64, Cursor)],
    pub policy_state: &'a serde_json::Value,
    pub applied: i64,
    pub ties: i64,
    /// The new version's `updated_at` (to the microsecond), as the writer's snapshot has it.
    pub at: chrono::DateTime<chrono::Utc>,
    /// Win cells `(winner, loser, n)` added to the experiment's win counts.
    pub win_cells: &'a [(i32, i32, i64)],
    /// Tie cells `(a, b, n)`, a <= b, added to its tie counts.
    pub tie_cells: &'a [(i32, i32, i64)],
}

/// [`write_state`]'s statement: the state row, fenced by its version; then, only if that row was
/// written, the application's log entry and the win and tie counts. One statement, so one round
/// trip where four took one each: on 100 experiments nearly every application carries a row or
/// two, and the round trips of its transaction were most of an outcome's cost
/// (docs/benchmarks.md). The state row is updated first: the other parts read its result, so its
/// lock orders this write after any other, and a stale base writes nothing. `last` ends it: how
/// the new version is returned.
fn write_state_sql(last: &str) -> String {
    let written = "EXISTS (SELECT 1 FROM state)";
    format!(
        "WITH state AS (
             UPDATE experiment_state SET version = $15, policy_state = $2,
                    outcomes_applied = outcomes_applied + $3, ties_applied = ties_applied + $4,
                    applied_xid = $5, applied_duel = $6, updated_at = $14
             WHERE experiment_id = $1 AND version = $7 RETURNING version
         ), logged AS (
             INSERT INTO outcome_applies (experiment_id, version, through_xid, through_duel)
             SELECT $1, a.version, a.xid, a.duel FROM state,
                    unnest($16::bigint[], $17::bigint[], $18::uuid[]) AS a(version, xid, duel)
         ), wins AS ({}), ties AS ({})
         {last}",
        count_upsert::upsert_part(&count_upsert::WIN_COUNTS, 1, 8, written),
        count_upsert::upsert_part(&count_upsert::TIE_COUNTS, 1, 11, written),
    )
}

/// The write inside a transaction that [`begin_without_flush`] began.
static WRITE_STATE: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| write_state_sql("SELECT version FROM state"));

/// The write as a transaction of its own, for an application that writes nothing else: the
/// statement itself turns off the wait for its WAL flush, for its own transaction only
/// (`set_config(.., true)` is undone when that transaction ends, so the session's later
/// statements, acknowledgements among them, still wait for theirs). Two round trips fewer than
/// `BEGIN; SET LOCAL ..`, the write and `COMMIT`, each a wake-up of the database session
/// (docs/benchmarks.md). The setting is read when the transaction commits, after the statement
/// ran; a stale base returns no row and commits nothing.
static WRITE_STATE_ALONE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    write_state_sql(
        "SELECT version FROM state
         WHERE set_config('synchronous_commit', 'off', true) = 'off'",
    )
});

/// Writes the state, the counters, the cursor and the win and tie counts if the version is still
/// `from_version`, and logs the application; returns the new version, or `None` when someone
/// else changed the state first (nothing was written; the transaction must then be rolled back).
pub async fn write_state(
    tx: &mut Transaction<'_, Postgres>,
    w: &StateWrite<'_>,
) -> Result<Option<i64>, StoreError> {
    write_with(WRITE_STATE.as_str(), &mut **tx, w).await
}

/// [`write_state`] as a transaction of its own that commits without waiting for its WAL flush,
/// on any connection (see [`WRITE_STATE_ALONE`]); `None` when the base was stale, and then
/// nothing was written.
pub async fn write_state_alone<'c, E>(
    executor: E,
    w: &StateWrite<'_>,
) -> Result<Option<i64>, StoreError>
where
    E: sqlx::Executor<'c, Database = Postgres>,
{
    write_with(WRITE_STATE_ALONE.as_str(), executor, w).await
}

async fn write_with<'c, E>(
    sql: &str,
    executor: E,
    w: &StateWrite<'_>,
) -> Result<Option<i64>, StoreError>
where
    E: sqlx::Executor<'c, Database = Postgres>,
{
    let &(written, through) = w
        .applications
        .last()
        .expect("a state write carries at least its own application");
    let (win_x, win_y, win_n) = count_upsert::columns(w.win_cells);
    let (tie_x, tie_y, tie_n) = count_upsert::columns(w.tie_cells);
    let version: Option<i64> = sqlx::query_scalar(sql)
        .bind(w.experiment)
        .bind(w.policy_state)
        .bind(w.applied)
        .bind(w.ties)
        .bind(through.0)
        .bind(through.1)
        .bind(w.from_version)
        .bind(&win_x)
        .bind(&win_y)
        .bind(&win_n)
        .bind(&tie_x)
        .bind(&tie_y)
        .bind(&tie_n)
        .bind(w.at)
        .bind(written)
        .bind(w.applications.iter().map(|a| a.0).collect::<Vec<i64>>())
        .bind(w.applications.iter().map(|a| a.1.0).collect::<Vec<i64>>())
        .bind(w.applications.iter().map(|a| a.1.1).collect::<Vec<Uuid>>())
        .fetch_optional(executor)
        .await?;
    Ok(version)
}

/// Begins an application's transaction, one that commits without waiting for its WAL to reach
/// the disk (see `engine::apply::application` for why an application may), in one round trip.
pub async fn begin_without_flush(
    pool: &PgPool,
) -> Result<Transaction<'static, Postgres>, StoreError> {
    Ok(pool
        .begin_with("BEGIN; SET LOCAL synchronous_commit = off")
        .await?)
}

/// Namespace of joust's advisory locks (the first key of the two-key form): "jous".
const LOCK_NAMESPACE: i32 = 0x6a6f_7573;

/// Takes the experiment's ownership on this session if no other session holds it.
pub async fn try_own(conn: &mut PgConnection, experiment: i64) -> Result<bool, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT pg_try_advisory_lock($1, $2::int)")
            .bind(LOCK_NAMESPACE)
            .bind(experiment as i32)
            .fetch_one(conn)
            .await?,
    )
}

/// Gives the experiment's ownership up.
pub async fn disown(conn: &mut PgConnection, experiment: i64) -> Result<(), StoreError> {
    sqlx::query("SELECT pg_advisory_unlock($1, $2::int)")
        .bind(LOCK_NAMESPACE)
        .bind(experiment as i32)
        .execute(conn)
        .await?;
    Ok(())
}
