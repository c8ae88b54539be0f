//! Multi-dueling figures: for each multi-dueling policy and m = 2, 4, 8 rankers per query, the
//! regret, accuracy and time per query on a 16-ranker matrix, and the time per query with 136
//! rankers (the size of the MSLR experiments): `cargo bench --bench multi_dueling`.

#[path = "../tests/helpers/policy_run.rs"]
#[allow(dead_code)]
mod policy_run;

use joust::bandit::PolicySpec;
use joust::sim::scenarios;
use policy_run::{IMMEDIATE, MERGE_DTS_TUNED, condorcet16, run_sets, run_sets_with_regret};

fn spec(text: &str) -> PolicySpec {
    PolicySpec::parse_cli(text).unwrap()
}

fn main() {
    regret_by_rankers_per_query();
    println!();
    time_per_query_with_136_rankers();
}

/// Cumulative regret (mean over the shown arms, as [`run_sets_with_regret`]
/// defines it), how often the champion is the winner, and the time per query, for each
/// multi-dueling policy and m = 2, 4, 8 on [`condorcet16`] with immediate feedback.
fn regret_by_rankers_per_query() {
    const RUNS: u64 = 20;
    const QUERIES: usize = 20_000;
    let matrix = condorcet16();
    let winner = matrix.condorcet_winner().unwrap();
    println!("{QUERIES} queries, {RUNS} runs, condorcet16");
    println!(
        "{:<52} {:>3} {:>18} {:>9} {:>10}",
        "policy", "m", "regret (mean ± se)", "accuracy", "us/query"
    );
    for policy in ["mdb", "ucb_candidates", "self_sparring", MERGE_DTS_TUNED] {
        for m in [2, 4, 8] {
            let start = std::time::Instant::now();
            let mut regrets = Vec::new();
            let mut hits = 0;
            for seed in 0..RUNS {
                let (state, perm, regret) =
                    run_sets_with_regret(&spec(policy), &matrix, m, QUERIES, seed, IMMEDIATE);
                regrets.push(regret);
                hits += usize::from(state.champion().ranker.map(|a| perm[a]) == Some(winner));
            }
            let per_query = start.elapsed().as_secs_f64() * 1e6 / (RUNS as f64 * QUERIES as f64);
            let n = regrets.len() as f64;
            let mean = regrets.iter().sum::<f64>() / n;
            let var = regrets.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1.0);
            println!(
                "{policy:<52} {m:>3} {:>10.0} ± {:<6.0} {:>9.2} {per_query:>10.1}",
                mean,
                (var / n).sqrt(),
                hits as f64 / n
            );
        }
    }
}

/// Time per query (selection and learning) with 136 rankers, the size of
/// the MSLR experiments, for each multi-dueling policy and m = 2, 4, 8.
fn time_per_query_with_136_rankers() {
    const QUERIES: usize = 5_000;
    let matrix = scenarios::random_condorcet(136, 1).unwrap();
    println!("{QUERIES} queries, random-condorcet:136:1, 3 runs each");
    println!("{:<52} {:>3} {:>24}", "policy", "m", "us/query (3 runs)");
    for policy in ["mdb", "ucb_candidates", "self_sparring", MERGE_DTS_TUNED] {
        for m in [2, 4, 8] {
            let times: Vec<String> = (0..3)
                .map(|seed| {
                    let start = std::time::Instant::now();
                    run_sets(&spec(policy), &matrix, m, QUERIES, seed, IMMEDIATE);
                    format!(
                        "{:.1}",
                        start.elapsed().as_secs_f64() * 1e6 / QUERIES as f64
                    )
                })
                .collect();
            println!("{policy:<52} {m:>3} {:>24}", times.join(" "));
        }
    }
}
