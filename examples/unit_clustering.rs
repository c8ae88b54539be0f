//! Does traffic clustered in units make the decision confident sooner? Two rankers; ranker 0 is
//! preferred by 62.5% of units, each of which has a strong taste of its own (it prefers its
//! ranker in 90% of its comparisons), so a query prefers ranker 0 with probability 0.6 on
//! average. Three arms, each over the same total number of comparisons:
//!
//! - `independent`: every comparison from a new unit (the evidence the decision assumes);
//! - `clustered, by query`: units with Pareto query counts (a few send hundreds), every
//!   comparison counted (what joust does with `aggregation: "query"`);
//! - `clustered, by unit`: the same traffic, each unit's first decisive comparison counted once
//!   (`aggregation: "unit"`, `bandit::unit_evidence`).
//!
//! For each arm: the share of runs decided within the budget, the comparisons to decide (mean
//! and standard error over the decided runs) and the share of runs decided for the wrong ranker.
//! `cargo run --release --example unit_clustering -- [runs] [budget] [seed]`

use joust::bandit::unit_evidence::UnitEvidence;
use joust::bandit::{BanditRng, DecisionSettings, TieRule, View, WinMatrix, decide};
use rand::{Rng, SeedableRng};

const CHECK_EVERY: usize = 25;

#[derive(Default)]
struct Arm {
    decided: Vec<f64>,
    wrong: usize,
}

fn decided(m: &WinMatrix, settings: &DecisionSettings) -> Option<usize> {
    let active = [true, true];
    let d = decide(&View::new(m, &active, TieRule::Ignore), settings);
    if d.decided { d.champion } else { None }
}

/// A unit's number of comparisons: Pareto with shape 1.1, at most 500.
fn unit_size(rng: &mut BanditRng) -> usize {
    let u: f64 = rng.random_range(0.0..1.0);
    ((1.0 - u).powf(-1.0 / 1.1) as usize).clamp(1, 500)
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let runs = args.first().copied().unwrap_or(100) as usize;
    let budget = args.get(1).copied().unwrap_or(20_000) as usize;
    let seed = args.get(2).copied().unwrap_or(1);
    let settings = DecisionSettings::default();
    let mut arms: [Arm; 3] = Default::default();
    for run in 0..runs {
        let mut rng = BanditRng::seed_from_u64(seed.wrapping_mul(1_000_003) + run as u64);
        let taste = |rng: &mut BanditRng| if rng.random_bool(0.625) { 0.9 } else { 0.1 };
        // Independent: a new unit per comparison.
        let mut m = WinMatrix::new(2);
        for t in 1..=budget {
            let p = taste(&mut rng);
            if rng.random_bool(p) {
                m.record_win(0, 1)
            } else {
                m.record_win(1, 0)
            }
            if t % CHECK_EVERY == 0
                && let Some(c) = decided(&m, &settings)
            {
                arms[0].decided.push(t as f64);
                arms[0].wrong += (c != 0) as usize;
                break;
            }
        }
        // Clustered: units in turn, each sending its comparisons.
        let mut by_query = WinMatrix::new(2);
        let mut by_unit = UnitEvidence::new(2);
        let (mut done_q, mut done_u) = (false, false);
        let (mut t, mut unit) = (0usize, 0u32);
        while t < budget && !(done_q && done_u) {
            let p = taste(&mut rng);
            for _ in 0..unit_size(&mut rng) {
                t += 1;
                let (w, l) = if rng.random_bool(p) { (0, 1) } else { (1, 0) };
                by_query.record_win(w, l);
                by_unit.record(unit, w, l);
                if t % CHECK_EVERY == 0 {
                    for (done, m, arm) in
                        [(&mut done_q, &by_query, 1), (&mut done_u, &by_unit.wins, 2)]
                    {
                        if !*done && let Some(c) = decided(m, &settings) {
                            *done = true;
                            arms[arm].decided.push(t as f64);
                            arms[arm].wrong += (c != 0) as usize;
                        }
                    }
                }
                if t >= budget {
                    break;
                }
            }
            unit += 1;
        }
    }
    println!(
        "{runs} runs per arm, budget {budget} comparisons, seed {seed}, delta {}",
        settings.delta
    );
    println!("| arm | decided | comparisons to decide (mean ± s.e.) | wrong |");
    println!("| --- | --- | --- | --- |");
    for (name, arm) in ["independent", "clustered, by query", "clustered, by unit"]
        .iter()
        .zip(&arms)
    {
        let n = arm.decided.len() as f64;
        let mean = arm.decided.iter().sum::<f64>() / n.max(1.0);
        let var = arm.decided.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        println!(
            "| {name} | {:.2} | {:.0} ± {:.0} | {:.3} |",
            n / runs as f64,
            mean,
            (var / n.max(1.0)).sqrt(),
            arm.wrong as f64 / runs as f64
        );
    }
}
