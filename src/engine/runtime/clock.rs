//! The service's clock for what depends on wall time after the fact: whether a conversion is
//! within its metric's attribution window, and when a window has closed. Off by default it is
//! the system clock. A server started with `--test-clock` lets an admin move it forward
//! (`PUT /v1/admin/clock`), so that an integration test can post a conversion "an hour after the
//! click" or close a day-long window without waiting; nothing else reads it (duel tokens, outcome
//! windows and Postgres keep real time).

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

/// Largest offset accepted: a year.
pub const MAX_OFFSET_SECS: i64 = 366 * 24 * 3600;

#[derive(Debug, Default)]
pub struct Clock {
    settable: AtomicBool,
    offset_ms: AtomicI64,
}

impl Clock {
    /// The system clock, or a settable test clock.
    pub fn new(settable: bool) -> Clock {
        Clock {
            settable: AtomicBool::new(settable),
            offset_ms: AtomicI64::new(0),
        }
    }

    pub fn now_ms(&self) -> i64 {
        now_ms() + self.offset_ms.load(Ordering::Relaxed)
    }

    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::from_timestamp_millis(self.now_ms()).unwrap_or_default()
    }

    pub fn is_settable(&self) -> bool {
        self.settable.load(Ordering::Relaxed)
    }

    pub fn offset_secs(&self) -> f64 {
        self.offset_ms.load(Ordering::Relaxed) as f64 / 1000.0
    }

    /// Sets the offset from the system clock; `false` when this is not a test clock.
    pub fn set_offset_secs(&self, secs: f64) -> bool {
        if !self.is_settable() {
            return false;
        }
        self.offset_ms
            .store((secs * 1000.0).round() as i64, Ordering::Relaxed);
        true
    }
}
/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
