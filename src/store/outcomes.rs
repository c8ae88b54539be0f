//! Acknowledging outcomes and counting them: the acknowledgement inserts the new rows in one
//! statement per group (the duel id is unique, so a retried outcome inserts nothing), then finds
//! what was already recorded for the others; the experiment's owner later adds to the win and tie counts in the
//! transaction that writes the state (see [`super::apply`]).

use sqlx::{PgPool, Row};
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
}

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
pub async fn acknowledge(
    pool: &PgPool,
    experiments: &[i64],
    rows: &[OutcomeRow],
) -> Result<Acknowledged, StoreError> {
    let duel_ids: Vec<Uuid> = rows.iter().map(|r| r.duel_id).collect();
    let of: Vec<i64> = rows.iter().map(|r| r.experiment_id).collect();
    let firsts: Vec<i32> = rows.iter().map(|r| r.first).collect();
    let seconds: Vec<i32> = rows.iter().map(|r| r.second).collect();
    let winners: Vec<Option<i32>> = rows.iter().map(|r| r.winner).collect();
    let issued: Vec<chrono::DateTime<chrono::Utc>> = rows.iter().map(|r| r.issued_at).collect();
    let pairwise = rows
        .iter()
        .all(|r| r.set.is_none() && r.unit.is_none() && r.segment.is_none());
    // The pairwise form fills no array columns; arrays of arrays must be rectangular in
    // Postgres, so a query's per-row arrays travel as JSON text and are turned back into int[]
    // and smallint[] by the statement.
    let sql = if pairwise {
        ACKNOWLEDGE_PAIRS
    } else {
        ACKNOWLEDGE_SETS
    };
    let mut query = sqlx::query(sql)
        .bind(experiments)
        .bind(&duel_ids)
        .bind(&of)
        .bind(&firsts)
        .bind(&seconds)
        .bind(&winners)
        .bind(&issued);
    if !pairwise {
        let sets: Vec<Option<String>> = rows
            .iter()
            .map(|r| {
                r.set
                    .as_ref()
                    .map(|(rankers, results)| serde_json::json!([rankers, results]).to_string())
            })
            .collect();
        let units: Vec<Option<Vec<u8>>> = rows.iter().map(|r| r.unit.clone()).collect();
        let segments: Vec<Option<i16>> = rows.iter().map(|r| r.segment).collect();
        query = query.bind(sets).bind(units).bind(segments);
    }
    let mut out = Acknowledged::default();
    for row in query.fetch_all(pool).await? {
        match row.try_get::<Option<i64>, _>("live")? {
            Some(id) => out.live.push(id),
            None => out
                .inserted
                .push((row.try_get("duel_id")?, row.try_get("xid")?)),
        }
    }
    Ok(out)
}

/// [`acknowledge`] of two-ranker duels: $1 the experiments, $2.. the rows' columns.
const ACKNOWLEDGE_PAIRS: &str = "
    WITH live AS (
        SELECT id FROM experiments WHERE id = ANY($1::bigint[]) AND deleted_at IS NULL
    ), inserted AS (
        INSERT INTO outcomes (duel_id, experiment_id, first_idx, second_idx, winner_idx, issued_at)
        SELECT d, e, f, s, w, i
        FROM UNNEST($2::uuid[], $3::bigint[], $4::int[], $5::int[], $6::int[], $7::timestamptz[])
             AS t(d, e, f, s, w, i)
        WHERE e IN (SELECT id FROM live)
        ON CONFLICT (duel_id) DO NOTHING RETURNING duel_id, xid
    )
    SELECT duel_id, xid, NULL::bigint AS live FROM inserted
    UNION ALL SELECT NULL, NULL, id FROM live";

/// [`acknowledge`] with multi-ranker queries, units or segments: as [`ACKNOWLEDGE_PAIRS`], and $8
/// each row's rankers and results as JSON (NULL for a two-ranker duel), $9 its unit's keyed hash
/// and $10 its segment's index.
const ACKNOWLEDGE_SETS: &str = "
    WITH live AS (
        SELECT id FROM experiments WHERE id = ANY($1::bigint[]) AND deleted_at IS NULL
    ), inserted AS (
        INSERT INTO outcomes
            (duel_id, experiment_id, first_idx, second_idx, winner_idx, issued_at, rankers, results,
             unit_hash, segment)
        SELECT d, e, f, s, w, i,
               CASE WHEN j IS NULL THEN NULL ELSE
                   ARRAY(SELECT jsonb_array_elements_text(j::jsonb -> 0)::int) END,
               CASE WHEN j IS NULL THEN NULL ELSE
                   ARRAY(SELECT jsonb_array_elements_text(j::jsonb -> 1)::smallint) END,
               u, g
        FROM UNNEST($2::uuid[], $3::bigint[], $4::int[], $5::int[], $6::int[],
                    $7::timestamptz[], $8::text[], $9::bytea[], $10::smallint[])
             AS t(d, e, f, s, w, i, j, u, g)
        WHERE e IN (SELECT id FROM live)
        ON CONFLICT (duel_id) DO NOTHING RETURNING duel_id, xid
    )
    SELECT duel_id, xid, NULL::bigint AS live FROM inserted
    UNION ALL SELECT NULL, NULL, id FROM live";

/// What is on record for each of these duels that has an outcome.
pub async fn recorded(
    pool: &PgPool,
    duel_ids: &[Uuid],
) -> Result<Vec<(Uuid, Recorded)>, StoreError> {
    let rows = sqlx::query(
        "SELECT duel_id, winner_idx, results FROM outcomes WHERE duel_id = ANY($1::uuid[])",
    )
    .bind(duel_ids)
    .fetch_all(pool)
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
