//! The registry of interleaving methods: each method's name, its options with the values they
//! accept and their defaults, and how many rankers one shown list may compare. The service's
//! experiment settings, the simulator's `--method`/`--tau` flags and their error messages all ask
//! this registry; nothing else spells a method's name.
//!
//! `tau` (Probabilistic, Probabilistic Multileave, Sample-Only Scored) accepts [0, 100]: the
//! range the API has always enforced for experiments. 0 makes every listed document equally
//! likely (or every clicked rank worth the same); beyond 100 the softmax is already a hard
//! argmax, so larger values add nothing but the risk of floating-point underflow.

use serde::{Deserialize, Serialize};

use super::{
    InterleaveError, Interleaving, MAX_PROBABILISTIC_MULTILEAVE_RANKERS, TeamDraftOptions,
};

/// The softmax exponent used in the papers.
pub const DEFAULT_TAU: f64 = 3.0;

/// What an option accepts, and its default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptionValues {
    /// A number in `[min, max]`.
    Number { min: f64, max: f64, default: f64 },
    /// One of the names (snake_case, as in the API's JSON).
    Choice {
        values: &'static [&'static str],
        default: &'static str,
    },
}

/// One option of a method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MethodOption {
    pub name: &'static str,
    pub values: OptionValues,
}

impl MethodOption {
    /// Whether `x` is an accepted value of a numeric option (NaN and infinities never are).
    fn accepts_number(&self, x: f64) -> bool {
        match self.values {
            OptionValues::Number { min, max, .. } => x.is_finite() && (min..=max).contains(&x),
            OptionValues::Choice { .. } => false,
        }
    }
}

/// Softmax (or rank-discount) exponent of the methods that have one.
pub const TAU: MethodOption = MethodOption {
    name: "tau",
    values: OptionValues::Number {
        min: 0.0,
        max: 100.0,
        default: DEFAULT_TAU,
    },
};

const TEAM_DRAFT_OPTIONS: [MethodOption; 2] = [
    MethodOption {
        name: "shared_prefix",
        values: OptionValues::Choice {
            values: &["draft", "no_credit"],
            default: "draft",
        },
    },
    MethodOption {
        name: "exhausted",
        values: OptionValues::Choice {
            values: &["stop", "continue"],
            default: "stop",
        },
    },
];

/// What the registry knows of one method.
#[derive(Debug, Clone, Copy)]
pub struct MethodInfo {
    /// The snake_case name, as in the API and on the command line.
    pub name: &'static str,
    pub options: &'static [MethodOption],
    /// Whether the method merges any number of lists (multileaving) rather than exactly two.
    pub multileave: bool,
    /// The most rankers one shown list may compare: 2 for the pairwise methods.
    pub max_rankers: usize,
    /// Whether a longer list built with the same generator starts with the shorter one, so
    /// that a later page continues the list shown before it. Optimized interleaving is not:
    /// it draws a whole list from a distribution solved for its length.
    pub pages: bool,
    default: fn() -> Method,
}

impl MethodInfo {
    /// The method with its default options.
    pub fn default_method(&self) -> Method {
        (self.default)()
    }
}

/// Every method, pairwise ones first, in the order the API documents them.
pub const METHODS: [MethodInfo; 8] = [
    MethodInfo {
        name: "team_draft",
        options: &TEAM_DRAFT_OPTIONS,
        multileave: false,
        max_rankers: 2,
        pages: true,
        default: || Method::TeamDraft(TeamDraftOptions::default()),
    },
    MethodInfo {
        name: "balanced",
        options: &[],
        multileave: false,
        max_rankers: 2,
        pages: true,
        default: || Method::Balanced,
    },
    MethodInfo {
        name: "probabilistic",
        options: &[TAU],
        multileave: false,
        max_rankers: 2,
        pages: true,
        default: || Method::Probabilistic { tau: DEFAULT_TAU },
    },
    MethodInfo {
        name: "optimized",
        options: &[],
        multileave: false,
        max_rankers: 2,
        pages: false,
        default: || Method::Optimized,
    },
    MethodInfo {
        name: "team_draft_multileave",
        options: &[],
        multileave: true,
        max_rankers: usize::MAX,
        pages: true,
        default: || Method::TeamDraftMultileave,
    },
    MethodInfo {
        name: "probabilistic_multileave",
        options: &[TAU],
        multileave: true,
        max_rankers: MAX_PROBABILISTIC_MULTILEAVE_RANKERS,
        pages: true,
        default: || Method::ProbabilisticMultileave { tau: DEFAULT_TAU },
    },
    MethodInfo {
        name: "sample_only_scored",
        options: &[TAU],
        multileave: true,
        max_rankers: usize::MAX,
        pages: true,
        default: || Method::SampleOnlyScored { tau: DEFAULT_TAU },
    },
    MethodInfo {
        name: "pairwise_preference",
        options: &[],
        multileave: true,
        max_rankers: usize::MAX,
        pages: true,
        default: || Method::PairwisePreference,
    },
];

#[cfg(test)]
mod paging_tests {
    use super::*;
    use crate::interleave::interleave;
    use rand::{Rng, SeedableRng};

    /// `pages` must be true exactly for the methods whose shorter list is a prefix of the longer
    /// one built from the same generator (what a later page relies on).
    #[test]
    fn pages_flag_matches_prefix_stability() {
        for info in METHODS.iter() {
            let method = info.default_method();
            let mut stable = true;
            for seed in 0..200u64 {
                let mut r = crate::bandit::BanditRng::seed_from_u64(seed ^ 0x5eed);
                let n = if info.multileave { 4 } else { 2 };
                let lists: Vec<Vec<u32>> = (0..n)
                    .map(|_| (0..30).map(|_| r.random_range(0..40)).collect())
                    .collect();
                let refs: Vec<&[u32]> = lists.iter().map(|l| &l[..]).collect();
                let rng = || crate::bandit::BanditRng::seed_from_u64(seed);
                let short = interleave(&method, &refs, 5, &mut rng()).unwrap();
                let long = interleave(&method, &refs, 10, &mut rng()).unwrap();
                let n = short.shown().len();
                stable &= long.shown().len() >= n && short.shown() == &long.shown()[..n];
            }
            assert_eq!(stable, info.pages, "{}", info.name);
        }
    }
}

/// The registry entry of `name`, if there is one.
pub fn method_info(name: &str) -> Option<&'static MethodInfo> {
    METHODS.iter().find(|m| m.name == name)
}

/// The names of the multileaving methods (`true`) or of the pairwise ones (`false`), in
/// registry order.
pub fn method_names(multileave: bool) -> Vec<&'static str> {
    METHODS
        .iter()
        .filter(|m| m.multileave == multileave)
        .map(|m| m.name)
        .collect()
}

/// An interleaving method and its options, as configured per experiment. The variants' serde
/// tags are the registry's names (a test checks that they agree).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Method {
    /// Team-Draft (Radlinski et al. 2008).
    TeamDraft(#[serde(default)] TeamDraftOptions),
    /// Balanced (Joachims 2002).
    Balanced,
    /// Probabilistic (Hofmann et al. 2011), softmax over ranks with exponent `tau`.
    Probabilistic {
        #[serde(default = "default_tau")]
        tau: f64,
    },
    /// Optimized (Radlinski & Craswell 2013).
    Optimized,
    /// Team-Draft Multileave (Schuth et al. 2014): any number of rankers >= 2.
    TeamDraftMultileave,
    /// Probabilistic Multileave (Schuth et al. 2015): softmax over ranks with exponent `tau`,
    /// 2 to [`MAX_PROBABILISTIC_MULTILEAVE_RANKERS`] rankers.
    ProbabilisticMultileave {
        #[serde(default = "default_tau")]
        tau: f64,
    },
    /// Sample-Only Scored Multileave (Brost et al. 2016): Team-Draft-like rounds, credit by each
    /// ranker's rank of the clicked documents among the shown ones, 1 / rank^`tau`.
    SampleOnlyScored {
        #[serde(default = "default_tau")]
        tau: f64,
    },
    /// Pairwise Preference Multileaving (Oosterhuis & de Rijke 2017): uniform draws from the
    /// rankers' top documents, credit by the debiased click preferences each ranker agrees with.
    PairwisePreference,
}

fn default_tau() -> f64 {
    DEFAULT_TAU
}

impl Method {
    /// The method's registry entry.
    pub fn info(&self) -> &'static MethodInfo {
        &METHODS[match self {
            Method::TeamDraft(_) => 0,
            Method::Balanced => 1,
            Method::Probabilistic { .. } => 2,
            Method::Optimized => 3,
            Method::TeamDraftMultileave => 4,
            Method::ProbabilisticMultileave { .. } => 5,
            Method::SampleOnlyScored { .. } => 6,
            Method::PairwisePreference => 7,
        }]
    }

    /// The method's snake_case name, as in configuration and on the command line.
    pub fn name(&self) -> &'static str {
        self.info().name
    }

    /// The most rankers one shown list of this method may compare: 2 for the pairwise methods.
    pub fn max_rankers(&self) -> usize {
        self.info().max_rankers
    }

    /// Whether the method merges any number of lists (multileaving) rather than exactly two.
    pub fn is_multileave(&self) -> bool {
        self.info().multileave
    }

    /// The method with default options, from its snake_case name.
    pub fn from_name(name: &str) -> Option<Method> {
        method_info(name).map(MethodInfo::default_method)
    }

    /// The exponent of the methods that have one.
    fn tau_mut(&mut self) -> Option<&mut f64> {
        match self {
            Method::Probabilistic { tau }
            | Method::ProbabilisticMultileave { tau }
            | Method::SampleOnlyScored { tau } => Some(tau),
            _ => None,
        }
    }

    /// The method with its exponent set to `tau`, for the methods that have one; the others
    /// are returned as they are.
    pub fn with_tau(mut self, tau: f64) -> Method {
        if let Some(t) = self.tau_mut() {
            *t = tau;
        }
        self
    }

    /// The one check of a method's option values: `tau` within [`TAU`]'s range. The other
    /// options are enums, so any value that deserialises is valid.
    pub fn validate(&self) -> Result<(), InterleaveError> {
        match *self {
            Method::Probabilistic { tau }
            | Method::ProbabilisticMultileave { tau }
            | Method::SampleOnlyScored { tau }
                if !TAU.accepts_number(tau) =>
            {
                Err(InterleaveError::BadTau(tau))
            }
            _ => Ok(()),
        }
    }
}

impl<D> Interleaving<D> {
    /// The name of the method that built this interleaving.
    pub fn method_name(&self) -> &'static str {
        METHODS[match self {
            Interleaving::TeamDraft(_) => 0,
            Interleaving::Balanced(_) => 1,
            Interleaving::Probabilistic(_) => 2,
            Interleaving::Optimized(_) => 3,
            Interleaving::TeamDraftMultileave(_) => 4,
            Interleaving::ProbabilisticMultileave(_) => 5,
            Interleaving::SampleOnlyScored(_) => 6,
            Interleaving::PairwisePreference(_) => 7,
        }]
        .name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn serde_tags_and_options_agree_with_the_registry() {
        for info in &METHODS {
            let method = info.default_method();
            assert_eq!(method.name(), info.name);
            let Value::Object(mut fields) = serde_json::to_value(&method).unwrap() else {
                panic!("{} serialises to an object", info.name)
            };
            assert_eq!(fields.remove("method"), Some(json!(info.name)));
            let options: Vec<&str> = info.options.iter().map(|o| o.name).collect();
            let mut serialised: Vec<&str> = fields.keys().map(String::as_str).collect();
            serialised.sort_unstable();
            let mut listed = options.clone();
            listed.sort_unstable();
            assert_eq!(serialised, listed, "{}", info.name);
            for option in info.options {
                match option.values {
                    OptionValues::Number { default, .. } => {
                        assert_eq!(fields[option.name], json!(default), "{}", info.name)
                    }
                    OptionValues::Choice { values, default } => {
                        assert_eq!(fields[option.name], json!(default), "{}", info.name);
                        for value in values {
                            let mut v = serde_json::Map::new();
                            v.insert("method".into(), json!(info.name));
                            v.insert(option.name.into(), json!(value));
                            serde_json::from_value::<Method>(Value::Object(v))
                                .unwrap_or_else(|e| panic!("{}: {value}: {e}", info.name));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn tau_is_checked_against_one_range() {
        let p = Method::from_name("probabilistic").unwrap();
        for tau in [0.0, 3.0, 100.0] {
            assert!(p.clone().with_tau(tau).validate().is_ok(), "{tau}");
        }
        for tau in [-0.1, 100.5, f64::NAN, f64::INFINITY] {
            let err = p.clone().with_tau(tau).validate().unwrap_err();
            assert!(err.to_string().contains("[0, 100]"), "{err}");
        }
        assert!(Method::Balanced.with_tau(-1.0).validate().is_ok());
    }
}
