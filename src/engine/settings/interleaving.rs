//! How an experiment interleaves: its method, the method's options and the length of the shown
//! list. Chosen when the experiment is created and fixed afterwards (a change would make the
//! credit of tokens already handed out ambiguous).
//!
//! API and stored form (the same JSON):
//! `{"method": "team_draft", "options": {"shared_prefix": "draft", "exhausted": "continue"},
//! "max_length": 10}`. `options` and `max_length` may be left out; the defaults are the method's
//! own and 10 documents, the length of a result page in the literature.
//!
//! Pairwise experiments (`rankers_per_query` 2) use a two-list method; multi-ranker experiments
//! a multileaving method that takes that many lists ([`InterleavingConfig::check_rankers`]).
//!
//! Stored settings are read with today's meaning of each option. Team-Draft's `exhausted: stop`
//! (the default, so every stored Team-Draft experiment spells it out) once ended the draft in the
//! middle of a round, which favoured the ranker that exhausted its list first; it now ends after
//! the last complete round, so old experiments, whether they chose `stop` or took the default,
//! continue with the fair rule under the same stored settings. Tokens handed out before carry
//! their shown list and teams, so their clicks are credited as shown.

use serde_json::Value;

use crate::interleave::{MAX_OPTIMIZED_LEN, Method, method_info, method_names};

use crate::api::{ErrorCode, InterleavingSpec, in_json_words};
use crate::engine::EngineError;

/// Documents shown when the experiment does not say.
pub const DEFAULT_MAX_LENGTH: usize = 10;
/// Longest shown list an experiment may ask for.
pub const MAX_LENGTH: usize = 100;

/// Validated settings.
#[derive(Debug, Clone, PartialEq)]
pub struct InterleavingConfig {
    pub method: Method,
    pub max_length: usize,
}

impl Default for InterleavingConfig {
    fn default() -> Self {
        InterleavingConfig {
            method: Method::TeamDraft(Default::default()),
            max_length: DEFAULT_MAX_LENGTH,
        }
    }
}

/// Names as a sentence lists them: `a, b, c or d`.
fn or_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [only] => only.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn invalid(message: String) -> EngineError {
    EngineError::invalid(ErrorCode::InvalidInterleaving, message)
}

impl InterleavingConfig {
    /// The default for an experiment comparing `rankers_per_query` rankers per query:
    /// Team-Draft for a duel, Team-Draft Multileave for more.
    pub fn default_for(rankers_per_query: usize) -> Self {
        if rankers_per_query > 2 {
            InterleavingConfig {
                method: Method::TeamDraftMultileave,
                max_length: DEFAULT_MAX_LENGTH,
            }
        } else {
            Self::default()
        }
    }

    /// Checks that the method fits an experiment comparing `m` rankers per query: a two-list
    /// method for a duel, a multileaving method taking m lists for more.
    pub fn check_rankers(&self, m: usize) -> Result<(), EngineError> {
        let name = self.method.name();
        if m == 2 && self.method.is_multileave() {
            return Err(invalid(format!(
                "{name} compares more than two rankers, and this experiment's queries compare \
                 two (rankers_per_query 2): use {}, or set rankers_per_query above 2",
                or_list(&method_names(false))
            )));
        }
        if m > 2 && !self.method.is_multileave() {
            return Err(invalid(format!(
                "{name} interleaves exactly two lists, and this experiment's queries compare up \
                 to {m} rankers: use a multileaving method ({})",
                method_names(true).join(", ")
            )));
        }
        if m > self.method.max_rankers() {
            return Err(invalid(format!(
                "{name} compares at most {} rankers per query; rankers_per_query is {m}",
                self.method.max_rankers()
            )));
        }
        Ok(())
    }

    /// Checks a posted spec (whether it fits the experiment's rankers per query is
    /// [`Self::check_rankers`]).
    pub fn from_spec(spec: &InterleavingSpec) -> Result<Self, EngineError> {
        let name = spec.method.as_str();
        let info = method_info(name).ok_or_else(|| {
            invalid(format!(
                "unknown interleaving method `{name}`; expected {} (two rankers), or {} (more)",
                or_list(&method_names(false)),
                method_names(true).join(", ")
            ))
        })?;
        let known: Vec<&str> = info.options.iter().map(|o| o.name).collect();
        if let Some(key) = spec.options.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(invalid(format!(
                "{name} has no option `{key}`; its options: {}",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )));
        }
        let mut tagged = spec.options.clone();
        tagged.insert("method".into(), Value::String(name.into()));
        let method: Method = serde_json::from_value(Value::Object(tagged)).map_err(|e| {
            invalid(format!(
                "bad {name} options: {}",
                in_json_words(&e.to_string())
            ))
        })?;
        method.validate().map_err(|e| invalid(e.to_string()))?;
        let max_length = spec.max_length.unwrap_or(DEFAULT_MAX_LENGTH);
        let limit = match method {
            Method::Optimized => MAX_OPTIMIZED_LEN,
            _ => MAX_LENGTH,
        };
        if !(1..=limit).contains(&max_length) {
            return Err(invalid(format!(
                "max_length for {name} must be in 1..={limit}, got {max_length}"
            )));
        }
        Ok(InterleavingConfig { method, max_length })
    }

    /// The canonical spec: every option spelled out, as stored and shown.
    pub fn to_spec(&self) -> InterleavingSpec {
        let Value::Object(mut options) =
            serde_json::to_value(&self.method).expect("methods serialise")
        else {
            unreachable!("a tagged enum serialises to an object")
        };
        options.remove("method");
        InterleavingSpec {
            method: self.method.name().to_string(),
            options,
            max_length: Some(self.max_length),
        }
    }

    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.to_spec()).expect("specs serialise")
    }

    /// Reads the stored form back.
    pub fn from_json(value: &Value) -> Result<Self, EngineError> {
        let spec: InterleavingSpec = serde_json::from_value(value.clone()).map_err(|e| {
            EngineError::internal(anyhow::Error::new(e).context("stored interleaving settings"))
        })?;
        Self::from_spec(&spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<InterleavingConfig, EngineError> {
        InterleavingConfig::from_spec(&serde_json::from_value(v).unwrap())
    }

    #[test]
    fn defaults_and_round_trip() {
        for v in [
            json!({"method": "team_draft"}),
            json!({"method": "team_draft", "options": {"shared_prefix": "no_credit"}}),
            json!({"method": "balanced", "max_length": 20}),
            json!({"method": "probabilistic", "options": {"tau": 2.5}}),
            json!({"method": "optimized", "max_length": 12}),
            json!({"method": "team_draft_multileave"}),
            json!({"method": "probabilistic_multileave", "options": {"tau": 2}}),
        ] {
            let config = parse(v.clone()).unwrap_or_else(|e| panic!("{v}: {e}"));
            assert_eq!(
                InterleavingConfig::from_json(&config.to_json()).unwrap(),
                config
            );
        }
        let config = parse(json!({"method": "probabilistic"})).unwrap();
        assert_eq!(config.max_length, DEFAULT_MAX_LENGTH);
        assert_eq!(config.to_json()["options"]["tau"], json!(3.0));
    }

    #[test]
    fn bad_settings_are_refused_with_their_reason() {
        for (v, needle) in [
            (
                json!({"method": "coin_flip"}),
                "unknown interleaving method",
            ),
            (
                json!({"method": "balanced", "options": {"tau": 1}}),
                "no option `tau`",
            ),
            (
                json!({"method": "team_draft", "options": {"shared_prefix": "maybe"}}),
                "bad team_draft options",
            ),
            (
                json!({"method": "probabilistic", "options": {"tau": -1}}),
                "tau",
            ),
            (json!({"method": "optimized", "max_length": 13}), "1..=12"),
            (json!({"method": "team_draft", "max_length": 0}), "1..=100"),
            (
                json!({"method": "probabilistic_multileave", "options": {"tau": 101}}),
                "tau must be in [0, 100]",
            ),
        ] {
            let err = parse(v.clone()).expect_err(&v.to_string()).to_string();
            assert!(err.contains(needle), "{v}: {err}");
        }
    }

    #[test]
    fn methods_must_fit_the_rankers_per_query() {
        let check = |v: Value, m: usize| parse(v).unwrap().check_rankers(m);
        assert!(check(json!({"method": "team_draft"}), 2).is_ok());
        assert!(check(json!({"method": "team_draft_multileave"}), 16).is_ok());
        assert!(check(json!({"method": "probabilistic_multileave"}), 8).is_ok());
        for (v, m, needle) in [
            (
                json!({"method": "team_draft_multileave"}),
                2,
                "more than two",
            ),
            (json!({"method": "probabilistic"}), 4, "exactly two lists"),
            (
                json!({"method": "probabilistic_multileave"}),
                9,
                "at most 8",
            ),
        ] {
            let err = check(v.clone(), m).expect_err(&v.to_string()).to_string();
            assert!(err.contains(needle), "{v} at m = {m}: {err}");
        }
        assert!(InterleavingConfig::default_for(2).check_rankers(2).is_ok());
        assert!(
            InterleavingConfig::default_for(30)
                .check_rankers(30)
                .is_ok()
        );
    }
}
