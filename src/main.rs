//! The `joust` command line: a thin layer over the library.

use clap::{Parser, Subcommand};
use rand::Rng;

#[derive(Parser)]
#[command(
    name = "joust",
    version,
    about = "Online ranker evaluation with dueling bandits"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP service (on an embedded Postgres unless DATABASE_URL is set).
    Serve(joust::serve::ServeArgs),
    /// Run policies against preference matrices as the papers do; writes a summary, CSV and plots.
    ///
    /// With --letor FILE --click-model MODEL --method METHOD instead of --matrix, interleaving and
    /// clicks are in the loop: every feature of the LETOR data is an arm, and each duel
    /// interleaves the two feature rankers' top-10 lists for a random query and credits a
    /// simulated user's clicks. Regret is then NDCG@10 utility regret, and accuracy counts runs
    /// whose champion is the best feature by NDCG@10. Example:
    ///
    ///   joust letor-gen --size 200:30:20 --out data.txt
    ///
    ///   joust simulate --letor data.txt --click-model navigational --method team_draft
    ///   --policy rucb --steps 100000 --runs 4 --out out/letor
    Simulate(joust::sim::cli::SimulateArgs),
    /// Print a new random API key (give it to `serve` as scope:KEY in --api-keys).
    Keygen,
    /// Estimate a preference matrix from learning-to-rank data by simulated interleaved
    /// comparisons (one ranker per feature), in the format `joust simulate --matrix` reads.
    Prefmatrix(joust::sim::prefmatrix_cli::PrefmatrixArgs),
    /// Write a small seeded synthetic LETOR-format data set (for tests and demos).
    LetorGen(LetorGenArgs),
}

#[derive(clap::Args)]
struct LetorGenArgs {
    /// Size as QUERIES:DOCS:FEATURES, e.g. 200:30:8.
    #[arg(long, default_value = "200:30:8")]
    size: joust::sim::synthetic::SyntheticSpec,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to write the data (LETOR text format).
    #[arg(long)]
    out: std::path::PathBuf,
}

/// Logs go to stderr: INFO by default (`RUST_LOG` changes it), access lines (see
/// `http::access_log`), JSON with `JOUST_LOG_FORMAT=json`. Colour only when stderr is a terminal, so
/// a log file or a collector gets plain text.
fn init_tracing() {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_http=warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    if std::env::var(joust::serve::env::LOG_FORMAT).as_deref() == Ok("json") {
        builder.json().init();
    } else {
        builder.init();
    }
}

/// Runs the command; an error is printed as its message and causes (never a backtrace, even with
/// `RUST_BACKTRACE` set: the message is written for the user) and the exit status is 1.
fn main() -> std::process::ExitCode {
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", report(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

/// `Error: message`, then one `caused by:` line per cause.
fn report(e: &anyhow::Error) -> String {
    let mut text = format!("Error: {e}");
    for cause in e.chain().skip(1) {
        text.push_str(&format!("\n  caused by: {cause}"));
    }
    text
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(args) => {
            init_tracing();
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?
                .block_on(joust::serve::run(args))
        }
        Command::Simulate(args) => joust::sim::cli::run(args),
        Command::Prefmatrix(args) => joust::sim::prefmatrix_cli::run(args),
        Command::LetorGen(args) => {
            let data = joust::sim::synthetic::generate(&args.size, args.seed);
            std::fs::write(&args.out, data.to_letor_text())?;
            println!("wrote {}", args.out.display());
            Ok(())
        }
        Command::Keygen => {
            let bytes: [u8; 24] = rand::rng().random();
            let key: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            println!("{key}");
            Ok(())
        }
    }
}
