//! Policy parameters: each policy declares its parameter struct once with [`policy_params!`],
//! every field with its default and its accepted range, and gets the struct, its `Default`, its
//! validation and its entry in the registry ([`super::registry::PolicyKind`]) from that one
//! declaration.

use std::fmt::Display;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Parameters of one policy: deserialised from the spec (unknown names are refused by
/// `#[serde(deny_unknown_fields)]`), with defaults from the paper, then validated.
pub trait PolicyParams: DeserializeOwned + Serialize + Default {
    /// Checks ranges for an experiment of `k` arms. The message names the parameter and the
    /// accepted range.
    fn validate(&self, k: usize) -> Result<(), String>;
}

/// The accepted values of one parameter, checked in [`PolicyParams::validate`].
pub trait Check<T> {
    /// Checks `value` of the parameter `name` for an experiment of `k` arms.
    fn check(&self, name: &str, value: &T, k: usize) -> Result<(), String>;
}

/// Any value.
pub struct Any;

impl<T> Check<T> for Any {
    fn check(&self, _: &str, _: &T, _: usize) -> Result<(), String> {
        Ok(())
    }
}

/// A finite real in (min, max].
pub struct Open(pub f64, pub f64);

impl Check<f64> for Open {
    fn check(&self, name: &str, value: &f64, _: usize) -> Result<(), String> {
        check_range(name, *value, self.0, self.1, false)
    }
}

/// A finite real in [min, max].
pub struct Closed(pub f64, pub f64);

impl Check<f64> for Closed {
    fn check(&self, name: &str, value: &f64, _: usize) -> Result<(), String> {
        check_range(name, *value, self.0, self.1, true)
    }
}

/// A whole number of at least `min`.
pub struct AtLeast<T>(pub T);

impl<T: PartialOrd + Display> Check<T> for AtLeast<T> {
    fn check(&self, name: &str, value: &T, _: usize) -> Result<(), String> {
        if *value >= self.0 {
            Ok(())
        } else {
            Err(format!("`{name}` must be at least {}, got {value}", self.0))
        }
    }
}

/// A whole number in [min, max].
pub struct Between<T>(pub T, pub T);

impl<T: PartialOrd + Display> Check<T> for Between<T> {
    fn check(&self, name: &str, value: &T, _: usize) -> Result<(), String> {
        if *value >= self.0 && *value <= self.1 {
            Ok(())
        } else {
            Err(format!(
                "`{name}` must be in [{}, {}], got {value}",
                self.0, self.1
            ))
        }
    }
}

/// A horizon: at least the number of arms and at least 2 (the elimination policies' guarantees
/// need T >= K).
pub struct Horizon;

impl Check<u64> for Horizon {
    fn check(&self, name: &str, value: &u64, k: usize) -> Result<(), String> {
        if *value < (k as u64).max(2) {
            return Err(format!(
                "`{name}` must be at least the number of rankers ({k}) and at least 2, got {value}"
            ));
        }
        Ok(())
    }
}

/// An optional value, checked by the inner check when present.
pub struct Optional<C>(pub C);

impl<T, C: Check<T>> Check<Option<T>> for Optional<C> {
    fn check(&self, name: &str, value: &Option<T>, k: usize) -> Result<(), String> {
        match value {
            Some(v) => self.0.check(name, v, k),
            None => Ok(()),
        }
    }
}

/// A check with its own message.
pub struct Custom<F>(pub F);

impl<T, F: Fn(&T) -> Result<(), String>> Check<T> for Custom<F> {
    fn check(&self, _: &str, value: &T, _: usize) -> Result<(), String> {
        (self.0)(value)
    }
}

/// Checks a real parameter against an open or closed range.
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

/// Declares a policy's parameters and what the registry knows of the policy, in one place:
///
/// ```ignore
/// policy_params! {
///     /// Parameters of `rucb`.
///     pub struct RucbParams for Rucb {
///         /// Exploration parameter of the confidence bounds.
///         pub alpha: f64 = 0.51, Open(0.0, 1e6);
///     }
///     memory(params, k) => Footprint::per_pair(24);
/// }
/// ```
///
/// Fields are checked in the order written. After the struct, optionally and in this order:
/// `rankers_per_query = m;` (the most rankers one query may compare, 2 when absent),
/// `for_many_rankers = true;` (suggested when another policy is over the memory budget),
/// `memory(params, k) => footprint;` (what the policy keeps beyond every state's share, O(K)
/// when absent) and `record(params) => { ... }` (what the recorded spec must pin).
macro_rules! policy_params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident for $policy:ty {
            $(
                $(#[$fmeta:meta])*
                pub $field:ident : $ty:ty = $default:expr, $check:expr;
            )*
        }
        $( rankers_per_query = $rankers:expr; )?
        $( for_many_rankers = $many:expr; )?
        $( memory($p:ident, $k:ident) => $memory:expr; )?
        $( record($spec:ident) => $record:block )?
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl Default for $name {
            fn default() -> Self {
                $name { $( $field: $default, )* }
            }
        }

        impl $crate::bandit::params::PolicyParams for $name {
            fn validate(&self, k: usize) -> Result<(), String> {
                let _ = k;
                $(
                    $crate::bandit::params::Check::check(
                        &$check,
                        stringify!($field),
                        &self.$field,
                        k,
                    )?;
                )*
                Ok(())
            }
        }

        impl $crate::bandit::registry::PolicyKind for $name {
            type Policy = $policy;
            $( const MAX_RANKERS_PER_QUERY: usize = $rankers; )?
            $( const FOR_MANY_RANKERS: bool = $many; )?

            fn build(self, k: usize, rng: &mut $crate::bandit::BanditRng) -> $policy {
                <$policy>::new(self, k, rng)
            }

            $(
                fn footprint(&self, $k: usize) -> $crate::bandit::footprint::Footprint {
                    let $p = self;
                    let _ = (&$p, $k);
                    $memory
                }
            )?

            $(
                fn record($spec: &mut serde_json::Map<String, serde_json::Value>) $record
            )?
        }
    };
}

pub(crate) use policy_params;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_check_names_the_parameter() {
        assert!(check_range("alpha", 0.51, 0.0, 10.0, false).is_ok());
        let err = check_range("alpha", 0.0, 0.0, 10.0, false).unwrap_err();
        assert!(err.contains("alpha"), "{err}");
        assert!(check_range("alpha", f64::NAN, 0.0, 10.0, true).is_err());
    }

    #[test]
    fn whole_number_checks_say_the_range() {
        assert_eq!(
            AtLeast(2usize).check("batch_size", &1, 5).unwrap_err(),
            "`batch_size` must be at least 2, got 1"
        );
        assert_eq!(
            Between(1usize, 8).check("window", &9, 5).unwrap_err(),
            "`window` must be in [1, 8], got 9"
        );
        assert!(Horizon.check("horizon", &5, 6).is_err());
        assert!(Horizon.check("horizon", &6, 6).is_ok());
        assert!(Optional(Open(0.0, 0.5)).check("gamma", &None, 3).is_ok());
        assert!(
            Optional(Open(0.0, 0.5))
                .check("gamma", &Some(0.6), 3)
                .is_err()
        );
    }
}
