//! `joust simulate`: reproduce the papers' experiments from the command line.
//!
//! ```text
//! joust simulate --matrix PATH_OR_SCENARIO --policy SPEC [--policy SPEC ...] --steps N --runs R
//!     --seed S --threads T --out DIR [--subset K] [--delay D] [--batch B]
//! ```
//!
//! Writes `summary.json`, `curves.csv`, `regret.{svg,png}` and `accuracy.{svg,png}` into DIR.

use std::path::{Path, PathBuf};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::feedback::Feedback;
use super::simulation::Simulation;
use super::source::{self, MatrixPlan};
use super::summary::Summary;
use crate::bandit::PolicySpec;

/// Options of `joust simulate`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimulateArgs {
    /// A matrix file (rows of p_ij separated by whitespace or commas; optional header row or
    /// first column of ranker names; `#` comments) or a built-in scenario: arxiv6,
    /// utility:{1good,2good,3good,arith,geom}:{linear,natural,logit}, cycle, cycle2,
    /// random-condorcet:K:SEED, random-copeland:K:SEED.
    #[arg(long, value_name = "PATH_OR_SCENARIO")]
    pub matrix: String,

    /// A policy spec `name[:key=value,...]`, e.g. `merge_dts:alpha=0.262144,batch_size=16`.
    /// Repeat to compare several policies.
    #[arg(long = "policy", value_name = "SPEC", required = true)]
    pub policies: Vec<String>,

    /// Steps (duels) per run.
    #[arg(long, default_value_t = 100_000)]
    pub steps: u64,

    /// Independent runs per policy; each shuffles the arms and has its own seed.
    #[arg(long, default_value_t = 10)]
    pub runs: u64,

    /// Seed of the whole simulation; run r uses a seed derived from (seed, r).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Worker threads [default: all cores]. Does not change the results.
    #[arg(long)]
    pub threads: Option<usize>,

    /// Directory for the summary, the CSV and the plots (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// Each run plays on a fresh random subset of K arms of the matrix that has a Condorcet
    /// winner (as in the RUCB paper's experiments).
    #[arg(long, value_name = "K")]
    pub subset: Option<usize>,

    /// Outcomes reach the policy D steps after their duel was selected.
    #[arg(long, default_value_t = 0, value_name = "D")]
    pub delay: u64,

    /// Outcomes are applied in groups of B.
    #[arg(long, default_value_t = 1, value_name = "B")]
    pub batch: usize,

    /// Checkpoints per factor of ten steps (log-spaced; the last is always --steps).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub checkpoints_per_decade: u32,
}

/// Builds the simulation an argument list describes, refusing bad input before any run.
pub fn simulation(args: &SimulateArgs) -> anyhow::Result<Simulation> {
    let policies = args
        .policies
        .iter()
        .map(|text| {
            PolicySpec::parse_cli(text)
                .map(|spec| (text.clone(), spec))
                .map_err(|e| anyhow::anyhow!("--policy `{text}`: {e}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let matrix = source::resolve(&args.matrix).map_err(anyhow::Error::msg)?;
    let plan = MatrixPlan::new(matrix, args.subset).map_err(anyhow::Error::msg)?;
    if args.batch == 0 {
        anyhow::bail!("--batch must be at least 1");
    }
    if args.checkpoints_per_decade == 0 {
        anyhow::bail!("--checkpoints-per-decade must be at least 1");
    }
    let sim = Simulation {
        matrix_name: args.matrix.clone(),
        plan,
        policies,
        steps: args.steps,
        runs: args.runs,
        seed: args.seed,
        feedback: Feedback {
            delay: args.delay,
            batch: args.batch,
        },
        checkpoints_per_decade: args.checkpoints_per_decade,
    };
    sim.validate()?;
    Ok(sim)
}

/// Writes every output file of a summary into `dir`; returns their paths.
pub fn write_outputs(summary: &Summary, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let json = dir.join("summary.json");
    summary
        .write_json(&json)
        .with_context(|| format!("cannot write {}", json.display()))?;
    let csv = dir.join("curves.csv");
    summary
        .write_csv(&csv)
        .with_context(|| format!("cannot write {}", csv.display()))?;
    let mut files = vec![json, csv];
    files.extend(super::plot::write_plots(summary, dir).map_err(anyhow::Error::msg)?);
    Ok(files)
}

/// `joust simulate`.
pub fn run(args: SimulateArgs) -> anyhow::Result<()> {
    let sim = simulation(&args)?;
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    if threads == 0 {
        anyhow::bail!("--threads must be at least 1");
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;

    // Hidden by indicatif when stderr is not a terminal (CI logs, pipes).
    let bar = ProgressBar::with_draw_target(
        Some(sim.policies.len() as u64 * sim.runs),
        ProgressDrawTarget::stderr(),
    );
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs [{elapsed_precise}, eta {eta}]")
            .expect("valid progress template"),
    );
    let summary = sim.run(threads, &|| bar.inc(1))?;
    bar.finish_and_clear();

    let files = write_outputs(&summary, &args.out)?;
    println!(
        "{} arms, {} steps x {} runs, seed {}, {} threads, {:.1} s",
        summary.k, summary.steps, summary.runs, summary.seed, threads, summary.timing.wall_seconds
    );
    for p in &summary.policies {
        let last = p.checkpoints.last().expect("at least one checkpoint");
        println!(
            "{:<50} {:>12.0} steps/s/thread   regret {:>12.1} +- {:<10.1} accuracy {:.2}",
            p.policy, p.steps_per_second, last.regret_mean, last.regret_stderr, last.accuracy
        );
    }
    for f in files {
        println!("wrote {}", f.display());
    }
    Ok(())
}
