//! `joust prefmatrix`: estimate a preference matrix from LETOR data (a file, or a synthetic data
//! set) and write it in the format `joust simulate --matrix` reads.

use super::interleaving_flags::{method_flag_help, parse_method, with_tau};
use crate::interleave::{DEFAULT_TAU, Method};
use crate::sim::{
    ClickModel, Estimation, FeatureRankers, LIST_LEN, LetorData, SyntheticSpec, estimate_matrix,
    matrix_text, ranker_names, synthetic_letor,
};
use anyhow::{Context, bail};
use std::path::PathBuf;
use std::time::Instant;

/// Estimate a preference matrix between feature rankers by simulated interleaved comparisons.
#[derive(Debug, Clone, clap::Args)]
pub struct PrefmatrixArgs {
    /// LETOR/MSLR data file (`rel qid:Q 1:v1 2:v2 ...`); every feature is a ranker.
    #[arg(
        long,
        required_unless_present = "synthetic",
        conflicts_with = "synthetic"
    )]
    pub letor: Option<PathBuf>,
    /// Use a generated data set instead, QUERIES:DOCS:FEATURES (e.g. 200:30:8), seeded by --seed.
    #[arg(long)]
    pub synthetic: Option<SyntheticSpec>,
    /// Simulated user: perfect, navigational, informational (5 grades; add :2 for 2 grades), random.
    #[arg(long, default_value = "perfect")]
    pub click_model: ClickModel,
    #[arg(
        long,
        // The registry's first method, Team-Draft: the service's default too.
        default_value = crate::interleave::METHODS[0].name,
        value_parser = parse_method,
        help = method_flag_help("Interleaving method", false)
    )]
    pub method: Method,
    /// Softmax exponent for --method probabilistic.
    #[arg(long, default_value_t = DEFAULT_TAU)]
    pub tau: f64,
    /// Comparisons per pair of rankers.
    #[arg(long, default_value_t = 1000)]
    pub comparisons: usize,
    /// Length of each ranker's list and of the shown list.
    #[arg(long, default_value_t = LIST_LEN)]
    pub length: usize,
    /// Seed of the simulated comparisons (and of the --synthetic data).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Where to write the matrix.
    #[arg(long)]
    pub out: PathBuf,
}

/// `joust prefmatrix`.
pub fn run(args: PrefmatrixArgs) -> anyhow::Result<()> {
    let method = with_tau(&args.method, Some(args.tau))?;
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(threads) = args.threads {
        pool = pool.num_threads(threads);
    }
    let pool = pool.build().context("cannot start worker threads")?;
    let data = load(&args)?;
    if data.feature_ids.len() < 2 {
        bail!(
            "the data has {} feature(s); a matrix needs at least 2",
            data.feature_ids.len()
        );
    }
    let how = Estimation {
        method,
        click_model: args.click_model,
        comparisons: args.comparisons,
        list_len: args.length,
        seed: args.seed,
    };
    let (rankers, estimate, seconds) = pool.install(|| {
        let rankers = FeatureRankers::from_letor(&data, args.length);
        let start = Instant::now();
        let estimate = estimate_matrix(&rankers, &how);
        (rankers, estimate, start.elapsed().as_secs_f64())
    });
    let estimate = estimate.map_err(anyhow::Error::msg)?;
    let names = ranker_names(&rankers.feature_ids);
    let source = match (&args.letor, &args.synthetic) {
        (Some(path), _) => path.display().to_string(),
        (None, Some(spec)) => format!(
            "synthetic {}:{}:{}",
            spec.queries, spec.docs_per_query, spec.features
        ),
        (None, None) => unreachable!("load() checked"),
    };
    let comments = [
        "joust prefmatrix: P(row ranker beats column ranker); ranker f<id> ranks by feature <id>"
            .to_string(),
        format!(
            "data {source}, method {}, click model {}, {} comparisons per pair, lists of {}, seed {}",
            how.method.name(),
            how.click_model,
            how.comparisons,
            how.list_len,
            how.seed
        ),
    ];
    std::fs::write(&args.out, matrix_text(&estimate.rows, &names, &comments))
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    println!(
        "wrote {0} x {0} matrix over {1} queries to {2}",
        names.len(),
        rankers.grades.len(),
        args.out.display()
    );
    let ndcg: Vec<(u32, f64)> = data
        .feature_ids
        .iter()
        .map(|&f| (f, data.feature_ndcg(f, args.length)))
        .collect();
    if let Some((f, best)) = ndcg.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)) {
        println!(
            "best feature ranker by NDCG@{}: f{f} ({best:.4})",
            args.length
        );
    }
    println!(
        "{} comparisons in {seconds:.2} s: {:.0} comparisons/s",
        estimate.comparisons,
        estimate.comparisons as f64 / seconds.max(1e-9)
    );
    Ok(())
}

fn load(args: &PrefmatrixArgs) -> anyhow::Result<LetorData> {
    match (&args.letor, &args.synthetic) {
        (Some(path), _) => {
            let file = std::fs::File::open(path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            LetorData::from_reader(std::io::BufReader::new(file))
                .with_context(|| format!("in {}", path.display()))
        }
        (None, Some(spec)) => Ok(synthetic_letor(spec, args.seed)),
        (None, None) => bail!("give --letor FILE or --synthetic QUERIES:DOCS:FEATURES"),
    }
}
