//! How much memory one experiment's cached state takes, per policy, and the per-experiment
//! budget checked when an experiment is created or gains a ranker.
//!
//! Every experiment keeps its win matrix (dense `u32` wins and ties, 8 bytes per pair of rankers,
//! up to `bandit::wins::DENSE_LIMIT` rankers; sparse above, growing with the pairs actually
//! compared) and per-ranker data (names, flags, counters). On top of that, some policies keep a
//! value per pair of rankers, O(K^2); the others keep O(K):
//!
//! | policy | growth | what grows |
//! | --- | --- | --- |
//! | `dts` | O(K^2) | its table of P(theta_ij > 1/2) as `f64` and as a `u64` threshold (16 bytes per pair), and its upper Copeland scores kept step by step (a threshold, a bit and a heap entry per pair, 24.2 bytes): 41 bytes per pair |
//! | `rucb` | O(K^2) | mean, 1/n and tau per pair, `f64`: 24 bytes per pair |
//! | `multi_sbm` | O(K^2) | a single-armed learner per left ranker, created on first use: up to 24 bytes per pair |
//! | `merge_dts` | O(K·B) | one DTS table per batch of B rankers: 16·B bytes per ranker |
//! | `auto` | O(K^2) up to 256 rankers | DTS's tables once it takes over (version 2, at most `copeland_max_arms` rankers); O(K) above |
//! | every other policy | O(K) | a few counters per ranker |
//!
//! The per-ranker and per-pair figures are upper bounds checked by `tests/policies/memory_estimate.rs`
//! against what a state really holds after learning. The budget bounds the cached state; a
//! write briefly holds a second copy while it applies outcomes.

use crate::bandit::PolicySpec;
use crate::bandit::auto::AutoParams;
use crate::bandit::wins::DENSE_LIMIT;

use super::EngineError;

/// The default per-experiment budget: 512 MiB. A 10,000-ranker experiment fits with the O(K)
/// policies; with `dts` (4.1 GB), `rucb` or `multi_sbm` (2.4 GB) it does not, and is refused
/// with the numbers.
pub const DEFAULT_BUDGET_BYTES: u64 = 512 * 1024 * 1024;

/// Bytes per ranker that every policy's state takes (names, flags, counters, caches), as an
/// upper bound measured on every policy by `tests/policies/memory_estimate.rs`.
const PER_RANKER: u64 = 1024;
/// Fixed overhead of a state.
const BASE: u64 = 64 * 1024;

/// An experiment's estimated memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    pub bytes: u64,
    /// `O(K)`, `O(K·B)` or `O(K^2)`.
    pub growth: &'static str,
}

/// DTS's bytes per pair of rankers (module docs).
const DTS_PER_PAIR: u64 = 41;

/// Bytes the policy itself keeps per pair of rankers (0 for the O(K) policies), with its growth.
fn policy_cost(policy: &str, params: Option<&PolicySpec>, k: u64) -> (u64, u64, &'static str) {
    // (bytes per pair, bytes per ranker, growth)
    match policy {
        "dts" => (DTS_PER_PAIR, 0, "O(K^2)"),
        "rucb" => (24, 0, "O(K^2)"),
        "multi_sbm" => (24, 0, "O(K^2)"),
        "merge_dts" => {
            let batch = params
                .and_then(|s| s.params.get("batch_size"))
                .and_then(|v| v.as_u64())
                .unwrap_or(MERGE_DTS_DEFAULT_BATCH);
            (0, 16 * batch, "O(K·B)")
        }
        "auto" if auto_may_hand_over(params, k) => (DTS_PER_PAIR, 0, "O(K^2)"),
        _ => (0, 0, "O(K)"),
    }
}

/// Whether an `auto` state with `k` rankers may come to hold DTS's table (the policy's own
/// rule, with the spec's parameters or the defaults). A state that has handed over keeps DTS's
/// table if rankers are added past `copeland_max_arms`, which this estimate then undercounts.
fn auto_may_hand_over(spec: Option<&PolicySpec>, k: u64) -> bool {
    let k = k as usize;
    let params: AutoParams = spec.and_then(|s| s.params(k).ok()).unwrap_or_default();
    params.may_hand_over(k)
}

/// MergeDTS's default batch size (see `bandit::merge_dts`).
const MERGE_DTS_DEFAULT_BATCH: u64 = 4;

/// The estimated memory of a `policy` state with `k` rankers, with its default parameters.
pub fn estimate(policy: &str, k: usize) -> Estimate {
    estimate_with(policy, None, k)
}

fn estimate_with(policy: &str, spec: Option<&PolicySpec>, k: usize) -> Estimate {
    let k = k as u64;
    let (per_pair, per_ranker, growth) = policy_cost(policy, spec, k);
    let matrix = if k <= DENSE_LIMIT as u64 {
        8 * k * k
    } else {
        0
    };
    Estimate {
        bytes: BASE + matrix + k * (PER_RANKER + per_ranker) + per_pair * k * k,
        growth,
    }
}

/// Refuses (422 `memory_budget_exceeded`) an experiment of `spec` with `k` rankers whose estimate
/// is over `budget` bytes, naming the policy, K, the estimate and the limit.
pub fn check(spec: &PolicySpec, k: usize, budget: u64) -> Result<(), EngineError> {
    let e = estimate_with(&spec.name, Some(spec), k);
    if e.bytes <= budget {
        return Ok(());
    }
    let mb = |b: u64| b.div_ceil(1024 * 1024);
    Err(EngineError::invalid(
        super::ErrorCode::MemoryBudgetExceeded,
        format!(
            "policy `{}` with {k} rankers needs about {} MiB of memory (it grows as {}), over the \
             per-experiment limit of {} MiB (--max-experiment-memory-mb); use fewer rankers or a \
             policy that grows as O(K), such as merge_dts",
            spec.name,
            mb(e.bytes),
            e.growth,
            mb(budget)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_counts_dts_table_only_where_it_may_hand_over() {
        let growth = |cli: &str, k: usize| {
            let spec = PolicySpec::parse_cli(cli).unwrap();
            estimate_with(&spec.name, Some(&spec), k).growth
        };
        assert_eq!(growth("auto", 256), "O(K^2)");
        assert_eq!(growth("auto", 257), "O(K)");
        assert_eq!(growth("auto:version=1", 16), "O(K)");
        assert_eq!(growth("auto:copeland_max_arms=0", 16), "O(K)");
        assert_eq!(growth("auto:copeland_max_arms=1000", 1000), "O(K^2)");
    }
}
