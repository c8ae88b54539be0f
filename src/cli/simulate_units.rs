//! `joust simulate-units`: traffic from units with heavy-tailed query counts and tastes of their
//! own (`sim::units::clustering`), and how soon and how wrongly the decision is made when its
//! evidence is counted per query or per unit, against independent units.

use crate::bandit::DecisionSettings;
use crate::sim::run_seed;
use crate::sim::units::clustering::{self, ARMS, UnitModel};
use crate::sim::units::mean_se;

#[derive(Debug, Clone, clap::Args)]
pub struct SimulateUnitsArgs {
    /// Independent runs; each has its own seed derived from --seed.
    #[arg(long, default_value_t = 100)]
    pub runs: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Comparisons per arm and run, at most.
    #[arg(long, default_value_t = 20_000)]
    pub budget: usize,
    /// Share of units that prefer ranker A.
    #[arg(long, default_value_t = 0.625)]
    pub share: f64,
    /// How often a unit prefers its own ranker (0.5: no taste of its own).
    #[arg(long, default_value_t = 0.9)]
    pub taste: f64,
    /// Pareto shape of a unit's query count (smaller: a heavier tail).
    #[arg(long, default_value_t = 1.1)]
    pub shape: f64,
    /// Largest query count of one unit.
    #[arg(long, default_value_t = 500)]
    pub max_queries: usize,
    /// The decision is checked every this many comparisons.
    #[arg(long, default_value_t = 25)]
    pub check_every: usize,
    /// The decision's error probability.
    #[arg(long, default_value_t = crate::bandit::DEFAULT_DELTA)]
    pub delta: f64,
}

pub fn run(args: SimulateUnitsArgs) -> anyhow::Result<()> {
    let model = UnitModel {
        share: args.share,
        taste: args.taste,
        shape: args.shape,
        max_queries: args.max_queries,
        budget: args.budget,
        check_every: args.check_every,
    };
    model.validate().map_err(anyhow::Error::msg)?;
    if args.runs == 0 || !(args.delta > 0.0 && args.delta <= 0.5) {
        anyhow::bail!("need --runs of at least 1 and 0 < --delta <= 0.5");
    }
    let settings = DecisionSettings {
        delta: args.delta,
        ..DecisionSettings::default()
    };
    let runs: Vec<_> = (0..args.runs)
        .map(|r| clustering::run(&model, &settings, run_seed(args.seed, r)))
        .collect();
    println!(
        "{} runs, seed {}, budget {} comparisons, delta {}; units: {} prefer A with taste {}, \
         Pareto({}) queries up to {}; P(a query prefers A) = {:.3}",
        args.runs,
        args.seed,
        args.budget,
        args.delta,
        args.share,
        args.taste,
        args.shape,
        args.max_queries,
        model.query_preference()
    );
    println!("| arm | decided | decision step (mean ± s.e., decided runs) | decided_wrong |");
    println!("| --- | --- | --- | --- |");
    for (a, name) in ARMS.iter().enumerate() {
        let steps: Vec<f64> = runs
            .iter()
            .filter_map(|r| r[a].decided_at.map(|t| t as f64))
            .collect();
        let wrong = runs.iter().filter(|r| r[a].decided_wrong()).count();
        let (mean, se) = mean_se(&steps);
        let n = args.runs as f64;
        println!(
            "| {name} | {:.2} | {} | {:.3} ± {:.3} |",
            steps.len() as f64 / n,
            if steps.is_empty() {
                "-".to_string()
            } else {
                format!("{mean:.0} ± {se:.0}")
            },
            wrong as f64 / n,
            // A binomial share's standard error.
            (wrong as f64 / n * (1.0 - wrong as f64 / n) / n).sqrt()
        );
    }
    Ok(())
}
