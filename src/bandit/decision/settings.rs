//! What an experiment asks of its decision: the error probability, the indifference margin, and
//! whether (and how much) the confirmation layer may spend on evidence.

use serde::{Deserialize, Serialize};

/// Default error probability of a decision.
pub const DEFAULT_DELTA: f64 = 0.05;

/// Default cap on the share of duels the confirmation layer takes: all of them, once a leader is
/// established and until decided (the layer's own sampling; the policy's steps before that, and
/// whenever the layer has no leader to confirm). Against 0.5 (measured with the single-scale
/// boundary before docs/decisions.md): decisions 10-35% sooner on the matrices it was chosen on
/// and on those it was reported on, regret level or lower, also on matrices without a Condorcet
/// winner.
pub const DEFAULT_MAX_CONFIRMATION_SHARE: f64 = 1.0;

/// One experiment's decision settings. Every field may be omitted in JSON (its default applies).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DecisionSettings {
    /// Probability that a decision is wrong, at most; in (0, 0.5].
    pub delta: f64,
    /// Indifference margin: a champion is decided when no ranker beats it by more than this;
    /// in [0, 0.5). 0 asks for a strict Condorcet winner.
    pub epsilon: f64,
    /// Whether the confirmation layer may take duels to gather the missing evidence.
    pub confirmation: bool,
    /// Largest expected share of the policy's duels between two rankers that the confirmation
    /// layer takes (it also takes the policy's self-duels, which carry no evidence, until
    /// decided); in (0, 1].
    pub max_confirmation_share: f64,
}

impl Default for DecisionSettings {
    fn default() -> Self {
        DecisionSettings {
            delta: DEFAULT_DELTA,
            epsilon: 0.0,
            confirmation: true,
            max_confirmation_share: DEFAULT_MAX_CONFIRMATION_SHARE,
        }
    }
}

impl DecisionSettings {
    /// Checks the ranges; the message names the field and its range.
    pub fn validate(&self) -> Result<(), String> {
        let in_range = |x: f64, ok: bool, name: &str, range: &str| {
            if x.is_finite() && ok {
                Ok(())
            } else {
                Err(format!("`{name}` must be in {range}, got {x}"))
            }
        };
        in_range(
            self.delta,
            self.delta > 0.0 && self.delta <= 0.5,
            "delta",
            "(0, 0.5]",
        )?;
        in_range(
            self.epsilon,
            self.epsilon >= 0.0 && self.epsilon < 0.5,
            "epsilon",
            "[0, 0.5)",
        )?;
        in_range(
            self.max_confirmation_share,
            self.max_confirmation_share > 0.0 && self.max_confirmation_share <= 1.0,
            "max_confirmation_share",
            "(0, 1]",
        )
    }

    /// These settings with the confirmation layer off.
    pub fn without_confirmation(self) -> Self {
        DecisionSettings {
            confirmation: false,
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_ranges_are_refused_by_name() {
        assert_eq!(DecisionSettings::default().validate(), Ok(()));
        let bad = |s: DecisionSettings, name: &str| {
            let err = s.validate().unwrap_err();
            assert!(err.contains(name), "{err}");
        };
        let d = DecisionSettings::default();
        bad(DecisionSettings { delta: 0.0, ..d }, "delta");
        bad(DecisionSettings { delta: 0.6, ..d }, "delta");
        bad(
            DecisionSettings {
                delta: f64::NAN,
                ..d
            },
            "delta",
        );
        bad(DecisionSettings { epsilon: 0.5, ..d }, "epsilon");
        bad(DecisionSettings { epsilon: -0.1, ..d }, "epsilon");
        let share = |max_confirmation_share| DecisionSettings {
            max_confirmation_share,
            ..d
        };
        bad(share(0.0), "max_confirmation_share");
        bad(share(1.5), "max_confirmation_share");
        assert_eq!(share(1.0).validate(), Ok(()));
    }

    #[test]
    fn omitted_fields_take_their_defaults_and_unknown_fields_are_refused() {
        let s: DecisionSettings = serde_json::from_str(r#"{"epsilon": 0.01}"#).unwrap();
        assert_eq!(s.epsilon, 0.01);
        assert_eq!(s.delta, DEFAULT_DELTA);
        assert!(s.confirmation);
        assert!(serde_json::from_str::<DecisionSettings>(r#"{"delt": 0.1}"#).is_err());
    }
}
