//! The decision settings of a simulated experiment, given in the policy spec of `--policy` next
//! to the policy's own parameters, e.g. `auto:confirmation=false` or
//! `merge_dts:alpha=0.262144,max_confirmation_share=0.1,decision_delta=0.01`. The keys are
//! [`DECISION_KEYS`]; they are taken out before the policy reads its parameters, so each run of
//! one command line may compare the same policy with and without the confirmation layer.

use serde_json::{Map, Value};

use crate::bandit::{DecisionSettings, PolicySpec};

/// Keys of a policy spec that set the decision, and the setting each names.
pub const DECISION_KEYS: [(&str, &str); 4] = [
    ("decision_delta", "delta"),
    ("decision_epsilon", "epsilon"),
    ("confirmation", "confirmation"),
    ("max_confirmation_share", "max_confirmation_share"),
];

/// Splits `spec` into the policy's own spec and the decision settings (defaults for the keys it
/// does not give). The error names the bad key or range.
pub fn split_decision(spec: &PolicySpec) -> Result<(PolicySpec, DecisionSettings), String> {
    let mut policy = spec.clone();
    let mut settings = Map::new();
    for (key, field) in DECISION_KEYS {
        if let Some(v) = policy.params.remove(key) {
            settings.insert(field.to_string(), v);
        }
    }
    let settings: DecisionSettings = serde_json::from_value(Value::Object(settings))
        .map_err(|e| format!("decision settings of `{}`: {e}", spec.name))?;
    settings
        .validate()
        .map_err(|e| format!("decision settings of `{}`: {e}", spec.name))?;
    Ok((policy, settings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decision_keys_leave_the_policy_spec_and_are_validated() {
        let spec = PolicySpec::parse_cli(
            "merge_dts:alpha=0.262144,confirmation=false,decision_delta=0.01",
        )
        .unwrap();
        let (policy, settings) = split_decision(&spec).unwrap();
        assert_eq!(
            policy,
            PolicySpec::parse_cli("merge_dts:alpha=0.262144").unwrap()
        );
        assert!(!settings.confirmation);
        assert_eq!(settings.delta, 0.01);
        let plain = PolicySpec::parse_cli("dts").unwrap();
        assert_eq!(
            split_decision(&plain).unwrap().1,
            DecisionSettings::default()
        );
        let bad = PolicySpec::parse_cli("dts:max_confirmation_share=2").unwrap();
        assert!(
            split_decision(&bad)
                .unwrap_err()
                .contains("max_confirmation_share")
        );
    }
}
