//! Acknowledging outcomes and counting them: the acknowledgement inserts the new rows in one
//! transaction per group (the duel id is unique, so a retried outcome inserts nothing) and finds
//! what was already recorded; the experiment's owner later adds to the win and tie counts in the
//! transaction that writes the state (see [`super::apply`]).

use sqlx::{Postgres, Row, Transaction};
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

/// The live experiments among `ids`.
pub async fn live_experiments(
    tx: &mut Transaction<'_, Postgres>,
    ids: &[i64],
) -> Result<Vec<i64>, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT id FROM experiments WHERE id = ANY($1) AND deleted_at IS NULL")
            .bind(ids)
            .fetch_all(&mut **tx)
            .await?,
    )
}

/// Inserts the rows; returns the duel ids that were new (the others were recorded before), each
/// with its place in the apply order.
pub async fn insert_new(
    tx: &mut Transaction<'_, Postgres>,
    rows: &[OutcomeRow],
) -> Result<Vec<(Uuid, i64)>, StoreError> {
    let duel_ids: Vec<Uuid> = rows.iter().map(|r| r.duel_id).collect();
    let experiments: Vec<i64> = rows.iter().map(|r| r.experiment_id).collect();
    let firsts: Vec<i32> = rows.iter().map(|r| r.first).collect();
    let seconds: Vec<i32> = rows.iter().map(|r| r.second).collect();
    let winners: Vec<Option<i32>> = rows.iter().map(|r| r.winner).collect();
    let issued: Vec<chrono::DateTime<chrono::Utc>> = rows.iter().map(|r| r.issued_at).collect();
    if rows
        .iter()
        .all(|r| r.set.is_none() && r.unit.is_none() && r.segment.is_none())
    {
        // The pairwise path, as it always was: no array columns to fill.
        let inserted = sqlx::query_as(
            "INSERT INTO outcomes (duel_id, experiment_id, first_idx, second_idx, winner_idx, issued_at)
             SELECT * FROM UNNEST($1::uuid[], $2::bigint[], $3::int[], $4::int[], $5::int[], $6::timestamptz[])
             ON CONFLICT (duel_id) DO NOTHING RETURNING duel_id, xid",
        )
        .bind(&duel_ids)
        .bind(&experiments)
        .bind(&firsts)
        .bind(&seconds)
        .bind(&winners)
        .bind(&issued)
        .fetch_all(&mut **tx)
        .await?;
        return Ok(inserted);
    }
    // Arrays of arrays must be rectangular in Postgres, so the per-row arrays travel as JSON
    // text and are turned back into int[] and smallint[] by the query.
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
    let inserted = sqlx::query_as(
        "INSERT INTO outcomes
             (duel_id, experiment_id, first_idx, second_idx, winner_idx, issued_at, rankers, results,
              unit_hash, segment)
         SELECT d, e, f, s, w, i,
                CASE WHEN j IS NULL THEN NULL ELSE
                    ARRAY(SELECT jsonb_array_elements_text(j::jsonb -> 0)::int) END,
                CASE WHEN j IS NULL THEN NULL ELSE
                    ARRAY(SELECT jsonb_array_elements_text(j::jsonb -> 1)::smallint) END,
                u, g
         FROM UNNEST($1::uuid[], $2::bigint[], $3::int[], $4::int[], $5::int[],
                     $6::timestamptz[], $7::text[], $8::bytea[], $9::smallint[])
              AS t(d, e, f, s, w, i, j, u, g)
         ON CONFLICT (duel_id) DO NOTHING RETURNING duel_id, xid",
    )
    .bind(&duel_ids)
    .bind(&experiments)
    .bind(&firsts)
    .bind(&seconds)
    .bind(&winners)
    .bind(&issued)
    .bind(&sets)
    .bind(&units)
    .bind(&segments)
    .fetch_all(&mut **tx)
    .await?;
    Ok(inserted)
}

/// What is on record for each of these duels that has an outcome.
pub async fn recorded(
    tx: &mut Transaction<'_, Postgres>,
    duel_ids: &[Uuid],
) -> Result<Vec<(Uuid, Recorded)>, StoreError> {
    let rows = sqlx::query(
        "SELECT duel_id, winner_idx, results FROM outcomes WHERE duel_id = ANY($1::uuid[])",
    )
    .bind(duel_ids)
    .fetch_all(&mut **tx)
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

/// Adds win counts `(winner, loser, n)` for one experiment.
pub async fn add_wins(
    tx: &mut Transaction<'_, Postgres>,
    experiment: i64,
    cells: &[(i32, i32, i64)],
) -> Result<(), StoreError> {
    add_counts(
        tx,
        "INSERT INTO win_counts (experiment_id, winner, loser, wins)
         SELECT $1, * FROM UNNEST($2::int[], $3::int[], $4::bigint[])
         ON CONFLICT (experiment_id, winner, loser) DO UPDATE SET wins = win_counts.wins + EXCLUDED.wins",
        experiment,
        cells,
    )
    .await
}

/// Adds tie counts `(a, b, n)` with a <= b for one experiment.
pub async fn add_ties(
    tx: &mut Transaction<'_, Postgres>,
    experiment: i64,
    cells: &[(i32, i32, i64)],
) -> Result<(), StoreError> {
    add_counts(
        tx,
        "INSERT INTO tie_counts (experiment_id, a, b, ties)
         SELECT $1, * FROM UNNEST($2::int[], $3::int[], $4::bigint[])
         ON CONFLICT (experiment_id, a, b) DO UPDATE SET ties = tie_counts.ties + EXCLUDED.ties",
        experiment,
        cells,
    )
    .await
}

/// Runs one of the count upserts above with the cells as three arrays.
async fn add_counts(
    tx: &mut Transaction<'_, Postgres>,
    sql: &'static str,
    experiment: i64,
    cells: &[(i32, i32, i64)],
) -> Result<(), StoreError> {
    if cells.is_empty() {
        return Ok(());
    }
    let (a, b, n) = unzip3(cells);
    sqlx::query(sql)
        .bind(experiment)
        .bind(&a)
        .bind(&b)
        .bind(&n)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

fn unzip3(cells: &[(i32, i32, i64)]) -> (Vec<i32>, Vec<i32>, Vec<i64>) {
    let mut a = Vec::with_capacity(cells.len());
    let mut b = Vec::with_capacity(cells.len());
    let mut n = Vec::with_capacity(cells.len());
    for &(x, y, c) in cells {
        a.push(x);
        b.push(y);
        n.push(c);
    }
    (a, b, n)
}
