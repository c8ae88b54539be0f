//! How much memory one experiment's cached state takes: what every state keeps, plus what its
//! policy declares ([`Footprint`], in the policy's own module).
//!
//! Every state keeps its win matrix (dense `u32` wins and ties, 8 bytes per pair of rankers, up
//! to [`DENSE_LIMIT`] rankers; sparse above, growing with the pairs actually compared) and
//! per-ranker data (names, flags, counters), and the decision's lower bound per ordered pair
//! (`f32`, 4 bytes per pair, up to [`KEPT_BOUNDS`] rankers). On top of that, some policies keep a value per pair
//! of rankers, O(K^2); the others keep O(K):
//!
//! | policy | growth | what grows |
//! | --- | --- | --- |
//! | `dts` | O(K^2) | its table of P(theta_ij > 1/2) as `f64` and as a `u64` threshold (16 bytes per pair), and its upper Copeland scores kept step by step (a threshold, a bit and a heap entry per pair, 24.2 bytes): 41 bytes per pair |
//! | `rucb` | O(K^2) | mean, 1/n and tau per pair, `f64`: 24 bytes per pair |
//! | `multi_sbm` | O(K^2) | a single-armed learner per left ranker, created on first use: up to 24 bytes per pair |
//! | `merge_dts` | O(K·B) | one DTS table per batch of B rankers: 16·B bytes per ranker |
//! | `auto` | O(K^2) up to `copeland_max_arms` rankers | DTS's tables once it takes over (version 2); O(K) above |
//! | every other policy | O(K) | a few counters per ranker |
//!
//! The per-ranker and per-pair figures are upper bounds checked by `tests/policies/memory_estimate.rs`
//! against what a state really holds after learning. The estimate bounds the cached state; a
//! write briefly holds a second copy while it applies outcomes.

use super::decision::KEPT_BOUNDS;
use super::registry::policy_info;
use super::wins::DENSE_LIMIT;
use super::{PolicySpec, SpecError};

/// Bytes per ranker that every policy's state takes (names, flags, counters, caches), as an
/// upper bound measured on every policy by `tests/policies/memory_estimate.rs`.
const PER_RANKER: u64 = 1024;
/// Fixed overhead of a state.
const BASE: u64 = 64 * 1024;

/// What a policy keeps beyond every state's share, for its parameters and K rankers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    /// Bytes per pair of rankers (0 for the policies that grow as O(K)).
    pub per_pair: u64,
    /// Bytes per ranker beyond every state's share.
    pub per_ranker: u64,
    /// `O(K)`, `O(K·B)` or `O(K^2)`.
    pub growth: &'static str,
}

impl Footprint {
    /// A few counters per ranker: within every state's share.
    pub const LINEAR: Footprint = Footprint {
        per_pair: 0,
        per_ranker: 0,
        growth: "O(K)",
    };

    /// A value per pair of rankers.
    pub const fn per_pair(bytes: u64) -> Footprint {
        Footprint {
            per_pair: bytes,
            per_ranker: 0,
            growth: "O(K^2)",
        }
    }

    /// Extra bytes per ranker, growing as `growth` says.
    pub const fn per_ranker(bytes: u64, growth: &'static str) -> Footprint {
        Footprint {
            per_pair: 0,
            per_ranker: bytes,
            growth,
        }
    }
}

/// An experiment's estimated memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryEstimate {
    pub bytes: u64,
    /// `O(K)`, `O(K·B)` or `O(K^2)`.
    pub growth: &'static str,
}

/// The estimated memory of a state of `spec` with `k` rankers. Saturates rather than wrapping,
/// so that no parameter is large enough to make a huge state look small. Refuses what the policy
/// itself would refuse (an unknown name, invalid parameters).
pub fn estimate_memory(spec: &PolicySpec, k: usize) -> Result<MemoryEstimate, SpecError> {
    let footprint = policy_info(&spec.name)?.footprint(spec, k)?;
    let k = k as u64;
    let pairs = k.saturating_mul(k);
    let matrix = if k <= DENSE_LIMIT as u64 {
        8 * pairs
    } else {
        0
    };
    let bounds = if k <= KEPT_BOUNDS as u64 {
        4 * pairs
    } else {
        0
    };
    let bytes = BASE
        .saturating_add(matrix)
        .saturating_add(bounds)
        .saturating_add(k.saturating_mul(PER_RANKER.saturating_add(footprint.per_ranker)))
        .saturating_add(footprint.per_pair.saturating_mul(pairs));
    Ok(MemoryEstimate {
        bytes,
        growth: footprint.growth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn growth(cli: &str, k: usize) -> &'static str {
        estimate_memory(&PolicySpec::parse_cli(cli).unwrap(), k)
            .unwrap()
            .growth
    }

    #[test]
    fn auto_counts_dts_table_only_where_it_may_hand_over() {
        assert_eq!(growth("auto", 256), "O(K^2)");
        assert_eq!(growth("auto", 257), "O(K)");
        assert_eq!(growth("auto:version=1", 16), "O(K)");
        assert_eq!(growth("auto:copeland_max_arms=0", 16), "O(K)");
        assert_eq!(growth("auto:copeland_max_arms=1000", 1000), "O(K^2)");
    }

    #[test]
    fn huge_parameters_saturate_instead_of_wrapping() {
        let spec = PolicySpec::parse_cli(&format!("merge_dts:batch_size={}", u64::MAX)).unwrap();
        assert_eq!(estimate_memory(&spec, 10).unwrap().bytes, u64::MAX);
        let huge = estimate_memory(&PolicySpec::new("dts"), usize::MAX).unwrap();
        assert_eq!(huge.bytes, u64::MAX);
    }

    #[test]
    fn what_the_policy_refuses_has_no_estimate() {
        assert!(estimate_memory(&PolicySpec::new("no_such_policy"), 10).is_err());
        let bad = PolicySpec::parse_cli("merge_dts:batch_size=1").unwrap();
        assert!(estimate_memory(&bad, 10).is_err());
    }
}
