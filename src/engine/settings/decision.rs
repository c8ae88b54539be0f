//! `"decision": {...}` of an experiment as a request gives it: any of the decision settings
//! ([`DecisionSettings`]), the others taken from the defaults (at creation) or from the current
//! settings (PATCH). They change how duels are chosen (the confirmation layer), so they are
//! stored with the experiment and every replica builds its bandit state with them.

use crate::bandit::DecisionSettings;

use crate::api::{DecisionSettingsInput, ErrorCode};
use crate::engine::EngineError;

impl DecisionSettingsInput {
    /// `base` with the given settings changed, checked as a whole.
    pub fn apply_to(&self, base: DecisionSettings) -> Result<DecisionSettings, EngineError> {
        let mut s = base;
        if let Some(v) = self.delta {
            s.delta = v;
        }
        if let Some(v) = self.epsilon {
            s.epsilon = v;
        }
        if let Some(v) = self.confirmation {
            s.confirmation = v;
        }
        if let Some(v) = self.max_confirmation_share {
            s.max_confirmation_share = v;
        }
        s.validate()
            .map_err(|why| EngineError::invalid(ErrorCode::InvalidDecisionSettings, why))?;
        Ok(s)
    }
}

/// The settings stored for an experiment (`NULL` for one created before decisions existed: the
/// defaults).
pub fn from_stored(value: Option<&serde_json::Value>) -> Result<DecisionSettings, String> {
    match value {
        None => Ok(DecisionSettings::default()),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| e.to_string()),
    }
}
