//! Notices between replicas through Postgres' LISTEN/NOTIFY: a replica that acknowledged outcomes
//! of an experiment another replica owns tells the owner at once, instead of the owner finding
//! them on its next poll. A notification can be lost (a listener reconnecting misses what was
//! sent meanwhile), so it only shortens the wait; the owners' slow poll still finds every row.

use sqlx::PgConnection;
use sqlx::postgres::{PgListener, PgPool};

use super::StoreError;

/// The channel of "outcomes of these experiments wait for their owner"; the payload is the
/// experiment ids, separated by commas.
pub const OUTCOMES_WAITING: &str = "joust_outcomes_waiting";

/// Ids per notification: a payload must stay under 8,000 bytes (an id is at most 20 digits and a
/// comma).
const IDS_PER_NOTICE: usize = 300;

/// Sends [`OUTCOMES_WAITING`] for `ids` (delivered when the statement commits, on its own).
pub async fn notify_outcomes_waiting(
    conn: &mut PgConnection,
    ids: &[i64],
) -> Result<(), StoreError> {
    for chunk in ids.chunks(IDS_PER_NOTICE) {
        let payload = chunk
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(OUTCOMES_WAITING)
            .bind(payload)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// The experiment ids of an [`OUTCOMES_WAITING`] payload (anything else in it is ignored).
pub fn waiting_ids(payload: &str) -> Vec<i64> {
    payload
        .split(',')
        .filter_map(|id| id.trim().parse().ok())
        .collect()
}

/// A session listening on [`OUTCOMES_WAITING`] (it holds one of the pool's connections).
pub async fn listen_outcomes_waiting(pool: &PgPool) -> Result<PgListener, StoreError> {
    let mut listener = PgListener::connect_with(pool).await?;
    // Reconnection is the caller's: it waits between attempts while the database is away.
    listener.eager_reconnect(false);
    listener.listen(OUTCOMES_WAITING).await?;
    Ok(listener)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_carry_ids_and_ignore_the_rest() {
        assert_eq!(waiting_ids("1,22,333"), vec![1, 22, 333]);
        assert_eq!(waiting_ids(""), Vec::<i64>::new());
        assert_eq!(waiting_ids("7,x, 8"), vec![7, 8]);
        let ids: Vec<i64> = (0..IDS_PER_NOTICE as i64).map(|i| i64::MIN + i).collect();
        let longest = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        assert!(longest.len() < 8000, "{}", longest.len());
    }
}
