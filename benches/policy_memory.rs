//! Memory per 1,000 rankers for every policy: the bytes a trained state keeps alive, the resident
//! memory it adds to the process, and the engine's estimate (which the memory budget checks):
//! `cargo bench --bench policy_memory`. Each policy is measured in a fresh process, so that the
//! resident memory it reports is not memory another policy's state freed.

#[path = "../tests/helpers/state_memory.rs"]
#[allow(dead_code)]
mod state_memory;

use joust::bandit::{POLICY_NAMES, PolicySpec, estimate_memory};
use state_memory::{CountingAllocator, live, trained_state};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Set in the child process: the policy it measures.
const CHILD_POLICY_ENV: &str = "JOUST_MEMORY_CHILD_POLICY";

fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// The child: measures one policy and prints `MEASURED <heap bytes> <resident bytes>`.
fn measure_one(policy: &str) {
    let rss_before = resident_bytes();
    let live_before = live();
    let state = trained_state(policy, 1000);
    let heap = live() - live_before;
    let rss = resident_bytes().saturating_sub(rss_before);
    println!("MEASURED {heap} {rss}");
    drop(state);
}

fn main() {
    if let Ok(policy) = std::env::var(CHILD_POLICY_ENV) {
        measure_one(&policy);
        return;
    }
    println!(
        "{:<20} {:>12} {:>12} {:>12} {:>8}",
        "policy", "heap MB", "resident MB", "estimate MB", "growth"
    );
    for &policy in POLICY_NAMES {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .env(CHILD_POLICY_ENV, policy)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("MEASURED "))
            .unwrap_or_else(|| panic!("no figures from the child: {text}"));
        let figures: Vec<u64> = line.split(' ').map(|v| v.parse().unwrap()).collect();
        let estimate = estimate_memory(&PolicySpec::new(policy), 1000).unwrap();
        let mb = |b: u64| b as f64 / 1e6;
        println!(
            "{policy:<20} {:>12.2} {:>12.2} {:>12.2} {:>8}",
            mb(figures[0]),
            mb(figures[1]),
            mb(estimate.bytes),
            estimate.growth
        );
    }
}
