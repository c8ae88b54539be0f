//! How much memory one experiment's cached state takes: what every state keeps, plus what its
//! policy declares ([`Footprint`](super::footprint::Footprint), in the policy's own module).
//!
//! Every state keeps its win matrix (dense `u32` wins and ties, 8 bytes per pair of rankers, up
//! to [`DENSE_LIMIT`] rankers; sparse above, growing with the pairs actually compared) and
//! per-ranker data (names, flags, counters), and the decision's lower bound and evidence per
//! ordered pair with a transposed copy of the bounds (`f32`, 12.75 bytes per pair with their
//! block minimums, up to [`KEPT_BOUNDS`] rankers). On top of that, some policies keep a value per pair
//! of rankers, O(K^2); the others keep O(K):
//!
//! | policy | growth | what grows |
//! | --- | --- | --- |
//! | `dts` | O(K^2) | its table of P(theta_ij > 1/2) as `f64` and as a `u64` threshold (16 bytes per pair), and its upper Copeland scores kept step by step (a threshold, a bit and a heap entry per pair, 24.2 bytes): 41 bytes per pair |
//! | `rucb` | O(K^2) | mean, 1/n and tau per pair, `f64`: 24 bytes per pair |
//! | `multi_sbm` | O(K^2) | a single-armed learner per left ranker, created on first use: up to 24 bytes per pair |
//! | `merge_dts` | O(K·B) | one DTS table per batch of B rankers: 16·B bytes per ranker |
//! | `auto` | O(K) (versions 4 to 6; 6 is the default); O(K^2) up to `copeland_max_arms` rankers, O(K·B) above (version 3) | versions 4 to 6: a few counters per ranker, their cache too; version 3: DTS's tables up to 256 rankers, MergeDTS's (B = 16) above; version 2: DTS's tables once it takes over, O(K) above 256 |
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
    // The bounds, their transposed copy (each arm's strongest beater) and the evidence (the
    // rival with the least), 4 bytes per pair each, and the three tables' block minimums: 4 bytes
    // per block of 16 pairs of a row, three times.
    let bounds = if k <= KEPT_BOUNDS as u64 {
        12 * pairs + 12 * k * k.div_ceil(16)
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
        assert_eq!(growth("auto:version=2", 256), "O(K^2)");
        assert_eq!(growth("auto:version=2", 257), "O(K)");
        assert_eq!(growth("auto:version=1", 16), "O(K)");
        assert_eq!(growth("auto:version=2,copeland_max_arms=0", 16), "O(K)");
        assert_eq!(
            growth("auto:version=2,copeland_max_arms=1000", 1000),
            "O(K^2)"
        );
        // Version 3 is DTS up to copeland_max_arms, MergeDTS with batches of 16 above.
        assert_eq!(growth("auto:version=3", 256), "O(K^2)");
        assert_eq!(growth("auto:version=3", 257), "O(K·B)");
        // Version 4, the default, keeps a few counters per ranker at any size.
        assert_eq!(growth("auto", 256), "O(K)");
        assert_eq!(growth("auto", 5000), "O(K)");
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
