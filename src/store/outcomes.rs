//! Acknowledging outcomes and counting them: the acknowledgement inserts the new rows in one
//! statement per group (the duel id is unique, so a retried outcome inserts nothing), then finds
//! what was already recorded for the others; the experiment's owner later adds to the win and tie counts in the
//! transaction that writes the state (see [`super::apply`]).

use std::collections::HashSet;

use sqlx::{PgConnection, Row};
use uuid::Uuid;

use super::StoreError;

/// One outcome row to insert.
#[derive(Debug, Clone)]
pub struct OutcomeRow {
    pub duel_id: Uuid,
    pub experiment_id: i64,
    pub first: i32,
    pub second: i32,
    /// `None` for a tie.
    pub winner: Option<i32>,
    pub issued_at: chrono::DateTime<chrono::Utc>,
    /// A multi-ranker query's rankers and pair results (see the `outcomes` table).
    pub set: Option<(Vec<i32>, Vec<i16>)>,
    /// The unit's keyed hash, if the duel was issued for a unit.
    pub unit: Option<Vec<u8>>,
    /// The segment's index, if the duel request named one.
    pub segment: Option<i16>,
    /// The result field posted (a [`PostedAs`] code).
    pub posted_as: i16,
    /// The posted value where the result does not say it, as JSON text (see the `outcomes`
    /// table).
    pub posted: Option<String>,
    /// A clicked duel's interleaving method.
    pub method: Option<&'static str>,
    /// Which layer chose the duel (a [`ChosenBy`] code), when its token said.
    pub chosen_by: Option<i16>,
}

/// The result field an outcome was posted with, as the `posted_as` column codes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostedAs {
    Winner = 1,
    Credits = 2,
    Ordering = 3,
    Clicks = 4,
}

impl PostedAs {
    /// The API's name of the field.
    pub fn name(self) -> &'static str {
        match self {
            PostedAs::Winner => "winner",
            PostedAs::Credits => "credits",
            PostedAs::Ordering => "ordering",
            PostedAs::Clicks => "clicks",
        }
    }

    pub fn from_code(code: i16) -> Option<PostedAs> {
        Some(match code {
            1 => PostedAs::Winner,
            2 => PostedAs::Credits,
            3 => PostedAs::Ordering,
            4 => PostedAs::Clicks,
            _ => return None,
        })
    }
}

/// The `chosen_by` column's codes: the policy chose the duel, or the confirmation layer.
pub const CHOSEN_BY_POLICY: i16 = 1;
pub const CHOSEN_BY_CONFIRMATION: i16 = 2;

/// What is on record for a duel: its winner (`None` = tie) and, for a multi-ranker query, its
/// pair results.
pub type Recorded = (Option<i32>, Option<Vec<i16>>);

/// What one acknowledging statement did: the live experiments among those asked for, and the
/// rows that were new (the others were recorded before), each with its place in the apply order.
#[derive(Debug, Default)]
pub struct Acknowledged {
    pub live: Vec<i64>,
    pub inserted: Vec<(Uuid, i64)>,
}

/// Inserts the rows of live experiments among `experiments` in one statement, committed on its
/// own (a durable commit: this is the acknowledgement). One round trip, where a transaction
/// around a read of the live experiments and the insert took four (begin, read, insert,
/// commit): each is a wake-up of the database's backend and of the writer, which on a busy
/// machine costs more than the statement. Rows of an experiment that is gone (deleted after its
/// duels were issued) are not inserted.
///
/// A plain insert first: almost every group holds only new duels, and for those `ON CONFLICT`
/// costs Postgres a check of the unique index and a confirmation record in the WAL per row, and
/// `RETURNING` a result row each (all rows of one transaction share its id, so one is enough).
/// A group with a duel recorded before (a retry) fails that insert as a whole, writing nothing,
/// and is inserted again with `ON CONFLICT DO NOTHING`, which skips the recorded duels.
pub async fn acknowledge(
    conn: &mut PgConnection,
    experiments: &[i64],
    rows: &[OutcomeRow],
) -> Result<Acknowledged, StoreError> {
    let columns = Columns::of(rows);
    let fresh = columns.query(Form::Fresh, experiments);
    match fresh.fetch_one(&mut *conn).await {
        Ok(row) => {
            let live: Vec<i64> = row.try_get("live")?;
            let xid: i64 = row.try_get("xid")?;
            let is_live: HashSet<i64> = live.iter().copied().collect();
            let inserted: Vec<(Uuid, i64)> = rows
                .iter()
                .filter(|r| is_live.contains(&r.experiment_id))
                .map(|r| (r.duel_id, xid))
                .collect();
            let count: i64 = row.try_get("inserted")?;
            if count != inserted.len() as i64 {
                return Err(StoreError::Database(sqlx::Error::Protocol(format!(
                    "the acknowledgement inserted {count} rows of {}",
                    inserted.len()
                ))));
            }
            Ok(Acknowledged { live, inserted })
        }
        Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some(UNIQUE_VIOLATION) => {
            let retry = columns.query(Form::Retry, experiments);
            let mut out = Acknowledged::default();
            for row in retry.fetch_all(&mut *conn).await? {
                match row.try_get::<Option<i64>, _>("live")? {
                    Some(id) => out.live.push(id),
                    None => out
                        .inserted
                        .push((row.try_get("duel_id")?, row.try_get("xid")?)),
                }
            }
            Ok(out)
        }
        Err(e) => Err(e.into()),
    }
}

/// Postgres' SQLSTATE for a duplicate key.
const UNIQUE_VIOLATION: &str = "23505";

/// Which acknowledging statement: for new duels only, or skipping those recorded before.
#[derive(Clone, Copy)]
enum Form {
    Fresh,
    Retry,
}

/// The rows' columns as arrays, bound to either statement.
struct Columns {
    duel_ids: Vec<Uuid>,
    of: Vec<i64>,
    firsts: Vec<i32>,
    seconds: Vec<i32>,
    winners: Vec<Option<i32>>,
    issued: Vec<chrono::DateTime<chrono::Utc>>,
    posted_as: Vec<i16>,
    chosen_by: Vec<Option<i16>>,
    /// `None` when every row is a two-ranker duel without unit or segment, posted as a winner
    /// recorded as posted: the pairwise form fills no array or JSON columns. Arrays of arrays must be rectangular in Postgres, so a query's
    /// per-row arrays travel as JSON text and are turned back into int[] and smallint[] by the
    /// statement.
    extra: Option<Extra>,
}

struct Extra {
    sets: Vec<Option<String>>,
    units: Vec<Option<Vec<u8>>>,
    segments: Vec<Option<i16>>,
    posted: Vec<Option<String>>,
    methods: Vec<Option<&'static str>>,
}

impl Columns {
    fn of(rows: &[OutcomeRow]) -> Columns {
        let pairwise = rows.iter().all(|r| {
            r.set.is_none()
                && r.unit.is_none()
                && r.segment.is_none()
                && r.posted.is_none()
                && r.method.is_none()
        });
        let extra = (!pairwise).then(|| Extra {
            sets: rows
                .iter()
                .map(|r| {
                    r.set
                        .as_ref()
                        .map(|(rankers, results)| serde_json::json!([rankers, results]).to_string())
                })
                .collect(),
            units: rows.iter().map(|r| r.unit.clone()).collect(),
            segments: rows.iter().map(|r| r.segment).collect(),
            posted: rows.iter().map(|r| r.posted.clone()).collect(),
            methods: rows.iter().map(|r| r.method).collect(),
        });
        Columns {
            duel_ids: rows.iter().map(|r| r.duel_id).collect(),
            of: rows.iter().map(|r| r.experiment_id).collect(),
            firsts: rows.iter().map(|r| r.first).collect(),
            seconds: rows.iter().map(|r| r.second).collect(),
            winners: rows.iter().map(|r| r.winner).collect(),
            issued: rows.iter().map(|r| r.issued_at).collect(),
            posted_as: rows.iter().map(|r| r.posted_as).collect(),
            chosen_by: rows.iter().map(|r| r.chosen_by).collect(),
            extra,
        }
    }

    /// The statement of `form` for these rows, bound to them and to the experiments asked for.
    fn query<'q>(
        &'q self,
        form: Form,
        experiments: &'q [i64],
    ) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
        let sql = match (self.extra.is_some(), form) {
            (false, Form::Fresh) => ACKNOWLEDGE_PAIRS_FRESH,
            (false, Form::Retry) => ACKNOWLEDGE_PAIRS_RETRY,
            (true, Form::Fresh) => ACKNOWLEDGE_SETS_FRESH,
            (true, Form::Retry) => ACKNOWLEDGE_SETS_RETRY,
        };
        let query = sqlx::query(sql)
            .bind(experiments)
            .bind(&self.duel_ids)
            .bind(&self.of)
            .bind(&self.firsts)
            .bind(&self.seconds)
            .bind(&self.winners)
            .bind(&self.issued)
            .bind(&self.posted_as)
            .bind(&self.chosen_by);
        match &self.extra {
            None => query,
            Some(x) => query
                .bind(&x.sets)
                .bind(&x.units)
                .bind(&x.segments)
                .bind(&x.posted)
                .bind(&x.methods),
        }
    }
}

/// The live experiments among $1, and this transaction's id, which every row it inserts carries
/// as its place in the apply order.
macro_rules! live_and_xid {
    () => {
        "WITH live AS (
            SELECT id FROM experiments WHERE id = ANY($1::bigint[]) AND deleted_at IS NULL
        ), this AS (SELECT pg_current_xact_id()::text::bigint AS xid), inserted AS ("
    };
}

/// The insert of two-ranker duels: $2.. the rows' columns ($8 how each was posted, $9 which
/// layer chose it).
macro_rules! insert_pairs {
    () => {
        "INSERT INTO outcomes
            (duel_id, experiment_id, first_idx, second_idx, winner_idx, issued_at, posted_as,
             chosen_by, xid)
        SELECT d, e, f, s, w, i, pa, cb, (SELECT xid FROM this)
        FROM UNNEST($2::uuid[], $3::bigint[], $4::int[], $5::int[], $6::int[], $7::timestamptz[],
                    $8::smallint[], $9::smallint[])
             AS t(d, e, f, s, w, i, pa, cb)
        WHERE e IN (SELECT id FROM live)"
    };
}

/// The insert with multi-ranker queries, units, segments or posted values: as
/// [`insert_pairs`], and $10 each row's rankers and results as JSON (NULL for a two-ranker
/// duel), $11 its unit's keyed hash, $12 its segment's index, $13 its posted value (JSON) and
/// $14 its interleaving method.
macro_rules! insert_sets {
    () => {
        "INSERT INTO outcomes
            (duel_id, experiment_id, first_idx, second_idx, winner_idx, issued_at, posted_as,
             chosen_by, rankers, results, unit_hash, segment, posted, method, xid)
        SELECT d, e, f, s, w, i, pa, cb,
               CASE WHEN j IS NULL THEN NULL ELSE
                   ARRAY(SELECT jsonb_array_elements_text(j::jsonb -> 0)::int) END,
               CASE WHEN j IS NULL THEN NULL ELSE
                   ARRAY(SELECT jsonb_array_elements_text(j::jsonb -> 1)::smallint) END,
               u, g, p::jsonb, m, (SELECT xid FROM this)
        FROM UNNEST($2::uuid[], $3::bigint[], $4::int[], $5::int[], $6::int[],
                    $7::timestamptz[], $8::smallint[], $9::smallint[], $10::text[], $11::bytea[],
                    $12::smallint[], $13::text[], $14::text[])
             AS t(d, e, f, s, w, i, pa, cb, j, u, g, p, m)
        WHERE e IN (SELECT id FROM live)"
    };
}

/// For new duels only: one result row, the transaction's id, the rows inserted and the live
/// experiments. Fails on a duel recorded before.
macro_rules! fresh {
    () => {
        " RETURNING 1)
        SELECT (SELECT xid FROM this) AS xid, (SELECT count(*) FROM inserted) AS inserted,
               ARRAY(SELECT id FROM live) AS live"
    };
}

/// Skipping duels recorded before: a row per new duel (its id and apply order) and one per live
/// experiment.
macro_rules! retry {
    () => {
        " ON CONFLICT (duel_id) DO NOTHING RETURNING duel_id, xid)
        SELECT duel_id, xid, NULL::bigint AS live FROM inserted
        UNION ALL SELECT NULL, NULL, id FROM live"
    };
}

const ACKNOWLEDGE_PAIRS_FRESH: &str = concat!(live_and_xid!(), insert_pairs!(), fresh!());
const ACKNOWLEDGE_PAIRS_RETRY: &str = concat!(live_and_xid!(), insert_pairs!(), retry!());
const ACKNOWLEDGE_SETS_FRESH: &str = concat!(live_and_xid!(), insert_sets!(), fresh!());
const ACKNOWLEDGE_SETS_RETRY: &str = concat!(live_and_xid!(), insert_sets!(), retry!());

/// What is on record for each of these duels that has an outcome.
pub async fn recorded(
    conn: &mut PgConnection,
    duel_ids: &[Uuid],
) -> Result<Vec<(Uuid, Recorded)>, StoreError> {
    let rows = sqlx::query(
        "SELECT duel_id, winner_idx, results FROM outcomes WHERE duel_id = ANY($1::uuid[])",
    )
    .bind(duel_ids)
    .fetch_all(conn)
    .await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get("duel_id")?,
                (r.try_get("winner_idx")?, r.try_get("results")?),
            ))
        })
        .collect()
}
