//! Whether this replica can serve: the database reachable and every migration applied.

use crate::engine::Engine;
use crate::store;

/// Why a replica is not ready: what a caller may be told, and the database's own words, which
/// go to the server's log only (they name hosts, ports, users and databases).
#[derive(Debug, Clone)]
pub struct NotReady {
    pub reason: &'static str,
    pub detail: String,
}

impl Engine {
    /// Database reachable and every migration applied; answers at once while the database is
    /// known to be down.
    pub async fn ready(&self) -> Result<(), NotReady> {
        let unreachable = |detail| NotReady {
            reason: "the database is unreachable",
            detail,
        };
        if let Some(why) = self.db.down_reason() {
            return Err(unreachable(why));
        }
        match store::migrations_applied(&self.pool).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(NotReady {
                reason: "the database's migrations are not all applied",
                detail: String::new(),
            }),
            Err(e) => Err(unreachable(e.to_string())),
        }
    }
}
