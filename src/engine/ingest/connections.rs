//! The writer's own database connections, kept between groups.
//!
//! A connection borrowed from the pool costs a round trip to Postgres each time it goes back:
//! sqlx pings every released connection (a Sync and its ReadyForQuery) and offers no option to
//! skip it. The writer uses a connection once per group, so on a busy experiment that ping was a
//! second round trip per group beside the acknowledging insert, paid by joust and by a Postgres
//! backend woken for it. So the writer detaches the connections it uses from the pool (which may
//! then open replacements: a process holds at most the pool's connections plus
//! [`super::writer`]'s groups in flight) and keeps them here.
//!
//! A kept connection that failed is dropped, and the next group takes a fresh one from the
//! pool. A connection idle for [`PING_IF_IDLE_FOR`] is pinged before use, as the pool's are
//! ([`crate::store::pool_options`]): it is the one a Postgres restart or a dropped network may
//! have broken unseen; a busy one that breaks fails its group, which is answered 503 and retried.

use sqlx::{Connection, PgConnection, PgPool};
use std::sync::Mutex;
use std::time::Instant;

use crate::store::{PING_IF_IDLE_FOR, StoreError};

/// Connections detached from the pool for the writer's groups.
pub struct WriterConnections {
    pool: PgPool,
    idle: Mutex<Vec<(PgConnection, Instant)>>,
}

impl WriterConnections {
    pub fn new(pool: PgPool) -> WriterConnections {
        WriterConnections {
            pool,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// A connection for one group: the most recently used kept one, or a fresh one from the
    /// pool. Give it back with [`WriterConnections::keep`] if the group's statements succeeded.
    pub async fn take(&self) -> Result<PgConnection, StoreError> {
        let kept = self.idle.lock().expect("never poisoned").pop();
        if let Some((mut conn, since)) = kept {
            if since.elapsed() < PING_IF_IDLE_FOR || conn.ping().await.is_ok() {
                return Ok(conn);
            }
        }
        Ok(self.pool.acquire().await?.detach())
    }

    /// Keeps a connection whose group succeeded for the next group.
    pub fn keep(&self, conn: PgConnection) {
        self.idle
            .lock()
            .expect("never poisoned")
            .push((conn, Instant::now()));
    }
}
