//! The webhook outbox: events written in the transaction of the change that caused them, then
//! claimed, posted and marked by the delivery task of any replica.

use sqlx::{PgPool, Postgres, Row, Transaction};
use uuid::Uuid;

use super::StoreError;

/// An event to post.
pub struct NewEvent<'a> {
    pub event_id: Uuid,
    pub experiment_id: i64,
    pub event: &'a str,
    pub body: &'a str,
}

/// Writes events into the outbox, inside the caller's transaction.
/// An event whose id is already in the outbox is the same event (its id is derived from what
/// caused it): it is kept once.
pub async fn enqueue(
    tx: &mut Transaction<'_, Postgres>,
    events: &[NewEvent<'_>],
) -> Result<(), StoreError> {
    for e in events {
        sqlx::query(
            "INSERT INTO webhook_deliveries (event_id, experiment_id, event, body)
             VALUES ($1, $2, $3, $4) ON CONFLICT (event_id) DO NOTHING",
        )
        .bind(e.event_id)
        .bind(e.experiment_id)
        .bind(e.event)
        .bind(e.body)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// A delivery claimed for one attempt, with where it goes now.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub id: i64,
    pub experiment_id: i64,
    pub event_id: Uuid,
    pub event: String,
    pub body: String,
    /// Attempts including this one.
    pub attempts: i32,
    /// `None` when the experiment no longer has a webhook (or was deleted).
    pub target: Option<(String, String)>,
}

/// Claims up to `limit` due deliveries for one attempt each: their next attempt moves `lease_ms`
/// ahead (so no other replica takes them while this one posts, and another retries them if this
/// one dies) and their attempt count goes up. Rows another replica is claiming are skipped.
pub async fn claim_due(
    pool: &PgPool,
    limit: i64,
    lease_ms: i64,
) -> Result<Vec<Claimed>, StoreError> {
    let rows = sqlx::query(
        "UPDATE webhook_deliveries d
         SET next_attempt_at = now() + $2 * interval '1 millisecond', attempts = d.attempts + 1
         FROM experiments e
         WHERE e.id = d.experiment_id AND d.id IN (
             SELECT id FROM webhook_deliveries
             WHERE delivered_at IS NULL AND abandoned_at IS NULL AND next_attempt_at <= now()
             ORDER BY next_attempt_at, id LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING d.id, d.experiment_id, d.event_id, d.event, d.body, d.attempts,
                   CASE WHEN e.deleted_at IS NULL THEN e.webhook_url END AS url,
                   e.webhook_secret AS secret",
    )
    .bind(limit)
    .bind(lease_ms)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            let url: Option<String> = r.try_get("url")?;
            let secret: Option<String> = r.try_get("secret")?;
            Ok(Claimed {
                id: r.try_get("id")?,
                experiment_id: r.try_get("experiment_id")?,
                event_id: r.try_get("event_id")?,
                event: r.try_get("event")?,
                body: r.try_get("body")?,
                attempts: r.try_get("attempts")?,
                target: url.zip(secret),
            })
        })
        .collect()
}

pub async fn mark_delivered(pool: &PgPool, id: i64) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE webhook_deliveries SET delivered_at = now(), last_error = NULL WHERE id = $1",
    )
    .bind(id)
    .execute(pool)
    .await?;
    Ok(())
}

/// Records a failed attempt; the next one is due after `retry_in_ms`.
pub async fn mark_failed(
    pool: &PgPool,
    id: i64,
    error: &str,
    retry_in_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE webhook_deliveries
         SET last_error = $2, next_attempt_at = now() + $3 * interval '1 millisecond'
         WHERE id = $1",
    )
    .bind(id)
    .bind(error)
    .bind(retry_in_ms)
    .execute(pool)
    .await?;
    Ok(())
}

/// Gives a delivery up for good.
pub async fn mark_abandoned(pool: &PgPool, id: i64, error: &str) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE webhook_deliveries SET abandoned_at = now(), last_error = $2 WHERE id = $1",
    )
    .bind(id)
    .bind(error)
    .execute(pool)
    .await?;
    Ok(())
}

/// Deliveries not yet delivered nor abandoned, over every experiment (a gauge for `/metrics`).
pub async fn pending(pool: &PgPool) -> Result<i64, StoreError> {
    let n = sqlx::query_scalar(
        "SELECT COUNT(*) FROM webhook_deliveries WHERE delivered_at IS NULL AND abandoned_at IS NULL",
    )
    .fetch_one(pool)
    .await?;
    Ok(n)
}
