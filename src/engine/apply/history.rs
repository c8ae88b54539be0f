//! History points: when the owner records one (at most one per interval per experiment) and
//! what goes in it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::engine::model::Snapshot;
use crate::store::history::HistoryPoint;

/// Default time between two history points of an experiment.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);

/// Remembers when this process last wrote a point per experiment, so the writer asks the
/// database (which also knows other replicas' points) only when a point may be due: the cost is
/// one statement per experiment per interval, inside a transaction the writer runs anyway.
pub struct HistoryClock {
    interval: Duration,
    last: Mutex<HashMap<i64, Instant>>,
}

impl HistoryClock {
    pub fn new(interval: Duration) -> Self {
        HistoryClock {
            interval,
            last: Mutex::default(),
        }
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Whether a point may be due for the experiment; if so, claims it until the next interval.
    pub fn claim(&self, id: i64, now: Instant) -> bool {
        let mut last = self.last.lock().unwrap();
        match last.get(&id) {
            Some(t) if now.duration_since(*t) < self.interval => false,
            _ => {
                last.insert(id, now);
                true
            }
        }
    }
}

/// The point describing a snapshot (the duel count is filled in by the database).
pub fn point_of(snap: &Snapshot) -> HistoryPoint {
    let k = snap.names.len();
    let (mut wins, mut losses) = (vec![0i64; k], vec![0i64; k]);
    for (i, j, n) in snap.state.wins.win_cells() {
        wins[i] += i64::from(n);
        losses[j] += i64::from(n);
    }
    let report = snap.champion();
    HistoryPoint {
        at: chrono::Utc::now(),
        version: snap.version,
        outcomes_applied: snap.outcomes_applied,
        ties_applied: snap.ties_applied,
        duels_issued: 0,
        champion: report.ranker.map(|a| a as i32),
        basis: report.basis.as_str().to_string(),
        confident: report.confident,
        wins,
        losses,
    }
}
