//! Reading an experiment's history back (the owner records the points: `apply::history`).

use crate::engine::{Engine, EngineError};
use crate::store::{self, history::HistoryPoint};

/// Largest number of points one history request returns.
pub const MAX_POINTS: i64 = 10_000;

impl Engine {
    /// An experiment's history at or after `since`, thinned evenly to at most `max_points` (at
    /// most [`MAX_POINTS`]), with the number of points before thinning.
    pub async fn history(
        &self,
        id: i64,
        since: Option<chrono::DateTime<chrono::Utc>>,
        max_points: i64,
    ) -> Result<(Vec<HistoryPoint>, i64), EngineError> {
        let mut conn = self.pool.acquire().await.map_err(store::StoreError::from)?;
        Ok(store::history::read(&mut conn, id, since, max_points).await?)
    }
}
