//! Conversions: acknowledging them (a plain durable insert, exactly once per (duel, metric,
//! event id)) and reading them back in apply order for the experiment's owner.

use serde_json::Value;
use sqlx::{PgPool, Postgres, Row, Transaction};
use uuid::Uuid;

use super::StoreError;
use super::apply::HORIZON;

/// A position in the conversions' apply order: (inserting transaction id, sequence number).
pub type ConversionCursor = (i64, i64);

/// Most conversions one duel may have, over all its metrics. A shown list of results leads to a
/// handful of purchases or bookings, not hundreds; the cap bounds what one token (which a page
/// hands to the browser) can write.
pub const MAX_PER_DUEL: i64 = 100;

/// One conversion to acknowledge.
#[derive(Debug, Clone)]
pub struct NewConversion {
    pub duel_id: Uuid,
    pub metric: String,
    pub event_id: String,
    pub experiment_id: i64,
    pub first: i32,
    pub second: i32,
    pub document: String,
    pub position: i32,
    pub value: Option<f64>,
    pub interleaving: Value,
    pub issued_at: chrono::DateTime<chrono::Utc>,
    pub occurred_at: chrono::DateTime<chrono::Utc>,
}

/// What acknowledging one conversion did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    Recorded,
    /// The same event was recorded before (a retry).
    Duplicate,
    /// The same (duel, metric, event id) was recorded with another document or value.
    Conflict,
    /// The duel has [`MAX_PER_DUEL`] conversions already.
    LimitReached,
    /// The experiment was deleted meanwhile.
    UnknownExperiment,
}

/// Inserts the conversions in one transaction and commits (durably) before returning.
pub async fn insert_all(
    pool: &PgPool,
    items: &[NewConversion],
) -> Result<Vec<Inserted>, StoreError> {
    let mut tx = pool.begin().await?;
    let mut ids: Vec<i64> = items.iter().map(|c| c.experiment_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let live: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM experiments WHERE id = ANY($1) AND deleted_at IS NULL")
            .bind(&ids)
            .fetch_all(&mut *tx)
            .await?;
    // Counting a duel's conversions and inserting one more must not interleave with another
    // transaction doing the same, or two could both see room for the last one. The duels' locks
    // are taken in one order, so two batches sharing duels cannot deadlock.
    let mut duels: Vec<Uuid> = items.iter().map(|c| c.duel_id).collect();
    duels.sort_unstable();
    duels.dedup();
    sqlx::query(
        "SELECT count(pg_advisory_xact_lock(hashtextextended(d::text, 0)))
         FROM (SELECT d FROM unnest($1::uuid[]) AS d ORDER BY d) AS ordered",
    )
    .bind(&duels)
    .execute(&mut *tx)
    .await?;
    let mut out = Vec::with_capacity(items.len());
    for c in items {
        if !live.contains(&c.experiment_id) {
            out.push(Inserted::UnknownExperiment);
            continue;
        }
        out.push(insert_one(&mut tx, c).await?);
    }
    tx.commit().await?;
    Ok(out)
}

async fn insert_one(
    tx: &mut Transaction<'_, Postgres>,
    c: &NewConversion,
) -> Result<Inserted, StoreError> {
    let recorded: i64 = sqlx::query_scalar("SELECT count(*) FROM conversions WHERE duel_id = $1")
        .bind(c.duel_id)
        .fetch_one(&mut **tx)
        .await?;
    if recorded >= MAX_PER_DUEL {
        // A retry of a recorded event is still a duplicate, not a refusal.
        return Ok(match earlier(tx, c).await? {
            Some(true) => Inserted::Duplicate,
            Some(false) => Inserted::Conflict,
            None => Inserted::LimitReached,
        });
    }
    let inserted = sqlx::query(
        "INSERT INTO conversions (duel_id, metric, event_id, experiment_id, first_idx, second_idx,
                                  document, position, value, interleaving, issued_at, occurred_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (duel_id, metric, event_id) DO NOTHING",
    )
    .bind(c.duel_id)
    .bind(&c.metric)
    .bind(&c.event_id)
    .bind(c.experiment_id)
    .bind(c.first)
    .bind(c.second)
    .bind(&c.document)
    .bind(c.position)
    .bind(c.value)
    .bind(&c.interleaving)
    .bind(c.issued_at)
    .bind(c.occurred_at)
    .execute(&mut **tx)
    .await?
    .rows_affected();
    if inserted == 1 {
        return Ok(Inserted::Recorded);
    }
    Ok(match earlier(tx, c).await? {
        Some(true) => Inserted::Duplicate,
        _ => Inserted::Conflict,
    })
}

/// Whether the same (duel, metric, event id) was recorded before, and if so whether with the
/// same document and value.
async fn earlier(
    tx: &mut Transaction<'_, Postgres>,
    c: &NewConversion,
) -> Result<Option<bool>, StoreError> {
    let row = sqlx::query(
        "SELECT document, value FROM conversions
         WHERE duel_id = $1 AND metric = $2 AND event_id = $3",
    )
    .bind(c.duel_id)
    .bind(&c.metric)
    .bind(&c.event_id)
    .fetch_optional(&mut **tx)
    .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let document: String = row.try_get("document")?;
    let value: Option<f64> = row.try_get("value")?;
    Ok(Some(document == c.document && value == c.value))
}

/// One acknowledged conversion, as the owner applies it.
#[derive(Debug, Clone)]
pub struct PendingConversion {
    pub at: ConversionCursor,
    pub duel_id: Uuid,
    pub metric: String,
    pub first: i32,
    pub second: i32,
    pub position: i32,
    pub value: Option<f64>,
    pub interleaving: Value,
    pub issued_at: chrono::DateTime<chrono::Utc>,
}

fn pending_from_row(r: &sqlx::postgres::PgRow) -> Result<PendingConversion, sqlx::Error> {
    Ok(PendingConversion {
        at: (r.try_get("xid")?, r.try_get("seq")?),
        duel_id: r.try_get("duel_id")?,
        metric: r.try_get("metric")?,
        first: r.try_get("first_idx")?,
        second: r.try_get("second_idx")?,
        position: r.try_get("position")?,
        value: r.try_get("value")?,
        interleaving: r.try_get("interleaving")?,
        issued_at: r.try_get("issued_at")?,
    })
}

const PENDING_COLUMNS: &str =
    "xid, seq, duel_id, metric, first_idx, second_idx, position, value, interleaving, issued_at";

/// The experiment's final conversions after `after`, in apply order, at most `limit`.
pub async fn pending(
    pool: &PgPool,
    experiment: i64,
    after: ConversionCursor,
    limit: i64,
) -> Result<Vec<PendingConversion>, StoreError> {
    let sql = format!(
        "SELECT {PENDING_COLUMNS} FROM conversions
         WHERE experiment_id = $1 AND (xid, seq) > ($2, $3) AND xid < {HORIZON}
         ORDER BY xid, seq LIMIT $4"
    );
    let rows = sqlx::query(&sql)
        .bind(experiment)
        .bind(after.0)
        .bind(after.1)
        .bind(limit)
        .fetch_all(pool)
        .await?;
    Ok(rows
        .iter()
        .map(pending_from_row)
        .collect::<Result<_, _>>()?)
}

/// Every applied conversion of one duel and metric (at or before `through`), in apply order:
/// what deciding the duel's outcome when its window closes credits.
pub async fn of_duel(
    pool: &PgPool,
    experiment: i64,
    metric: &str,
    duel: Uuid,
    through: ConversionCursor,
) -> Result<Vec<PendingConversion>, StoreError> {
    let sql = format!(
        "SELECT {PENDING_COLUMNS} FROM conversions
         WHERE duel_id = $1 AND metric = $2 AND experiment_id = $3 AND (xid, seq) <= ($4, $5)
         ORDER BY xid, seq"
    );
    let rows = sqlx::query(&sql)
        .bind(duel)
        .bind(metric)
        .bind(experiment)
        .bind(through.0)
        .bind(through.1)
        .fetch_all(pool)
        .await?;
    Ok(rows
        .iter()
        .map(pending_from_row)
        .collect::<Result<_, _>>()?)
}

/// Moves the cursor from `from` to `to` if it is still at `from` (locking the state row, which
/// orders this application after any other); `false` when another application moved it first,
/// and the transaction must then be rolled back.
pub async fn advance_cursor(
    tx: &mut Transaction<'_, Postgres>,
    experiment: i64,
    from: ConversionCursor,
    to: ConversionCursor,
) -> Result<bool, StoreError> {
    let n = sqlx::query(
        "UPDATE experiment_state SET conversions_xid = $4, conversions_seq = $5
         WHERE experiment_id = $1 AND conversions_xid = $2 AND conversions_seq = $3",
    )
    .bind(experiment)
    .bind(from.0)
    .bind(from.1)
    .bind(to.0)
    .bind(to.1)
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(n == 1)
}
