//! `joust simulate`: reproduce the papers' experiments from the command line.
//!
//! ```text
//! joust simulate --matrix PATH_OR_SCENARIO --policy SPEC [--policy SPEC ...] --steps N --runs R
//!     --seed S --threads T --out DIR [--subset K] [--delay D] [--batch B]
//! joust simulate --letor FILE --click-model MODEL --method METHOD [--tau T] --policy SPEC ...
//!     [--rankers-per-query M]
//! ```
//!
//! With `--matrix`, a duel is a draw from the preference matrix. With `--letor`, interleaving and
//! clicks are in the loop: every feature of the LETOR file is an arm (in ascending feature-id
//! order before each run's shuffle), and a duel interleaves the two rankers' top-10 lists for a
//! random query and credits a simulated user's clicks (`sim::letor`'s click environment). Regret
//! is then NDCG@10 utility regret and accuracy counts champions that are the best feature by
//! NDCG@10. With `--rankers-per-query M` above 2, each step compares up to M rankers through one
//! multileaved list. Every `--letor` run also reports what users saw: clicks per query and the
//! NDCG@10 of the shown lists.
//!
//! Every run also measures decisions (`bandit::decide`): at each checkpoint whether the run is
//! decided and whether wrongly, and the step at which it decided. The decision settings of a
//! policy go in its spec: `confirmation=false`, `max_confirmation_share=S`, `decision_delta=D`,
//! `decision_epsilon=E` (e.g. `auto:confirmation=false`).
//!
//! On a matrix with a Condorcet winner, each policy's decision steps are also measured against
//! the limit (`sim::run::DecisionLimit`): the median, 90th percentile and maximum decision step
//! as ratios to the oracle cost and to the lower bound, printed, in `summary.json`, in
//! `decisions.csv` (one line per policy) and on the decision plot.
//!
//! Writes `summary.json`, `curves.csv`, `decisions.csv` (with a Condorcet winner),
//! `regret.{svg,png}`, `accuracy.{svg,png}` and `decisions.{svg,png}` into DIR.

use std::path::{Path, PathBuf};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::interleaving_flags::{method_flag_help, parse_method, with_tau};
use crate::bandit::{PolicySpec, list_names, multi_ranker_policies};
use crate::interleave::{Method, method_names};
use crate::sim::{
    ClickModel, DuelSource, FeedbackTiming, LetorPlan, MatrixPlan, Simulation, Summary, ratio_text,
    resolve_matrix, write_plots,
};

/// Options of `joust simulate`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimulateArgs {
    /// A matrix file (rows of p_ij separated by whitespace or commas; optional header row or
    /// first column of ranker names; `#` comments) or a built-in scenario: arxiv6, identical:K,
    /// utility:{1good,2good,3good,arith,geom}:{linear,natural,logit}, cycle, cycle2,
    /// random-condorcet:K:SEED, random-copeland:K:SEED, or a generated family's matrix,
    /// family:NAME:K:MARGIN:NOISE:SEED (NAME: transitive, cyclic, copeland, near-ties, long-tail,
    /// bradley-terry, thurstone, copeland-random; see `joust grid`).
    #[arg(
        long,
        value_name = "PATH_OR_SCENARIO",
        required_unless_present = "letor",
        conflicts_with = "letor"
    )]
    pub matrix: Option<String>,

    /// Instead of --matrix: LETOR/MSLR data (`rel qid:Q 1:v1 2:v2 ...`). Every feature is a ranker
    /// (its top-10 list per query); a duel interleaves the two lists for a random query
    /// and credits simulated clicks. Regret is NDCG@10 utility regret, accuracy the fraction of
    /// runs whose champion is the best feature by NDCG@10. Needs --click-model and --method.
    #[arg(long, value_name = "FILE", requires_all = ["click_model", "method"])]
    pub letor: Option<PathBuf>,

    /// With --letor, the simulated user: perfect, navigational, informational (5 grades; add :2
    /// for 2 grades), random.
    #[arg(long, value_name = "MODEL", requires = "letor")]
    pub click_model: Option<ClickModel>,

    #[arg(
        long,
        value_name = "METHOD",
        requires = "letor",
        value_parser = parse_method,
        help = method_flag_help("With --letor, the interleaving method", true)
    )]
    pub method: Option<Method>,

    /// With --letor and --method probabilistic, the softmax exponent [default: 3].
    #[arg(long, requires = "letor")]
    pub tau: Option<f64>,

    /// A policy spec `name[:key=value,...]`, e.g. `merge_dts:alpha=0.262144,batch_size=16`.
    /// Repeat to compare several policies. The decision settings may be given among the keys:
    /// confirmation=false, max_confirmation_share=S, decision_delta=D, decision_epsilon=E.
    #[arg(long = "policy", value_name = "SPEC", required = true)]
    pub policies: Vec<String>,

    /// Steps (duels) per run.
    #[arg(long, default_value_t = 100_000)]
    pub steps: u64,

    /// Independent runs per policy; each shuffles the rankers and has its own seed.
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

    /// Each run plays on a fresh random subset of K rankers of the matrix that has a Condorcet
    /// winner (as in the RUCB paper's experiments); with --letor, on K features drawn uniformly.
    #[arg(long, value_name = "K")]
    pub subset: Option<usize>,

    /// Outcomes reach the policy D steps after their duel was selected.
    #[arg(long, default_value_t = 0, value_name = "D")]
    pub delay: u64,

    /// Outcomes are applied in groups of B.
    #[arg(long, default_value_t = 1, value_name = "B")]
    pub batch: usize,

    #[arg(long, default_value_t = 2, value_name = "M", help = rankers_per_query_help())]
    pub rankers_per_query: usize,

    /// Checkpoints per factor of ten steps (log-spaced; the last is always --steps).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub checkpoints_per_decade: u32,
}

/// Help of `--rankers-per-query`, naming the multileaving methods and the multi-ranker policies
/// from their registries.
fn rankers_per_query_help() -> String {
    format!(
        "With --letor: rankers compared per query. Above 2, each step multileaves up to M \
         rankers' lists (--method {}) and the policy ({}) learns every pair's result",
        list_names(method_names(true), "or"),
        list_names(multi_ranker_policies(), "or")
    )
}

/// Builds the simulation an argument list describes, refusing bad input before any run.
fn simulation(args: &SimulateArgs) -> anyhow::Result<Simulation> {
    let policies = args
        .policies
        .iter()
        .map(|text| {
            PolicySpec::parse_cli(text)
                .map(|spec| (text.clone(), spec))
                .map_err(|e| anyhow::anyhow!("--policy `{text}`: {e}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if args.batch == 0 {
        anyhow::bail!("--batch must be at least 1");
    }
    if args.checkpoints_per_decade == 0 {
        anyhow::bail!("--checkpoints-per-decade must be at least 1");
    }
    let source = match (&args.matrix, &args.letor) {
        (Some(name), None) => {
            let matrix = resolve_matrix(name).map_err(anyhow::Error::msg)?;
            let plan = MatrixPlan::new(matrix, args.subset).map_err(anyhow::Error::msg)?;
            DuelSource::Matrix {
                name: name.clone(),
                plan,
            }
        }
        (None, Some(path)) => {
            let (Some(click_model), Some(method)) = (args.click_model, &args.method) else {
                anyhow::bail!("--letor needs --click-model and --method");
            };
            let method = with_tau(method, args.tau)?;
            let plan = LetorPlan::load(path, method, click_model, args.subset)
                .map_err(anyhow::Error::msg)?;
            DuelSource::Letor(plan)
        }
        _ => anyhow::bail!("give exactly one of --matrix and --letor"),
    };
    let sim = Simulation {
        source,
        policies,
        steps: args.steps,
        runs: args.runs,
        seed: args.seed,
        feedback: FeedbackTiming {
            delay: args.delay,
            batch: args.batch,
        },
        checkpoints_per_decade: args.checkpoints_per_decade,
        rankers_per_query: args.rankers_per_query,
    };
    if args.rankers_per_query < 2 {
        anyhow::bail!("--rankers-per-query must be at least 2");
    }
    sim.validate()?;
    Ok(sim)
}

/// Writes every output file of a summary into `dir`; returns their paths.
fn write_outputs(summary: &Summary, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
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
    let decisions = dir.join("decisions.csv");
    if summary
        .write_decisions_csv(&decisions)
        .with_context(|| format!("cannot write {}", decisions.display()))?
    {
        files.push(decisions);
    }
    files.extend(write_plots(summary, dir).map_err(anyhow::Error::msg)?);
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
        "{} rankers, {} steps x {} runs, seed {}, {} threads, {:.1} s",
        summary.k, summary.steps, summary.runs, summary.seed, threads, summary.timing.wall_seconds
    );
    if let Some(letor) = &summary.letor {
        println!(
            "{} queries, {} clicks, {} interleaving, {} rankers per query; NDCG@{} regret, best: {}",
            letor.queries,
            letor.click_model,
            letor.interleaving.name(),
            letor.rankers_per_query,
            letor.list_len,
            summary
                .winners
                .as_ref()
                .map_or_else(|| "differs per run".to_string(), |w| w.join(", "))
        );
    }
    for p in &summary.policies {
        let last = p.checkpoints.last().expect("at least one checkpoint");
        println!(
            "{:<50} {:>12.0} steps/s/thread   regret {:>12.1} +- {:<10.1} accuracy {:.2}",
            p.policy, p.steps_per_second, last.regret_mean, last.regret_stderr, last.accuracy
        );
        let wrong_max = p
            .checkpoints
            .iter()
            .map(|c| c.decided_wrong)
            .fold(0.0, f64::max);
        println!(
            "{:<50} decided {:.2} at {}, wrong at most {:.3} over the checkpoints{}",
            "",
            last.decided,
            summary.steps,
            wrong_max,
            p.decided_at.map_or_else(String::new, |d| format!(
                "; {} runs decided at step {} (median), {}..{}",
                d.runs, d.median, d.min, d.max
            ))
        );
        if let Some(d) = &p.decision_limit {
            let q = |q: crate::sim::Quantiles| {
                format!(
                    "median {}, p90 {}, max {}",
                    ratio_text(q.median),
                    ratio_text(q.p90),
                    ratio_text(q.max)
                )
            };
            println!(
                "{:<50} decision step / oracle cost {:.0}: {}; / lower bound {:.0}: {}",
                "",
                d.oracle_cost,
                q(d.to_oracle),
                d.lower_bound,
                q(d.to_lower_bound)
            );
        }
        if let Some(b) = &p.regret_bound {
            println!(
                "{:<50} regret lower bound of consistent policies C ln T = {:.1} ln {} = {:.0}: {}",
                "",
                b.rate,
                last.step,
                b.at_horizon,
                b.ratio.map_or_else(
                    || "nothing to rule out".into(),
                    |r| format!("regret {r:.2}x it")
                )
            );
        }
        if let (Some(clicks), Some(ndcg)) = (last.clicks, last.shown_ndcg) {
            println!(
                "{:<50} last window: {:.3} +- {:.3} clicks per query, shown NDCG@10 {:.4} +- {:.4}",
                "", clicks.mean, clicks.stderr, ndcg.mean, ndcg.stderr
            );
        }
    }
    for f in files {
        println!("wrote {}", f.display());
    }
    Ok(())
}
