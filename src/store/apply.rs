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
pub struct StateWrite {
    pub experiment: i64,
    /// The stored version the application started from; the write happens only if it is still
    /// current.
    pub from_version: i64,
    /// The applications it writes, in order, at least one, consecutive versions: each one's
    /// version and the last row it took, logged together in one row of `outcome_applies` (the
    /// view `applied_versions` shows one row per application). The last is the version written
    /// and the new cursor: `from_version + 1`, or more when the owner held applications in
    /// memory since (`engine::apply::checkpoint`).
    pub applications: Vec<(i64, Cursor)>,
    pub policy_state: serde_json::Value,
    pub applied: i64,
    pub ties: i64,
    /// The new version's `updated_at` (to the microsecond), as the writer's snapshot has it.
    pub at: chrono::DateTime<chrono::Utc>,
    /// Win cells `(winner, loser, n)` added to the experiment's win counts.
    pub win_cells: Vec<(i32, i32, i64)>,
    /// Tie cells `(a, b, n)`, a <= b, added to its tie counts.
    pub tie_cells: Vec<(i32, i32, i64)>,
}

/// The statement that writes state rows, each fenced by its own version; then, only for the
/// rows written, each one's application log row (its held applications' cursors in arrays) and
/// its win and tie counts. One statement for one experiment saves the round trips of four (on
/// 100 experiments nearly every application carries a row or two, and those round trips were
/// most of an outcome's cost), and one for many saves the statements and commits of all but one
/// (docs/benchmarks.md).
///
/// `locked` takes the state rows' locks in experiment order before any is updated, whatever
/// order the writes come in, so two batches (or a batch and an administrative change, which
/// locks one row) cannot each wait for a row the other holds (materialized, so that it is not
/// folded into the update's join, whose plan would set the order); every other part writes only
/// for an experiment whose state row this statement updated, so its rows are reached under that
/// lock. A stale base writes nothing for
/// its experiment, and the others still write. Each write is numbered (`i`, its place in the
/// arrays) and its held cursors and cells carry that number, so two writes of one experiment in
/// one batch write one of them whole and nothing of the other. `last` ends it: how the written
/// writes' numbers and new versions are returned.
fn write_states_sql(last: &str) -> String {
    format!(
        "WITH w AS (
             SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::jsonb[],
                                  $5::bigint[], $6::bigint[], $7::bigint[], $8::uuid[],
                                  $9::timestamptz[])
                 WITH ORDINALITY AS w(experiment_id, from_version, version, policy_state,
                                      applied, ties, xid, duel, at, i)
         ), locked AS MATERIALIZED (
             SELECT experiment_id FROM experiment_state WHERE experiment_id = ANY($1::bigint[])
             ORDER BY experiment_id FOR UPDATE
         ), state AS (
             UPDATE experiment_state s SET version = w.version, policy_state = w.policy_state,
                    outcomes_applied = s.outcomes_applied + w.applied,
                    ties_applied = s.ties_applied + w.ties,
                    applied_xid = w.xid, applied_duel = w.duel, updated_at = w.at
             FROM w JOIN locked USING (experiment_id)
             WHERE s.experiment_id = w.experiment_id AND s.version = w.from_version
             RETURNING w.i, s.experiment_id, s.version, s.applied_xid, s.applied_duel
         ), held AS (
             SELECT a.i, array_agg(a.xid ORDER BY a.n) AS xids, array_agg(a.duel ORDER BY a.n) AS duels
             FROM unnest($10::bigint[], $11::bigint[], $12::uuid[]) WITH ORDINALITY AS a(i, xid, duel, n)
             GROUP BY a.i
         ), logged AS (
             INSERT INTO outcome_applies
                 (experiment_id, version, through_xid, through_duel, held_xids, held_duels)
             SELECT state.experiment_id, state.version, state.applied_xid, state.applied_duel,
                    COALESCE(held.xids, '{{}}'), COALESCE(held.duels, '{{}}')
             FROM state LEFT JOIN held ON held.i = state.i
         ), wins AS ({}), ties AS ({})
         {last}",
        count_upsert::upsert_part(&count_upsert::WIN_COUNTS, 13, "state"),
        count_upsert::upsert_part(&count_upsert::TIE_COUNTS, 17, "state"),
    )
}

/// The write inside a transaction that [`begin_without_flush`] began.
static WRITE_STATES: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| write_states_sql("SELECT i, version FROM state"));

/// The writes as a transaction of their own, for applications that write nothing else: the
/// statement itself turns off the wait for its WAL flush, for its own transaction only
/// (`set_config(.., true)` is undone when that transaction ends, so the session's later
/// statements, acknowledgements among them, still wait for theirs). Two round trips fewer than
/// `BEGIN; SET LOCAL ..`, the write and `COMMIT`, each a wake-up of the database session
/// (docs/benchmarks.md). The setting is read when the transaction commits, after the statement
/// ran; when every base was stale, nothing is written and there is nothing to commit.
static WRITE_STATES_ALONE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    write_states_sql(
        "SELECT i, version FROM state
         WHERE set_config('synchronous_commit', 'off', true) = 'off'",
    )
});

/// Writes the state, the counters, the cursor and the win and tie counts if the version is still
/// `from_version`, and logs the application; returns the new version, or `None` when someone
/// else changed the state first (nothing was written; the transaction must then be rolled back).
pub async fn write_state(
    tx: &mut Transaction<'_, Postgres>,
    w: &StateWrite,
) -> Result<Option<i64>, StoreError> {
    let written = write_with(WRITE_STATES.as_str(), &mut **tx, std::slice::from_ref(w)).await?;
    Ok(written.into_iter().next().flatten())
}

/// Many experiments' [`write_state`] in one statement, a transaction of its own that commits
/// without waiting for its WAL flush, on any connection (see [`WRITE_STATES_ALONE`]). Returns,
/// for each write in the order given, its new version, or `None` when its base was stale and
/// nothing of it was written; the others are written all the same.
pub async fn write_states_alone<'c, E>(
    executor: E,
    writes: &[StateWrite],
) -> Result<Vec<Option<i64>>, StoreError>
where
    E: sqlx::Executor<'c, Database = Postgres>,
{
    write_with(WRITE_STATES_ALONE.as_str(), executor, writes).await
}

/// Binds `writes` to one of [`write_states_sql`]'s statements (the statement orders the rows'
/// locks itself) and answers in the order given.
async fn write_with<'c, E>(
    sql: &str,
    executor: E,
    writes: &[StateWrite],
) -> Result<Vec<Option<i64>>, StoreError>
where
    E: sqlx::Executor<'c, Database = Postgres>,
{
    let all = || writes.iter();
    let last = |w: &StateWrite| {
        *w.applications
            .last()
            .expect("a state write carries at least its own application")
    };
    // Each write's held applications (all but its last, whose version and cursor the state row
    // takes) and cells, tagged with its place `i` (from 1) in the arrays.
    let mut held = (Vec::new(), Vec::new(), Vec::new());
    let mut wins = count_upsert::Columns::default();
    let mut ties = count_upsert::Columns::default();
    for (i, w) in (1i64..).zip(all()) {
        let (_, earlier) = w
            .applications
            .split_last()
            .expect("a state write carries at least its own application");
        // The log keeps the held ones' cursors in order and derives their versions from the
        // last one's, so a chain that skips a version would be logged wrong: refused whole.
        if let Some(pair) = w.applications.windows(2).find(|p| p[1].0 != p[0].0 + 1) {
            return Err(StoreError::Database(sqlx::Error::Protocol(format!(
                "experiment {}: the applications of a write must be consecutive versions, \
                 not {} then {}",
                w.experiment, pair[0].0, pair[1].0
            ))));
        }
        for &(_, (xid, duel)) in earlier {
            held.0.push(i);
            held.1.push(xid);
            held.2.push(duel);
        }
        wins.add(i, &w.win_cells);
        ties.add(i, &w.tie_cells);
    }
    let rows: Vec<(i64, i64)> = sqlx::query_as(sql)
        .bind(all().map(|w| w.experiment).collect::<Vec<i64>>())
        .bind(all().map(|w| w.from_version).collect::<Vec<i64>>())
        .bind(all().map(|w| last(w).0).collect::<Vec<i64>>())
        .bind(all().map(|w| &w.policy_state).collect::<Vec<_>>())
        .bind(all().map(|w| w.applied).collect::<Vec<i64>>())
        .bind(all().map(|w| w.ties).collect::<Vec<i64>>())
        .bind(all().map(|w| last(w).1.0).collect::<Vec<i64>>())
        .bind(all().map(|w| last(w).1.1).collect::<Vec<Uuid>>())
        .bind(all().map(|w| w.at).collect::<Vec<_>>())
        .bind(&held.0)
        .bind(&held.1)
        .bind(&held.2)
        .bind(&wins.write)
        .bind(&wins.x)
        .bind(&wins.y)
        .bind(&wins.n)
        .bind(&ties.write)
        .bind(&ties.x)
        .bind(&ties.y)
        .bind(&ties.n)
        .fetch_all(executor)
        .await?;
    let mut versions = vec![None; writes.len()];
    for (i, version) in rows {
        // `i` is the write's place from 1, as the statement numbered it.
        if let Some(v) = usize::try_from(i - 1)
            .ok()
            .and_then(|k| versions.get_mut(k))
        {
            *v = Some(version);
        }
    }
    Ok(versions)
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
