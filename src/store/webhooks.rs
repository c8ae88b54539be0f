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
    /// Attempts including this one; it also fences the claim: a result is recorded only while
    /// the row still counts this many attempts (no later claim took it over).
    pub attempts: i32,
    /// `None` when the experiment no longer has a webhook (or was deleted).
    pub target: Option<(String, String)>,
}

/// What a claim leaves out.
#[derive(Debug, Default)]
pub struct Exclusions<'a> {
    /// Experiments with an attempt in flight on this replica.
    pub experiments: &'a [i64],
    /// Receivers (`scheme://host:port`, see `engine::webhooks::receivers::receiver_key`) with
    /// no free slot on this replica.
    pub receivers: &'a [String],
}

/// Claims up to `limit` due deliveries for one attempt each, at most one per experiment (its
/// oldest due event) and none of `excluded`: their next attempt moves `lease_ms` ahead (so no
/// other replica takes them while this one posts, and another retries them if this one dies)
/// and their attempt count goes up. Rows another replica is claiming are skipped.
pub async fn claim_due(
    pool: &PgPool,
    limit: i64,
    lease_ms: i64,
    excluded: &Exclusions<'_>,
) -> Result<Vec<Claimed>, StoreError> {
    // The receiver of a URL is cut as `receiver_key` cuts it. The scan looks at a few times
    // `limit` rows, as several due events of one experiment yield one claim.
    let rows = sqlx::query(
        "WITH due AS (
             SELECT d.id, d.experiment_id
             FROM webhook_deliveries d JOIN experiments e ON e.id = d.experiment_id
             WHERE d.delivered_at IS NULL AND d.abandoned_at IS NULL AND d.next_attempt_at <= now()
               AND d.experiment_id <> ALL($3)
               AND (e.webhook_url IS NULL OR e.deleted_at IS NOT NULL
                    OR coalesce(substring(e.webhook_url from '^[^:/?#]*://[^/?#]*'), e.webhook_url)
                       <> ALL($4))
             ORDER BY d.next_attempt_at, d.id
             LIMIT $1 * 8
             FOR UPDATE OF d SKIP LOCKED),
         oldest AS (SELECT DISTINCT ON (experiment_id) id FROM due ORDER BY experiment_id, id),
         chosen AS (SELECT id FROM oldest ORDER BY id LIMIT $1)
         UPDATE webhook_deliveries d
         SET next_attempt_at = now() + $2 * interval '1 millisecond', attempts = d.attempts + 1
         FROM experiments e
         WHERE e.id = d.experiment_id AND d.id IN (SELECT id FROM chosen)
         RETURNING d.id, d.experiment_id, d.event_id, d.event, d.body, d.attempts,
                   CASE WHEN e.deleted_at IS NULL THEN e.webhook_url END AS url,
                   e.webhook_secret AS secret",
    )
    .bind(limit)
    .bind(lease_ms)
    .bind(excluded.experiments)
    .bind(excluded.receivers)
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

/// Hands a claimed delivery back unattempted (its receiver had no free slot after all): due
/// again now, its attempt not counted.
pub async fn release(pool: &PgPool, c: &Claimed) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE webhook_deliveries SET next_attempt_at = now(), attempts = attempts - 1
         WHERE id = $1 AND attempts = $2 AND delivered_at IS NULL AND abandoned_at IS NULL",
    )
    .bind(c.id)
    .bind(c.attempts)
    .execute(pool)
    .await?;
    Ok(())
}

pub async fn mark_delivered(pool: &PgPool, c: &Claimed) -> Result<(), StoreError> {
    // Delivered is delivered, whichever claim posted it.
    sqlx::query(
        "UPDATE webhook_deliveries SET delivered_at = now(), last_error = NULL
         WHERE id = $1 AND delivered_at IS NULL",
    )
    .bind(c.id)
    .execute(pool)
    .await?;
    Ok(())
}

/// Records a failed attempt; the next one is due after `retry_in_ms`. Nothing changes when a
/// later claim has taken the delivery over (its own attempt decides).
pub async fn mark_failed(
    pool: &PgPool,
    c: &Claimed,
    error: &str,
    retry_in_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE webhook_deliveries
         SET last_error = $3, next_attempt_at = now() + $4 * interval '1 millisecond'
         WHERE id = $1 AND attempts = $2 AND delivered_at IS NULL AND abandoned_at IS NULL",
    )
    .bind(c.id)
    .bind(c.attempts)
    .bind(error)
    .bind(retry_in_ms)
    .execute(pool)
    .await?;
    Ok(())
}

/// Gives a delivery up for good (unless a later claim has taken it over).
pub async fn mark_abandoned(pool: &PgPool, c: &Claimed, error: &str) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE webhook_deliveries SET abandoned_at = now(), last_error = $3
         WHERE id = $1 AND attempts = $2 AND delivered_at IS NULL AND abandoned_at IS NULL",
    )
    .bind(c.id)
    .bind(c.attempts)
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

/// Deletes at most `batch` deliveries delivered or abandoned more than `keep` ago; returns how
/// many went. Pending deliveries are never deleted.
pub async fn prune_done(
    pool: &PgPool,
    keep: std::time::Duration,
    batch: i64,
) -> Result<u64, StoreError> {
    let done = sqlx::query(
        "DELETE FROM webhook_deliveries WHERE id IN (
             SELECT id FROM webhook_deliveries
             WHERE coalesce(delivered_at, abandoned_at) < now() - make_interval(secs => $1)
             LIMIT $2 FOR UPDATE SKIP LOCKED)",
    )
    .bind(keep.as_secs_f64())
    .bind(batch)
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}
