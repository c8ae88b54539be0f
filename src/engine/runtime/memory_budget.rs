//! The per-experiment memory budget, checked when an experiment is created or gains a ranker,
//! against the estimate of [`crate::bandit::estimate_memory`] (which says what each policy keeps).

use crate::bandit::{PolicySpec, estimate_memory, registry};

use crate::api::ErrorCode;
use crate::engine::EngineError;

/// The default per-experiment budget: 512 MiB. A 10,000-ranker experiment fits with the O(K)
/// policies and not with the O(K^2) ones, which are refused with the numbers.
pub const DEFAULT_BUDGET_BYTES: u64 = 512 * 1024 * 1024;

/// Refuses (422 `memory_budget_exceeded`) an experiment of `spec` with `k` rankers whose estimate
/// is over `budget` bytes, naming the policy, K, the estimate and the limit, and suggesting a
/// policy meant for many rankers that would fit. A spec the policy itself refuses (unknown name,
/// invalid parameters) passes here: building its state reports why.
pub fn check(spec: &PolicySpec, k: usize, budget: u64) -> Result<(), EngineError> {
    let Ok(e) = estimate_memory(spec, k) else {
        return Ok(());
    };
    if e.bytes <= budget {
        return Ok(());
    }
    let mb = |b: u64| b.div_ceil(1024 * 1024);
    let instead = match alternative(&spec.name, k, budget) {
        Some(name) => format!(" or a policy that grows as O(K), such as {name}"),
        None => String::new(),
    };
    Err(EngineError::invalid(
        ErrorCode::MemoryBudgetExceeded,
        format!(
            "policy `{}` with {k} rankers needs about {} MiB of memory (it grows as {}), over the \
             per-experiment limit of {} MiB (--max-experiment-memory-mb); use fewer rankers{instead}",
            spec.name,
            mb(e.bytes),
            e.growth,
            mb(budget)
        ),
    ))
}

/// A policy meant for many rankers, other than `refused`, whose state with its default
/// parameters and `k` rankers fits in `budget`.
fn alternative(refused: &str, k: usize, budget: u64) -> Option<&'static str> {
    registry()
        .iter()
        .filter(|info| info.for_many_rankers && info.name != refused)
        .find(|info| {
            estimate_memory(&PolicySpec::new(info.name), k).is_ok_and(|e| e.bytes <= budget)
        })
        .map(|info| info.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(cli: &str, k: usize, budget: u64) -> String {
        let spec = PolicySpec::parse_cli(cli).unwrap();
        match check(&spec, k, budget) {
            Err(EngineError::Invalid { message, .. }) => message,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_refusal_suggests_a_policy_that_fits_and_never_the_refused_one() {
        let budget = 1024 * 1024;
        let message = refusal("dts", 132, budget);
        assert!(message.ends_with("such as merge_dts"), "{message}");
        let message = refusal("merge_dts:batch_size=100000", 132, budget);
        assert!(!message.contains("such as merge_dts"), "{message}");
        assert!(message.ends_with("such as merge_rucb"), "{message}");
        // Nothing fits: only fewer rankers.
        let message = refusal("dts", 100_000, budget);
        assert!(message.ends_with("use fewer rankers"), "{message}");
    }

    #[test]
    fn a_spec_the_policy_refuses_is_left_to_the_policy() {
        let bad = PolicySpec::parse_cli("merge_dts:batch_size=1").unwrap();
        assert!(check(&bad, 1_000_000, 1).is_ok());
        assert!(check(&PolicySpec::new("nope"), 1_000_000, 1).is_ok());
    }
}
