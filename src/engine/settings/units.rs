//! `"units": {"window_seconds": N, "aggregation": "query" | "unit"}` of an experiment: how it
//! treats duel requests that name a unit (a user or a session).
//!
//! Within one window (the epoch `floor(now / window_seconds)`) the same unit and query get the
//! same duel and the same interleaving on every replica (`requests::unit_duels`). `aggregation`
//! says what one piece of evidence is: every query (`"query"`, as without units) or every unit
//! (`"unit"`: each unit's net preference per pair counts once, see
//! [`crate::bandit::unit_evidence`]).

use crate::api::{Aggregation, DEFAULT_WINDOW_SECONDS, ErrorCode, UnitSettings};
use crate::engine::EngineError;

/// Seven days.
pub const MAX_WINDOW_SECONDS: i64 = 7 * 24 * 3600;
/// Longest unit id accepted, in bytes (it is hashed at once and never stored).
pub const MAX_UNIT_LEN: usize = 512;
/// Longest query key accepted, in bytes.
pub const MAX_QUERY_LEN: usize = 2048;

impl Aggregation {
    pub fn as_str(self) -> &'static str {
        match self {
            Aggregation::Query => "query",
            Aggregation::Unit => "unit",
        }
    }
}

impl Default for UnitSettings {
    fn default() -> Self {
        UnitSettings {
            window_seconds: DEFAULT_WINDOW_SECONDS,
            aggregation: Aggregation::Query,
        }
    }
}

impl UnitSettings {
    pub fn validate(&self) -> Result<(), EngineError> {
        if !(1..=MAX_WINDOW_SECONDS).contains(&self.window_seconds) {
            return Err(EngineError::invalid(
                ErrorCode::InvalidUnits,
                format!(
                    "units.window_seconds must be in 1..={MAX_WINDOW_SECONDS}, got {}",
                    self.window_seconds
                ),
            ));
        }
        Ok(())
    }

    /// The settings as stored (`experiments.units`), `None` read as the defaults.
    pub fn from_stored(value: Option<&serde_json::Value>) -> Result<Self, serde_json::Error> {
        value
            .map(|v| serde_json::from_value(v.clone()))
            .transpose()
            .map(Option::unwrap_or_default)
    }

    /// The window a request made at `now_ms` falls in.
    pub fn epoch(&self, now_ms: i64) -> i64 {
        now_ms.div_euclid(self.window_seconds * 1000)
    }

    /// When window `epoch` began, in milliseconds since the Unix epoch.
    pub fn epoch_start_ms(&self, epoch: i64) -> i64 {
        epoch * self.window_seconds * 1000
    }
}

/// Checks a request's unit id and query key.
pub fn check_unit_and_query(unit: Option<&str>, query: Option<&str>) -> Result<(), EngineError> {
    if let Some(unit) = unit
        && (unit.is_empty() || unit.len() > MAX_UNIT_LEN)
    {
        return Err(EngineError::invalid(
            ErrorCode::InvalidUnit,
            format!(
                "`unit` must be 1 to {MAX_UNIT_LEN} bytes, got {}",
                unit.len()
            ),
        ));
    }
    if let Some(query) = query {
        if unit.is_none() {
            return Err(EngineError::invalid(
                ErrorCode::InvalidUnit,
                "`query` keys a unit's duel: give `unit` with it",
            ));
        }
        if query.len() > MAX_QUERY_LEN {
            return Err(EngineError::invalid(
                ErrorCode::InvalidUnit,
                format!(
                    "`query` must be at most {MAX_QUERY_LEN} bytes, got {}",
                    query.len()
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_partition_time() {
        let s = UnitSettings {
            window_seconds: 60,
            aggregation: Aggregation::Unit,
        };
        assert_eq!(s.epoch(0), 0);
        assert_eq!(s.epoch(59_999), 0);
        assert_eq!(s.epoch(60_000), 1);
        assert_eq!(s.epoch_start_ms(s.epoch(125_000)), 120_000);
        assert!(s.validate().is_ok());
        let bad = UnitSettings {
            window_seconds: 0,
            ..s
        };
        assert!(bad.validate().is_err());
    }

    #[test]
    fn stored_settings_default_when_absent() {
        assert_eq!(
            UnitSettings::from_stored(None).unwrap(),
            UnitSettings::default()
        );
        let v = serde_json::json!({"window_seconds": 10, "aggregation": "unit"});
        let s = UnitSettings::from_stored(Some(&v)).unwrap();
        assert_eq!(s.window_seconds, 10);
        assert_eq!(s.aggregation, Aggregation::Unit);
    }

    #[test]
    fn a_query_needs_a_unit() {
        assert!(check_unit_and_query(None, Some("q")).is_err());
        assert!(check_unit_and_query(Some(""), None).is_err());
        assert!(check_unit_and_query(Some("u"), Some("q")).is_ok());
        assert!(check_unit_and_query(None, None).is_ok());
    }
}
