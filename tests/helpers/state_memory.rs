//! The bytes a policy state keeps alive, counted by a global allocator (so the figures do not
//! depend on the machine's other allocations), and a state trained as the engine caches one.
//! A binary that measures registers [`CountingAllocator`] as its `#[global_allocator]`.

use joust::bandit::AnyPolicy;
use joust::bandit::{BanditRng, BanditState, Outcome, Pair, PolicySpec, TieRule};
use joust::bandit::{Dts, DtsParams};
use rand::{Rng, SeedableRng};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting the bytes each thread holds.
pub struct CountingAllocator;

thread_local! {
    /// Bytes allocated minus bytes freed by this thread. Per thread, so that the other tests of
    /// the binary, running beside a measurement, do not count in it.
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn count(bytes: isize) {
    // `try_with`: the allocator also runs while a thread's locals are torn down.
    let _ = LIVE.try_with(|live| live.set(live.get() + bytes));
}

// SAFETY: forwards to the system allocator, only counting.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Bytes this thread holds (meaningful only where [`CountingAllocator`] is the global allocator).
pub fn live() -> isize {
    LIVE.with(Cell::get)
}

/// A state of `k` rankers as the engine caches it after some traffic: outcomes recorded (ties
/// included, so the tie counts exist), caches warmed, a pair selected and a champion reported.
/// `auto` is measured at its largest: where it may hand over to DTS, after DTS has taken over
/// (random outcomes do not make every arm confidently beaten in 500 steps, so the hand-over is
/// made here); with more rankers, DTS never takes over.
pub fn trained_state(policy: &str, k: usize) -> BanditState {
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
pub fn live_bytes(policy: &str, k: usize) -> usize {
    let before = live();
    let state = trained_state(policy, k);
    let after = live();
    drop(state);
    after.saturating_sub(before).max(0) as usize
}
