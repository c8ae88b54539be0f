//! Notices between replicas through Postgres' LISTEN/NOTIFY: a replica that acknowledged outcomes
//! of an experiment another replica owns tells the owner at once, instead of the owner finding
//! them on its next poll. A notification can be lost (a listener reconnecting misses what was
//! sent meanwhile), so it only shortens the wait; the owners' slow poll still finds every row.

use sqlx::PgConnection;
use sqlx::postgres::{PgListener, PgPool};

use super::StoreError;

/// The channel of "outcomes of these experiments wait for their owner"; the payload is the
/// experiments, separated by commas, each as its id and the transaction id of the last outcome
/// acknowledged for it (`id:xid`), or as its id alone.
pub const OUTCOMES_WAITING: &str = "joust_outcomes_waiting";

/// Experiments per notification: a payload must stay under 8,000 bytes (an id and an xid are at
/// most 20 digits each, with a colon and a comma).
const IDS_PER_NOTICE: usize = 150;

/// One experiment of a notice: its id and the transaction id of the last outcome acknowledged
/// for it, which tells its owner how far it must apply before it has them all.
pub type Waiting = (i64, Option<i64>);

/// Sends [`OUTCOMES_WAITING`] for `waiting` (delivered when the statement commits, on its own).
pub async fn notify_outcomes_waiting(
    conn: &mut PgConnection,
    waiting: &[Waiting],
) -> Result<(), StoreError> {
    for chunk in waiting.chunks(IDS_PER_NOTICE) {
        let payload = chunk
            .iter()
            .map(|(id, xid)| match xid {
                Some(xid) => format!("{id}:{xid}"),
                None => id.to_string(),
            })
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

/// The experiments of an [`OUTCOMES_WAITING`] payload (anything else in it is ignored).
pub fn waiting_ids(payload: &str) -> Vec<Waiting> {
    payload
        .split(',')
        .filter_map(|entry| {
            let (id, xid) = match entry.split_once(':') {
                Some((id, xid)) => (id, Some(xid.trim().parse().ok()?)),
                None => (entry, None),
            };
            Some((id.trim().parse().ok()?, xid))
        })
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
    fn payloads_carry_ids_and_xids_and_ignore_the_rest() {
        assert_eq!(
            waiting_ids("1,22:905,333"),
            vec![(1, None), (22, Some(905)), (333, None)]
        );
        assert_eq!(waiting_ids(""), Vec::<Waiting>::new());
        assert_eq!(
            waiting_ids("7,x, 8,9:y,10:11:12"),
            vec![(7, None), (8, None)]
        );
        let longest = (0..IDS_PER_NOTICE as i64)
            .map(|i| format!("{}:{}", i64::MIN + i, i64::MIN + i))
            .collect::<Vec<_>>()
            .join(",");
        assert!(longest.len() < 8000, "{}", longest.len());
    }
}
