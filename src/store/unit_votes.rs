//! Evidence per unit (see `bandit::unit_evidence`): which units were counted for which pair,
//! and the unit-level win counts.

use sqlx::{PgConnection, Postgres, Transaction};

use super::StoreError;

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
    if cells.is_empty() {
        return Ok(());
    }
    let w: Vec<i32> = cells.iter().map(|c| c.0).collect();
    let l: Vec<i32> = cells.iter().map(|c| c.1).collect();
    let n: Vec<i64> = cells.iter().map(|c| c.2).collect();
    sqlx::query(
        "INSERT INTO unit_win_counts (experiment_id, winner, loser, wins)
         SELECT $1, * FROM UNNEST($2::int[], $3::int[], $4::bigint[])
         ON CONFLICT (experiment_id, winner, loser)
         DO UPDATE SET wins = unit_win_counts.wins + EXCLUDED.wins",
    )
    .bind(experiment)
    .bind(&w)
    .bind(&l)
    .bind(&n)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The unit-level win cells `(winner, loser, wins)`.
pub async fn wins(
    conn: &mut PgConnection,
    experiment: i64,
) -> Result<Vec<(i32, i32, i64)>, StoreError> {
    Ok(
        sqlx::query_as("SELECT winner, loser, wins FROM unit_win_counts WHERE experiment_id = $1")
            .bind(experiment)
            .fetch_all(conn)
            .await?,
    )
}
