//! `joust simulate-conversions`: delayed conversions under a conversion model
//! (`sim::run::conversions`), measuring each metric's preference between a ranker that users
//! click and one they buy from, and how often the metrics disagree on the champion.

use crate::interleave::Method;
use crate::sim::conversions::{self, ConversionModel, METRICS, RANKERS};

use super::interleaving_flags::{method_flag_help, parse_method};

#[derive(Debug, Clone, clap::Args)]
pub struct SimulateConversionsArgs {
    /// Duels per run.
    #[arg(long, default_value_t = 2_000)]
    pub duels: u64,
    /// Independent runs; each has its own seed derived from --seed.
    #[arg(long, default_value_t = 50)]
    pub runs: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Documents per query.
    #[arg(long, default_value_t = 30)]
    pub pool: usize,
    /// Documents each ranker lists.
    #[arg(long, default_value_t = 5)]
    pub list_len: usize,
    /// Mean delay from click to purchase, in seconds (exponential).
    #[arg(long, default_value_t = 6.0 * 3600.0)]
    pub mean_delay_secs: f64,
    /// The purchase metrics' attribution window, in seconds.
    #[arg(long, default_value_t = 86_400.0)]
    pub window_secs: f64,
    #[arg(
        long,
        value_parser = parse_method,
        default_value = "team_draft",
        help = method_flag_help("The interleaving method", false)
    )]
    pub method: Method,
}

pub fn run(args: SimulateConversionsArgs) -> anyhow::Result<()> {
    if args.list_len == 0 || args.pool < args.list_len || args.duels == 0 || args.runs == 0 {
        anyhow::bail!("need --duels and --runs of at least 1 and 1 <= --list-len <= --pool");
    }
    if !(args.mean_delay_secs > 0.0 && args.window_secs > 0.0) {
        anyhow::bail!("--mean-delay-secs and --window-secs must be positive");
    }
    let model = ConversionModel {
        pool: args.pool,
        list_len: args.list_len,
        mean_delay_secs: args.mean_delay_secs,
        window_secs: args.window_secs,
    };
    let runs: Vec<_> = (0..args.runs)
        .map(|r| {
            conversions::run(
                &model,
                &args.method,
                args.duels,
                crate::sim::run_seed(args.seed, r),
            )
        })
        .collect();
    println!(
        "{} runs x {} duels, {} interleaving, rankers A = {}, B = {}; delay mean {} s, window {} s",
        args.runs,
        args.duels,
        args.method.name(),
        RANKERS[0],
        RANKERS[1],
        args.mean_delay_secs,
        args.window_secs
    );
    println!(
        "{:<10} {:>22} {:>14} {:>16}",
        "metric", "P(A beats B) +- se", "ties/duel", "runs A champion"
    );
    let champions: Vec<Vec<bool>> = (0..METRICS.len())
        .map(|m| runs.iter().map(|r| r.counts[m].a > r.counts[m].b).collect())
        .collect();
    for (m, name) in METRICS.iter().enumerate() {
        let prefs: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.counts[m].preference())
            .collect();
        let (mean, se) = conversions::mean_stderr(&prefs);
        let ties: Vec<f64> = runs
            .iter()
            .map(|r| r.counts[m].ties as f64 / args.duels as f64)
            .collect();
        let a_champion = champions[m].iter().filter(|&&c| c).count();
        println!(
            "{name:<10} {:>13.4} +- {:.4} {:>14.3} {:>10}/{}",
            mean,
            se,
            conversions::mean_stderr(&ties).0,
            a_champion,
            args.runs
        );
    }
    let disagree = |x: usize, y: usize| {
        champions[x]
            .iter()
            .zip(&champions[y])
            .filter(|(a, b)| a != b)
            .count()
    };
    println!(
        "click and purchase champions differ in {}/{} runs; click and revenue in {}/{}",
        disagree(0, 1),
        args.runs,
        disagree(0, 2),
        args.runs
    );
    let per_duel = |f: fn(&conversions::ConversionRun) -> u64| {
        runs.iter().map(f).sum::<u64>() as f64 / (args.runs * args.duels) as f64
    };
    let purchases = runs.iter().map(|r| r.purchases).sum::<u64>() as f64;
    let lost = runs.iter().map(|r| r.purchases_lost).sum::<u64>() as f64;
    println!(
        "{:.3} clicks and {:.4} purchases per duel; {:.2}% of purchases came after the window",
        per_duel(|r| r.clicks),
        per_duel(|r| r.purchases),
        100.0 * lost / purchases.max(1.0)
    );
    Ok(())
}
