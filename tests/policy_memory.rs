//! Memory of one experiment's state, per policy: the engine's estimate (which the per-experiment
//! memory budget checks) must bound what a state really holds once it has learnt and selected.
//!
//! A counting global allocator measures the bytes a state keeps alive (the policy, its caches and
//! the win matrix), so the figures do not depend on the machine's other allocations.
//! `cargo test --release --test policy_memory -- --ignored --nocapture` prints the figures per
//! 1,000 rankers for every policy, with the resident memory they add to the process.

use joust::bandit::{AnyPolicy, POLICY_NAMES};
use joust::bandit::{BanditRng, BanditState, Outcome, Pair, PolicySpec, TieRule};
use joust::bandit::{Dts, DtsParams, estimate_memory};
use rand::{Rng, SeedableRng};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The counter is process-wide: tests that measure take turns.
static MEASURING: Mutex<()> = Mutex::new(());

/// A state of `k` rankers as the engine caches it after some traffic: outcomes recorded (ties
/// included, so the tie counts exist), caches warmed, a pair selected and a champion reported.
/// `auto` is measured at its largest: where it may hand over to DTS, after DTS has taken over
/// (random outcomes do not make every arm confidently beaten in 500 steps, so the hand-over is
/// made here); with more rankers, DTS never takes over.
fn trained_state(policy: &str, k: usize) -> BanditState {
    let spec = PolicySpec {
        name: policy.to_string(),
        params: Default::default(),
    };
    let mut rng = BanditRng::seed_from_u64(1);
    let mut state = BanditState::new(&spec, k, TieRule::Ignore, &mut rng).expect("valid spec");
    for i in 0..500 {
        let pair = state.select(&mut rng);
        let outcome = match i % 10 {
            0 => Outcome::Tie,
            _ if rng.random_bool(0.5) => Outcome::FirstWins,
            _ => Outcome::SecondWins,
        };
        if pair.first != pair.second || outcome != Outcome::Tie {
            state
                .record(Pair::new(pair.first, pair.second), outcome, &mut rng)
                .expect("recorded");
        }
    }
    if let AnyPolicy::Auto(auto) = &mut state.policy
        && auto.params.may_hand_over(k)
    {
        auto.copeland = Some(Dts::resumed(DtsParams::default(), auto.heard));
    }
    state.warm();
    let _ = state.select(&mut rng);
    let _ = state.champion();
    state
}

/// Bytes a trained state of `k` rankers keeps alive.
fn live_bytes(policy: &str, k: usize) -> usize {
    let before = LIVE.load(Ordering::Relaxed);
    let state = trained_state(policy, k);
    let after = LIVE.load(Ordering::Relaxed);
    drop(state);
    after.saturating_sub(before)
}

/// The estimate is an upper bound for every policy, and not a wild one (within 4x, so that the
/// budget does not refuse experiments that would fit). Two sizes, so that a policy whose memory
/// grows faster than its estimate (K^2 against K) is caught.
#[test]
fn the_estimate_bounds_each_policys_memory() {
    let _turn = MEASURING.lock().unwrap();
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

fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

const CHILD_POLICY_ENV: &str = "JOUST_MEMORY_CHILD_POLICY";

/// Not a test of its own: run in a fresh process by `report_memory_per_1000_rankers`, so that the
/// resident memory it reports is not memory another policy's state freed.
#[test]
#[ignore = "run as a child process by report_memory_per_1000_rankers"]
fn child_measures_one_policy() {
    // Run directly (by `--ignored` with the report), it has nothing to measure.
    let Ok(policy) = std::env::var(CHILD_POLICY_ENV) else {
        return;
    };
    let rss_before = resident_bytes();
    let live_before = LIVE.load(Ordering::Relaxed);
    let state = trained_state(&policy, 1000);
    let live = LIVE.load(Ordering::Relaxed) - live_before;
    let rss = resident_bytes().saturating_sub(rss_before);
    println!("MEASURED {live} {rss}");
    drop(state);
}

#[test]
#[ignore = "prints figures: run with --ignored --nocapture"]
fn report_memory_per_1000_rankers() {
    println!(
        "{:<20} {:>12} {:>12} {:>12} {:>8}",
        "policy", "heap MB", "resident MB", "estimate MB", "growth"
    );
    for &policy in POLICY_NAMES {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "child_measures_one_policy",
                "--ignored",
                "--nocapture",
            ])
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
