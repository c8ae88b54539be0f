//! Policy specifications: a policy name plus parameters, as the HTTP API (`{"name": "merge_dts",
//! "params": {...}}`) and the command line (`merge_dts:alpha=0.262144,batch_size=16`) give them.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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

/// Parameters of one policy: deserialised from the spec (unknown names are refused by
/// `#[serde(deny_unknown_fields)]`), with defaults from the paper, then validated.
pub trait PolicyParams: DeserializeOwned + Serialize + Default {
    /// Checks ranges for an experiment of `k` arms. The message names the parameter and the
    /// accepted range.
    fn validate(&self, k: usize) -> Result<(), String>;
}

impl PolicySpec {
    pub fn new(name: impl Into<String>) -> Self {
        PolicySpec {
            name: name.into(),
            params: Map::new(),
        }
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

/// Checks a real parameter against an open or closed range; used by the policies' `validate`.
pub fn check_range(
    name: &str,
    value: f64,
    min: f64,
    max: f64,
    inclusive_min: bool,
) -> Result<(), String> {
    let above = if inclusive_min {
        value >= min
    } else {
        value > min
    };
    if value.is_finite() && above && value <= max {
        Ok(())
    } else {
        let open = if inclusive_min { "[" } else { "(" };
        Err(format!(
            "`{name}` must be in {open}{min}, {max}], got {value}"
        ))
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
    fn range_check_names_the_parameter() {
        assert!(check_range("alpha", 0.51, 0.0, 10.0, false).is_ok());
        let err = check_range("alpha", 0.0, 0.0, 10.0, false).unwrap_err();
        assert!(err.contains("alpha"), "{err}");
        assert!(check_range("alpha", f64::NAN, 0.0, 10.0, true).is_err());
    }
}
