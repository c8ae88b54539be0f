//! Whether this replica can serve: the database reachable and every migration applied.

use crate::engine::Engine;
use crate::store;

impl Engine {
    /// Database reachable and every migration applied; answers at once while the database is
    /// known to be down.
    pub async fn ready(&self) -> Result<(), String> {
        if let Some(why) = self.db.down_reason() {
            return Err(why);
        }
        match store::migrations_applied(&self.pool).await {
            Ok(true) => Ok(()),
            Ok(false) => Err("migrations are not all applied".into()),
            Err(e) => Err(format!("database unreachable: {e}")),
        }
    }
}
