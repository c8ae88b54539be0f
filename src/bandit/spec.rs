//! Policy specifications: a policy name plus parameters, as the HTTP API (`{"name": "merge_dts",
//! "params": {...}}`) and the command line (`merge_dts:alpha=0.262144,batch_size=16`) give them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::params::PolicyParams;
use super::registry::{DEFAULT_MULTI_POLICY, DEFAULT_POLICY, policy_info};

/// A policy name and its parameters, not yet validated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicySpec {
    pub name: String,
    #[serde(default)]
    pub params: Map<String, Value>,
}

/// Why a policy specification was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    #[error("unknown policy `{name}`; known policies: {known}")]
    UnknownPolicy { name: String, known: String },
    #[error("invalid parameters for `{policy}`: {message}")]
    InvalidParams { policy: String, message: String },
}

impl PolicySpec {
    pub fn new(name: impl Into<String>) -> Self {
        PolicySpec {
            name: name.into(),
            params: Map::new(),
        }
    }

    /// The spec an experiment comparing `rankers_per_query` rankers records: the one it asked
    /// for, or [`DEFAULT_POLICY`] ([`DEFAULT_MULTI_POLICY`] above two rankers per query) when it
    /// named none, with what its policy pins written in (`auto`'s design version, when the
    /// request left it out, so that the stored spec itself says which design the experiment runs
    /// after later versions change the default).
    pub fn recorded(asked: Option<PolicySpec>, rankers_per_query: usize) -> PolicySpec {
        let mut spec = asked.unwrap_or_else(|| {
            PolicySpec::new(if rankers_per_query > 2 {
                DEFAULT_MULTI_POLICY
            } else {
                DEFAULT_POLICY
            })
        });
        if let Ok(info) = policy_info(&spec.name) {
            info.record(&mut spec.params);
        }
        spec
    }

    /// Parses the command-line form `name[:key=value,key=value...]`. Values that parse as JSON
    /// numbers or booleans become those; anything else is a string.
    pub fn parse_cli(text: &str) -> Result<Self, String> {
        let (name, rest) = match text.split_once(':') {
            Some((n, r)) => (n, Some(r)),
            None => (text, None),
        };
        if name.is_empty() {
            return Err(format!("policy spec `{text}` has no policy name"));
        }
        let mut params = Map::new();
        for item in rest
            .into_iter()
            .flat_map(|r| r.split(','))
            .filter(|s| !s.is_empty())
        {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("policy parameter `{item}` is not of the form key=value"))?;
            let value = match serde_json::from_str::<Value>(value) {
                Ok(v @ (Value::Number(_) | Value::Bool(_))) => v,
                _ => Value::String(value.to_string()),
            };
            params.insert(key.trim().to_string(), value);
        }
        Ok(PolicySpec {
            name: name.to_string(),
            params,
        })
    }

    /// Deserialises and validates this spec's parameters as `P`.
    pub fn params<P: PolicyParams>(&self, k: usize) -> Result<P, SpecError> {
        let invalid = |message: String| SpecError::InvalidParams {
            policy: self.name.clone(),
            message,
        };
        let params: P = serde_json::from_value(Value::Object(self.params.clone()))
            .map_err(|e| invalid(e.to_string()))?;
        params.validate(k).map_err(invalid)?;
        Ok(params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_form_parses_numbers_and_strings() {
        let spec = PolicySpec::parse_cli("merge_dts:alpha=0.262144,batch_size=16,box=ucb").unwrap();
        assert_eq!(spec.name, "merge_dts");
        assert_eq!(spec.params["alpha"], serde_json::json!(0.262144));
        assert_eq!(spec.params["batch_size"], serde_json::json!(16));
        assert_eq!(spec.params["box"], serde_json::json!("ucb"));
        assert!(PolicySpec::parse_cli("rucb:alpha").is_err());
        assert!(PolicySpec::parse_cli(":alpha=1").is_err());
        assert_eq!(PolicySpec::parse_cli("rucb").unwrap().params.len(), 0);
    }

    #[test]
    fn an_experiment_without_a_policy_records_auto_with_its_version() {
        let default = PolicySpec::recorded(None, 2);
        assert_eq!(default.name, "auto");
        assert_eq!(default.params["version"], serde_json::json!(8));
        // Asked for by name: the version is written in; asked for with one: kept.
        assert_eq!(
            PolicySpec::recorded(Some(PolicySpec::new("auto")), 2),
            default
        );
        let v1 = PolicySpec::parse_cli("auto:version=1").unwrap();
        assert_eq!(PolicySpec::recorded(Some(v1.clone()), 2), v1);
        // Other policies are recorded as asked.
        let rucb = PolicySpec::parse_cli("rucb:alpha=0.3").unwrap();
        assert_eq!(PolicySpec::recorded(Some(rucb.clone()), 2), rucb);
        // More than two rankers per query: the multi-ranker default.
        assert_eq!(
            PolicySpec::recorded(None, 4),
            PolicySpec::new("self_sparring")
        );
    }
}
