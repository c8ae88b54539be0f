//! `joust simulate-segments`: traffic as a mix of segments with different winners
//! (`sim::units::segments`); a policy learns from all of it, and each segment's own counts
//! give its champion and decision, as the experiment view's `segments` does.

use crate::bandit::{DecisionSettings, PolicySpec};
use crate::sim::run_seed;
use crate::sim::units::segments::{self, SegmentModel};

#[derive(Debug, Clone, clap::Args)]
pub struct SimulateSegmentsArgs {
    /// A policy spec `name[:key=value,...]`; repeat to compare several.
    #[arg(long = "policy", value_name = "SPEC", required = true)]
    pub policies: Vec<String>,
    /// Rankers.
    #[arg(long, default_value_t = 4)]
    pub rankers: usize,
    /// Each segment's share of the traffic, comma-separated; segment s's winner is ranker s.
    #[arg(long, value_delimiter = ',', default_value = "0.5,0.3,0.2")]
    pub weights: Vec<f64>,
    /// Within a segment, a higher-ranked ranker wins with probability 1/2 + gap.
    #[arg(long, default_value_t = 0.1)]
    pub gap: f64,
    /// Duels per run.
    #[arg(long, default_value_t = 20_000)]
    pub steps: u64,
    /// Independent runs per policy; each has its own seed derived from --seed.
    #[arg(long, default_value_t = 20)]
    pub runs: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run(args: SimulateSegmentsArgs) -> anyhow::Result<()> {
    let model = SegmentModel {
        k: args.rankers,
        weights: args.weights.clone(),
        gap: args.gap,
    };
    model.validate().map_err(anyhow::Error::msg)?;
    if args.runs == 0 || args.steps == 0 {
        anyhow::bail!("need --runs and --steps of at least 1");
    }
    let mix = model.mixture();
    println!(
        "{} runs x {} duels, seed {}, {} rankers, gap {}; segments' weights {:?}, winners 0..{}; \
         winner of all traffic: {}",
        args.runs,
        args.steps,
        args.seed,
        args.rankers,
        args.gap,
        args.weights,
        args.weights.len() - 1,
        mix.condorcet_winner()
            .map_or("none".to_string(), |w| w.to_string())
    );
    println!(
        "| policy | segment | weight | outcomes (mean) | champion = its winner | decided | decided_wrong |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let settings = DecisionSettings::default();
    for text in &args.policies {
        let spec = PolicySpec::parse_cli(text).map_err(anyhow::Error::msg)?;
        let mut runs = Vec::new();
        for r in 0..args.runs {
            let (segs, _) =
                segments::run(&spec, &model, &settings, args.steps, run_seed(args.seed, r))
                    .map_err(anyhow::Error::msg)?;
            runs.push(segs);
        }
        let n = args.runs as f64;
        let share = |c: usize| {
            let p = c as f64 / n;
            format!("{p:.2} ± {:.2}", (p * (1.0 - p) / n).sqrt())
        };
        for (s, w) in args.weights.iter().enumerate() {
            let right = runs.iter().filter(|r| r[s].champion == Some(s)).count();
            let decided = runs.iter().filter(|r| r[s].decided).count();
            let wrong = runs
                .iter()
                .filter(|r| r[s].decided && r[s].decided_champion != Some(s))
                .count();
            let outcomes = runs.iter().map(|r| r[s].outcomes as f64).sum::<f64>() / n;
            println!(
                "| {text} | {s} | {w} | {outcomes:.0} | {} | {} | {} |",
                share(right),
                share(decided),
                share(wrong)
            );
        }
    }
    Ok(())
}
