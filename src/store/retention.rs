//! Pruning raw outcome rows. A row is what makes its duel's outcome exactly-once, which matters
//! only while the duel can still be posted (its attribution window); the counts, the win matrix
//! and the history live in their own tables and never read these rows back. So a row may go once
//! its window has ended and the configured retention has passed on top.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::time::Duration;
use uuid::Uuid;

use super::StoreError;

/// Deletes at most `batch` outcome rows whose duel was issued more than its experiment's
/// attribution window plus `retention` before now (Postgres' clock); returns how many went.
///
/// Duel ids are UUIDv7 (their first 48 bits are the issue time in milliseconds), so the oldest
/// rows are found by walking the primary key from its start up to the youngest id that could be
/// due, with no index on the issue time to slow every insert down.
pub async fn prune_outcomes(
    pool: &PgPool,
    retention: Duration,
    batch: i64,
) -> Result<u64, StoreError> {
    // Every window is at least a second long, so nothing issued after this can be due.
    let youngest_due = Utc::now() - retention - Duration::from_secs(1);
    let done = sqlx::query(
        "DELETE FROM outcomes WHERE duel_id IN (
             SELECT o.duel_id FROM outcomes o JOIN experiments e ON e.id = o.experiment_id
             JOIN experiment_state s ON s.experiment_id = o.experiment_id
             WHERE o.duel_id < $1
               AND o.issued_at < now() - make_interval(secs => e.attribution_window_secs + $2)
               -- never a row still waiting to be applied
               AND (o.xid, o.duel_id) <= (s.applied_xid, s.applied_duel)
             ORDER BY o.duel_id
             LIMIT $3
             FOR UPDATE OF o SKIP LOCKED)",
    )
    .bind(uuid_v7_floor(youngest_due))
    .bind(retention.as_secs_f64())
    .bind(batch)
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}

/// Deletes at most `batch` records of applications made more than the attribution window plus
/// `keep` ago: they say how the outcome rows of their time were grouped, and go with those rows.
pub async fn prune_applies(pool: &PgPool, keep: Duration, batch: i64) -> Result<u64, StoreError> {
    let done = sqlx::query(
        "DELETE FROM outcome_applies WHERE (experiment_id, version) IN (
             SELECT a.experiment_id, a.version FROM outcome_applies a
             JOIN experiments e ON e.id = a.experiment_id
             WHERE a.applied_at < now() - make_interval(secs => e.attribution_window_secs + $1)
             LIMIT $2 FOR UPDATE OF a SKIP LOCKED)",
    )
    .bind(keep.as_secs_f64())
    .bind(batch)
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}

/// The smallest UUIDv7 of the millisecond `t`: every duel id issued before `t` sorts below it.
fn uuid_v7_floor(t: DateTime<Utc>) -> Uuid {
    let mut bytes = [0u8; 16];
    bytes[..6].copy_from_slice(&t.timestamp_millis().max(0).to_be_bytes()[2..]);
    Uuid::from_bytes(bytes)
}

/// Raw outcome rows in the table (for tests and operators).
pub async fn outcome_rows(pool: &PgPool) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar("SELECT count(*) FROM outcomes")
        .fetch_one(pool)
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_sorts_between_duels_issued_before_and_after() {
        let t = DateTime::from_timestamp_millis(1_700_000_000_123).unwrap();
        let floor = uuid_v7_floor(t);
        let duel = |ms: i64| {
            let mut b = [0xffu8; 16];
            b[..6].copy_from_slice(&ms.to_be_bytes()[2..]);
            Uuid::from_bytes(b)
        };
        assert!(duel(1_700_000_000_122) < floor);
        assert!(duel(1_700_000_000_123) > floor);
    }
}
