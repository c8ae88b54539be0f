//! Throughput of the Condorcet policies on the 136-ranker MSLR-Navigational matrix:
//! `cargo bench --bench policy_throughput` (`BENCH_ONLY=text` keeps the specs containing it).
//! Measures select + update (the policy's hot loop, as the simulator runs it) on one thread, then
//! select alone on the state the run ended with (what a duel request pays; updates happen in the
//! outcome writer). Specs may carry decision settings (`confirmation=false`: the confirmation
//! layer off), so the duel path is measured with and without the layer.

#[path = "../tests/helpers/policy_run.rs"]
#[allow(dead_code)]
mod policy_run;

use joust::bandit::{BanditRng, BanditState, PolicySpec, TieRule};
use joust::sim::{PrefMatrix, split_decision};
use policy_run::draw_outcome;
use rand::SeedableRng;
use std::time::Instant;

/// The repository's copy (see data/README.md).
const MATRIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/mslr-navigational.txt");

/// CPU time this thread has run, from the scheduler (the machine is shared, so wall-clock time
/// mostly measures the neighbours). Falls back to wall-clock time where it is not available.
fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns * 1e-9)
}

/// Runs `steps` select + duel + update rounds and returns steps per second and the final state.
fn measure(spec: &str, m: &PrefMatrix, steps: usize, seed: u64) -> (f64, BanditState) {
    let (spec, decision) = split_decision(&PolicySpec::parse_cli(spec).unwrap()).unwrap();
    let mut rng = BanditRng::seed_from_u64(seed);
    let mut state = BanditState::new(&spec, m.k(), TieRule::Ignore, &mut rng).unwrap();
    state.set_decision_settings(decision);
    let start = Instant::now();
    let cpu_start = thread_cpu_seconds();
    for _ in 0..steps {
        let pair = state.select(&mut rng);
        let outcome = draw_outcome(m, pair, &mut rng);
        state.record(pair, outcome, &mut rng).unwrap();
    }
    let seconds = match (cpu_start, thread_cpu_seconds()) {
        (Some(a), Some(b)) => b - a,
        _ => start.elapsed().as_secs_f64(),
    };
    (steps as f64 / seconds, state)
}

/// Microseconds of CPU per `select` on `state`, over `n` selections (read-only, so every one
/// starts from the same state).
fn select_micros(state: &BanditState, n: usize) -> f64 {
    let mut rng = BanditRng::seed_from_u64(2);
    let start = Instant::now();
    let cpu_start = thread_cpu_seconds();
    let mut checksum = 0;
    for _ in 0..n {
        checksum += state.select(&mut rng).first;
    }
    std::hint::black_box(checksum);
    let seconds = match (cpu_start, thread_cpu_seconds()) {
        (Some(a), Some(b)) => b - a,
        _ => start.elapsed().as_secs_f64(),
    };
    seconds * 1e6 / n as f64
}

fn main() {
    let m = joust::sim::resolve_matrix(MATRIX).expect("matrix file");
    let winner = m.condorcet_winner();
    for (spec, steps) in [
        ("rucb", 1_000_000),
        (
            "merge_dts:alpha=0.262144,batch_size=16,c=4000000",
            2_000_000,
        ),
        ("merge_dts:alpha=0.262144,batch_size=16,c=400000", 2_000_000),
        (
            "merge_dts:alpha=0.262144,batch_size=16,c=400000,confirmation=false",
            2_000_000,
        ),
        ("merge_dts:alpha=0.262144,batch_size=16,c=4000000", 200_000),
        ("merge_rucb:alpha=0.262144,batch_size=8,c=400000", 2_000_000),
        ("merge_rucb:alpha=0.262144,batch_size=8,c=400000", 200_000),
        ("dts:alpha=0.2097152", 20_000),
        // The default (version 7, Copeland sparring) fresh (1,000 steps) and trained, with and
        // without the decision layer, beside tuned MergeDTS at the same points.
        ("auto", 1_000),
        ("merge_dts:alpha=0.262144,batch_size=16,c=4000000", 1_000),
        ("auto", 2_000_000),
        ("auto:confirmation=false", 2_000_000),
        // Version 3 (DTS with alpha 0.51 at this size) and version 2.
        ("auto:version=3", 20_000),
        ("auto:version=3,confirmation=false", 20_000),
        ("auto:version=2", 200_000),
        ("auto:version=2,confirmation=false", 200_000),
    ] {
        // BENCH_ONLY=text restricts the run to the specs containing it (for profiling).
        if std::env::var("BENCH_ONLY").is_ok_and(|only| !format!("{spec} {steps}").contains(&only))
        {
            continue;
        }
        let (speed, state) = measure(spec, &m, steps, 1);
        let select = select_micros(&state, 2_000);
        let champion = state.champion();
        println!(
            "{spec:<70} {steps:>9} steps {speed:>12.0} steps/s  select {select:>8.1} µs  champion {:?} (true {winner:?}) contenders {} decided {}",
            champion.ranker,
            champion.contenders.len(),
            state.condorcet_decided()
        );
    }
}
