//! Reading an experiment's outcome and conversion rows back out, a page at a time, in the order
//! its owner applies them: (inserting transaction id, duel id) for outcomes, (inserting
//! transaction id, sequence number) for conversions.
//!
//! Only rows below the horizon (the oldest transaction still running, [`HORIZON`]) are read: every
//! transaction below it has ended, so the set of rows there is final and no row can later
//! commit before a position an export has passed. A page is fixed before it is streamed: one
//! statement finds the horizon and the page's last row, and the rows up to that row are then
//! read in one ordered scan. Rows between the two statements cannot change (they are final);
//! only retention may delete some, which an export then never sees.
//!
//! An export's reads take no transaction id (they write nothing), so however long one runs it
//! does not hold the horizon back, and applications go on meanwhile.

use futures_util::TryStreamExt;
use sqlx::{PgPool, Row};
use uuid::Uuid;

use super::StoreError;
use super::apply::HORIZON;

/// Which rows an export reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    Outcomes,
    Conversions,
}

/// A position in an export: the row's transaction id and its key within the transaction (the
/// duel id for outcomes; the sequence number, as a big-endian integer in the last 8 bytes, for
/// conversions). Rows after it are exported next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportPosition {
    pub xid: i64,
    pub key: Uuid,
}

impl ExportPosition {
    /// Before every row (the oldest rows carry transaction id 0).
    pub const START: ExportPosition = ExportPosition {
        xid: -1,
        key: Uuid::nil(),
    };

    fn seq(self) -> i64 {
        self.key.as_u64_pair().1 as i64
    }

    fn of_seq(xid: i64, seq: i64) -> ExportPosition {
        ExportPosition {
            xid,
            key: Uuid::from_u64_pair(0, seq as u64),
        }
    }
}

/// One page: its rows are those after the page's start up to `last` (inclusive); `more` says
/// whether a final row follows it.
#[derive(Debug, Clone, Copy)]
pub struct PageBounds {
    pub last: ExportPosition,
    pub more: bool,
}

impl ExportKind {
    fn table(self) -> &'static str {
        match self {
            ExportKind::Outcomes => "outcomes",
            ExportKind::Conversions => "conversions",
        }
    }

    fn key(self) -> &'static str {
        match self {
            ExportKind::Outcomes => "duel_id",
            ExportKind::Conversions => "seq",
        }
    }

    fn position(self, row: &sqlx::postgres::PgRow) -> Result<ExportPosition, sqlx::Error> {
        let xid: i64 = row.try_get("xid")?;
        Ok(match self {
            ExportKind::Outcomes => ExportPosition {
                xid,
                key: row.try_get("duel_id")?,
            },
            ExportKind::Conversions => ExportPosition::of_seq(xid, row.try_get("seq")?),
        })
    }
}

/// Binds a position as the key type of `kind`'s rows.
fn bind_position<'q>(
    q: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    kind: ExportKind,
    at: ExportPosition,
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    let q = q.bind(at.xid);
    match kind {
        ExportKind::Outcomes => q.bind(at.key),
        ExportKind::Conversions => q.bind(at.seq()),
    }
}

/// The page of at most `limit` final rows after `after`: its last row, and whether a final row
/// follows. `None` when no final row follows `after`. One statement: the horizon and the page's
/// end are read under the same snapshot.
pub async fn page_bounds(
    pool: &PgPool,
    kind: ExportKind,
    experiment: i64,
    after: ExportPosition,
    limit: i64,
) -> Result<Option<PageBounds>, StoreError> {
    let (table, key) = (kind.table(), kind.key());
    // The limit-th row and the one after it: two rows say there is another page. With fewer
    // than `limit` rows left, the last final row ends the page.
    // The horizon is a scalar subquery (evaluated once, under the statement's one snapshot), so
    // that it is a bound of the index scan: joined in as a row, it made the planner read every
    // row of the experiment and sort them (3.2 s instead of 0.4 s for a page of a million).
    let sql = format!(
        "(SELECT 0 AS part, xid, {key} FROM {table}
          WHERE experiment_id = $1 AND (xid, {key}) > ($2, $3) AND xid < (SELECT {HORIZON})
          ORDER BY xid, {key} OFFSET $4 - 1 LIMIT 2)
         UNION ALL
         (SELECT 1 AS part, xid, {key} FROM {table}
          WHERE experiment_id = $1 AND (xid, {key}) > ($2, $3) AND xid < (SELECT {HORIZON})
          ORDER BY xid DESC, {key} DESC LIMIT 1)"
    );
    let q = bind_position(sqlx::query(&sql).bind(experiment), kind, after).bind(limit);
    let rows = q.fetch_all(pool).await?;
    let mut at_limit = Vec::new();
    let mut last_final = None;
    for row in &rows {
        let part: i32 = row.try_get("part")?;
        let position = kind.position(row)?;
        if part == 0 {
            at_limit.push(position);
        } else {
            last_final = Some(position);
        }
    }
    Ok(match (at_limit.first(), last_final) {
        (Some(&last), _) => Some(PageBounds {
            last,
            more: at_limit.len() > 1,
        }),
        (None, Some(last)) => Some(PageBounds { last, more: false }),
        (None, None) => None,
    })
}

/// One outcome row as exported.
#[derive(Debug, Clone)]
pub struct ExportedOutcome {
    pub duel_id: Uuid,
    pub first: i32,
    pub second: i32,
    /// `None` for a tie, and for a multi-ranker query (whose results are in `set`).
    pub winner: Option<i32>,
    /// A multi-ranker query's rankers and pair results.
    pub set: Option<(Vec<i32>, Vec<i16>)>,
    pub issued_at: chrono::DateTime<chrono::Utc>,
    pub recorded_at: chrono::DateTime<chrono::Utc>,
    pub unit_hash: Option<Vec<u8>>,
    pub segment: Option<i16>,
    /// How the outcome was posted (a `PostedAs` code) and the posted value where kept (JSON
    /// text); `None` for rows recorded before either was kept.
    pub posted_as: Option<i16>,
    pub posted: Option<String>,
    /// A clicked duel's interleaving method.
    pub method: Option<String>,
    /// Which layer chose the duel (a `chosen_by` code), when its token said.
    pub chosen_by: Option<i16>,
}

/// One conversion row as exported.
#[derive(Debug, Clone)]
pub struct ExportedConversion {
    pub duel_id: Uuid,
    pub metric: String,
    pub event_id: String,
    pub first: i32,
    pub second: i32,
    pub document: String,
    pub position: i32,
    pub value: Option<f64>,
    pub issued_at: chrono::DateTime<chrono::Utc>,
    pub occurred_at: chrono::DateTime<chrono::Utc>,
    pub recorded_at: chrono::DateTime<chrono::Utc>,
    /// The interleaving shown (as stored with the conversion).
    pub interleaving: serde_json::Value,
    /// The duel's result for the conversion's metric once its owner decided it: 1 the first
    /// ranker won, -1 the second, 0 a tie; `None` before, or when nothing counted.
    pub duel_result: Option<i16>,
}

fn outcome_of(r: &sqlx::postgres::PgRow) -> Result<ExportedOutcome, sqlx::Error> {
    let rankers: Option<Vec<i32>> = r.try_get(3)?;
    let results: Option<Vec<i16>> = r.try_get(4)?;
    Ok(ExportedOutcome {
        duel_id: r.try_get(0)?,
        first: r.try_get(1)?,
        second: r.try_get(2)?,
        set: rankers.zip(results),
        winner: r.try_get(5)?,
        issued_at: r.try_get(6)?,
        recorded_at: r.try_get(7)?,
        unit_hash: r.try_get(8)?,
        segment: r.try_get(9)?,
        posted_as: r.try_get(10)?,
        posted: r.try_get(11)?,
        method: r.try_get(12)?,
        chosen_by: r.try_get(13)?,
    })
}

fn conversion_of(r: &sqlx::postgres::PgRow) -> Result<ExportedConversion, sqlx::Error> {
    Ok(ExportedConversion {
        duel_id: r.try_get(0)?,
        metric: r.try_get(1)?,
        event_id: r.try_get(2)?,
        first: r.try_get(3)?,
        second: r.try_get(4)?,
        document: r.try_get(5)?,
        position: r.try_get(6)?,
        value: r.try_get(7)?,
        issued_at: r.try_get(8)?,
        occurred_at: r.try_get(9)?,
        recorded_at: r.try_get(10)?,
        interleaving: r.try_get(11)?,
        duel_result: r.try_get(12)?,
    })
}

/// Rows of a page, handed on in batches as they arrive from one ordered scan.
pub enum ExportBatch {
    Outcomes(Vec<ExportedOutcome>),
    Conversions(Vec<ExportedConversion>),
}

/// Rows handed on at a time: large enough that the hand-over costs little per row, small
/// enough that encoding one batch holds a runtime thread well under a millisecond, and that a
/// page in flight holds a few hundred kilobytes.
pub const BATCH_ROWS: usize = 256;

/// Streams the rows after `after` up to `last` (inclusive), in order, calling `deliver` with
/// each batch; stops early (without error) when `deliver` returns false (the reader left).
pub async fn stream_rows<F, Fut>(
    conn: &mut sqlx::PgConnection,
    kind: ExportKind,
    experiment: i64,
    after: ExportPosition,
    last: ExportPosition,
    mut deliver: F,
) -> Result<(), StoreError>
where
    F: FnMut(ExportBatch) -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let (table, key) = (kind.table(), kind.key());
    let columns = match kind {
        ExportKind::Outcomes => {
            "duel_id, first_idx, second_idx, rankers, results, winner_idx, issued_at, \
             recorded_at, unit_hash, segment, posted_as, posted::text, method, chosen_by"
        }
        // The duel's result for the metric, once decided, from the owner's record of it.
        ExportKind::Conversions => {
            "t.duel_id, t.metric, event_id, t.first_idx, t.second_idx, document, position, \
             value, issued_at, occurred_at, recorded_at, interleaving, \
             (SELECT m.result FROM metric_duels m WHERE m.experiment_id = t.experiment_id \
              AND m.metric = t.metric AND m.duel_id = t.duel_id AND m.decided_at IS NOT NULL)"
        }
    };
    let sql = format!(
        "SELECT {columns} FROM {table} t
         WHERE t.experiment_id = $1 AND (t.xid, t.{key}) > ($2, $3) AND (t.xid, t.{key}) <= ($4, $5)
         ORDER BY t.xid, t.{key}"
    );
    let q = bind_position(sqlx::query(&sql).bind(experiment), kind, after);
    let q = bind_position(q, kind, last);
    let mut rows = q.fetch(conn);
    let mut outcomes = Vec::new();
    let mut conversions = Vec::new();
    while let Some(row) = rows.try_next().await? {
        match kind {
            ExportKind::Outcomes => outcomes.push(outcome_of(&row)?),
            ExportKind::Conversions => conversions.push(conversion_of(&row)?),
        }
        if outcomes.len() + conversions.len() >= BATCH_ROWS {
            let batch = match kind {
                ExportKind::Outcomes => ExportBatch::Outcomes(std::mem::take(&mut outcomes)),
                ExportKind::Conversions => {
                    ExportBatch::Conversions(std::mem::take(&mut conversions))
                }
            };
            if !deliver(batch).await {
                return Ok(());
            }
        }
    }
    if !outcomes.is_empty() {
        deliver(ExportBatch::Outcomes(outcomes)).await;
    } else if !conversions.is_empty() {
        deliver(ExportBatch::Conversions(conversions)).await;
    }
    Ok(())
}

/// An experiment's segment labels, by index.
pub async fn segment_labels(
    pool: &PgPool,
    experiment: i64,
) -> Result<Vec<(i16, String)>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT idx, label FROM experiment_segments WHERE experiment_id = $1 ORDER BY idx",
    )
    .bind(experiment)
    .fetch_all(pool)
    .await?)
}

/// A live experiment's ranker names by index (retired ones included: their rows name them), or
/// `None` for an experiment that does not exist or was deleted.
pub async fn ranker_names(
    pool: &PgPool,
    experiment: i64,
) -> Result<Option<Vec<String>>, StoreError> {
    let live: Option<bool> =
        sqlx::query_scalar("SELECT deleted_at IS NULL FROM experiments WHERE id = $1")
            .bind(experiment)
            .fetch_optional(pool)
            .await?;
    if live != Some(true) {
        return Ok(None);
    }
    let rows: Vec<(i32, String)> =
        sqlx::query_as("SELECT idx, name FROM rankers WHERE experiment_id = $1 ORDER BY idx")
            .bind(experiment)
            .fetch_all(pool)
            .await?;
    let mut names = Vec::new();
    for (idx, name) in rows {
        let idx = idx as usize;
        if names.len() <= idx {
            names.resize(idx + 1, String::new());
        }
        names[idx] = name;
    }
    Ok(Some(names))
}
