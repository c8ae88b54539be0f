//! Memory of one experiment's state, per policy: the engine's estimate (which the per-experiment
//! memory budget checks) must bound what a state really holds once it has learnt and selected.
//!
//! A counting global allocator measures the bytes a state keeps alive (the policy, its caches and
//! the win matrix), so the figures do not depend on the machine's other allocations.
//! `cargo bench --bench policy_memory` prints the figures per 1,000 rankers for every policy, with
//! the resident memory they add to the process.

use crate::helpers::state_memory::{CountingAllocator, live_bytes};
use joust::bandit::{POLICY_NAMES, PolicySpec, estimate_memory};

// For the whole binary: it counts per thread, so the other tests do not disturb a measurement.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// The estimate is an upper bound for every policy, and not a wild one (within 4x, so that the
/// budget does not refuse experiments that would fit). Two sizes, so that a policy whose memory
/// grows faster than its estimate (K^2 against K) is caught.
#[test]
fn the_estimate_bounds_each_policys_memory() {
    for &policy in POLICY_NAMES {
        for k in [100, 400] {
            let live = live_bytes(policy, k) as u64;
            let estimate = estimate_memory(&PolicySpec::new(policy), k).unwrap().bytes;
            assert!(
                live <= estimate,
                "{policy} with {k} rankers holds {live} bytes, over its estimate {estimate}"
            );
            assert!(
                estimate <= 4 * live.max(64 * 1024),
                "{policy} with {k} rankers holds {live} bytes, far below its estimate {estimate}"
            );
        }
    }
}
