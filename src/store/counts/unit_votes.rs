//! Evidence per unit (see `bandit::unit_evidence`): which units were counted for which pair,
//! and the unit-level win counts.

use sqlx::{Postgres, Transaction};

use super::upsert::{self as count_upsert, Key};
use crate::store::StoreError;

/// Records the units' votes `(unit hash, winner, loser)` not recorded before (one per unit and
/// pair; a unit already counted for the pair is passed over); returns the `(winner, loser)` of
/// those that counted.
pub async fn record_new(
    tx: &mut Transaction<'_, Postgres>,
    experiment: i64,
    votes: &[(Vec<u8>, i32, i32)],
) -> Result<Vec<(i32, i32)>, StoreError> {
    if votes.is_empty() {
        return Ok(Vec::new());
    }
    let units: Vec<Vec<u8>> = votes.iter().map(|v| v.0.clone()).collect();
    let winners: Vec<i32> = votes.iter().map(|v| v.1).collect();
    let losers: Vec<i32> = votes.iter().map(|v| v.2).collect();
    Ok(sqlx::query_as(
        "WITH v AS (SELECT * FROM UNNEST($2::bytea[], $3::int[], $4::int[]) AS t(u, w, l)),
              ins AS (
                INSERT INTO unit_pair_votes (experiment_id, a, b, unit_hash)
                SELECT $1, LEAST(w, l), GREATEST(w, l), u FROM v
                ON CONFLICT DO NOTHING RETURNING a, b, unit_hash)
         SELECT v.w, v.l FROM ins JOIN v ON v.u = ins.unit_hash
              AND LEAST(v.w, v.l) = ins.a AND GREATEST(v.w, v.l) = ins.b",
    )
    .bind(experiment)
    .bind(&units)
    .bind(&winners)
    .bind(&losers)
    .fetch_all(&mut **tx)
    .await?)
}

/// Adds unit-level win cells `(winner, loser, n)`.
pub async fn add_wins(
    tx: &mut Transaction<'_, Postgres>,
    experiment: i64,
    cells: &[(i32, i32, i64)],
) -> Result<(), StoreError> {
    count_upsert::add(
        tx,
        &count_upsert::UNIT_WIN_COUNTS,
        experiment,
        Key::None,
        cells,
    )
    .await
}
