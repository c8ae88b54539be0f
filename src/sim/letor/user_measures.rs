//! What the simulated users saw: li-2020 Figure 5's two measures of a `--letor` simulation, the
//! number of clicks on the shown top 10 per query and the NDCG@10 of the shown (interleaved or
//! multileaved) list, averaged over the queries since the previous checkpoint.
//!
//! NDCG is averaged over the queries that have a relevant document (elsewhere it is undefined, as
//! in each ranker's mean NDCG). A ranker compared with itself is shown alone; the simulation does
//! not draw a query for it (keeping the random stream of earlier versions), so such a step adds
//! its expectation instead: that ranker's mean clicks per query and mean NDCG, weighted by the
//! share of queries with a relevant document.

/// Sums over the queries of one window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserMeasures {
    queries: f64,
    clicks: f64,
    ndcg_sum: f64,
    /// Queries (or expected queries) with a defined NDCG.
    ndcg_queries: f64,
}

impl UserMeasures {
    /// One shown list: its clicks and its NDCG (`None` when the query has no relevant document).
    pub fn add(&mut self, clicks: usize, ndcg: Option<f64>) {
        self.queries += 1.0;
        self.clicks += clicks as f64;
        if let Some(n) = ndcg {
            self.ndcg_sum += n;
            self.ndcg_queries += 1.0;
        }
    }

    /// One list in expectation over the query: mean clicks, mean NDCG over the queries where it
    /// is defined, and the share of such queries.
    pub fn add_expected(&mut self, clicks: f64, ndcg: f64, defined_share: f64) {
        self.queries += 1.0;
        self.clicks += clicks;
        self.ndcg_sum += ndcg * defined_share;
        self.ndcg_queries += defined_share;
    }

    /// The window's (clicks per query, mean NDCG), and a fresh window; NaN for an empty one.
    pub fn take(&mut self) -> (f64, f64) {
        let out = (
            self.clicks / self.queries,
            self.ndcg_sum / self.ndcg_queries,
        );
        *self = UserMeasures::default();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_average_their_queries_and_restart() {
        let mut m = UserMeasures::default();
        m.add(2, Some(0.5));
        m.add(0, None);
        m.add_expected(1.0, 0.8, 0.5);
        // Clicks (2 + 0 + 1) / 3; NDCG (0.5 + 0.8 * 0.5) / (1 + 0.5) = 0.6.
        let (clicks, ndcg) = m.take();
        assert!((clicks - 1.0).abs() < 1e-12 && (ndcg - 0.6).abs() < 1e-12);
        assert!(m.take().0.is_nan());
    }
}
