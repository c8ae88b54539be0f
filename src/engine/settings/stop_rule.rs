//! `"stop_rule": {"min_outcomes": N}` of an experiment: conclude it once its decision is decided
//! and at least N outcomes were applied. Evaluated where outcomes are applied
//! (`apply::decision_events`).

use crate::api::{ErrorCode, StopRule};
use crate::engine::EngineError;

/// Largest `min_outcomes` accepted (far beyond any experiment, small enough for a BIGINT).
pub const MAX_MIN_OUTCOMES: u64 = 1_000_000_000_000;

impl StopRule {
    pub fn validate(&self) -> Result<(), EngineError> {
        if self.min_outcomes > MAX_MIN_OUTCOMES {
            return Err(EngineError::invalid(
                ErrorCode::InvalidStopRule,
                format!(
                    "stop_rule.min_outcomes must be in 0..={MAX_MIN_OUTCOMES}, got {}",
                    self.min_outcomes
                ),
            ));
        }
        Ok(())
    }

    /// Whether an experiment with this rule concludes now.
    pub fn concludes(&self, decided: bool, outcomes_applied: i64) -> bool {
        decided && outcomes_applied >= 0 && outcomes_applied as u64 >= self.min_outcomes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concludes_only_when_decided_with_enough_outcomes() {
        let rule = StopRule { min_outcomes: 100 };
        assert!(!rule.concludes(false, 1_000));
        assert!(!rule.concludes(true, 99));
        assert!(rule.concludes(true, 100));
        assert!(StopRule { min_outcomes: 0 }.concludes(true, 0));
        assert!(
            StopRule {
                min_outcomes: MAX_MIN_OUTCOMES + 1
            }
            .validate()
            .is_err()
        );
    }
}
