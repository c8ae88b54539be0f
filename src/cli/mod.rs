//! The `joust` command line: argument parsing and dispatch, one file per subcommand. Each
//! subcommand's work lives in the library (`serve`, `sim`); this layer only turns flags into
//! calls and results into printed lines.

mod export;
mod grid;
mod interleaving_flags;
mod keygen;
mod keys;
mod letor_gen;
mod prefmatrix;
mod serve;
mod simulate;
mod simulate_conversions;
mod simulate_segments;
mod simulate_units;

use clap::{Parser, Subcommand};

pub use prefmatrix::PrefmatrixArgs;

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
    Serve(crate::service::ServeArgs),
    /// Run policies against preference matrices as the papers do; writes a summary, CSV and plots.
    ///
    /// With --letor FILE --click-model MODEL --method METHOD instead of --matrix, interleaving and
    /// clicks are in the loop: every feature of the LETOR data is a ranker, and each duel
    /// interleaves the two feature rankers' top-10 lists for a random query and credits a
    /// simulated user's clicks. Regret is then NDCG@10 utility regret, and accuracy counts runs
    /// whose champion is the best feature by NDCG@10. Example:
    ///
    ///   joust letor-gen --size 200:30:20 --out data.txt
    ///
    ///   joust simulate --letor data.txt --click-model navigational --method team_draft
    ///   --policy rucb --steps 100000 --runs 4 --out out/letor
    Simulate(simulate::SimulateArgs),
    /// Run policies on a grid of generated matrices (families x sizes x margins x noise) and
    /// report each policy's worst ratio to the best policy of a cell at each horizon.
    ///
    /// Example (a small grid, about a minute on two cores):
    ///
    ///   joust grid --policy auto --policy merge_dts --sizes 4,16 --margins 0.05 --steps 100000
    ///   --runs 4 --out out/grid
    Grid(grid::GridArgs),
    /// Simulate delayed conversions (purchases after clicks, within an attribution window) and
    /// measure each metric's preference and how often click and purchase champions differ.
    ///
    /// Example (seconds on two cores):
    ///
    ///   joust simulate-conversions --duels 2000 --runs 50 --window-secs 86400
    SimulateConversions(simulate_conversions::SimulateConversionsArgs),
    /// Simulate units (users or sessions) with heavy-tailed query counts and tastes of their own,
    /// and measure how soon and how wrongly the decision is made when evidence is counted per
    /// query or per unit, against the same comparisons from independent units.
    ///
    /// Example (seconds):
    ///
    ///   joust simulate-units --runs 20 --seed 2
    SimulateUnits(simulate_units::SimulateUnitsArgs),
    /// Simulate segments with different winners: a policy learns from all traffic, and each
    /// segment's own counts give its champion and decision.
    ///
    /// Example (seconds):
    ///
    ///   joust simulate-segments --policy uniform --policy auto --runs 20 --seed 2
    SimulateSegments(simulate_segments::SimulateSegmentsArgs),
    /// Print a new random API key (give it to `serve` as scope:KEY in --api-keys).
    Keygen,
    /// Write an experiment's outcomes or conversions to an NDJSON or CSV file, from a running
    /// service or straight from its database.
    Export(export::ExportArgs),
    /// Create, list and revoke the API keys a server stores (through its API, with an admin
    /// key in JOUST_API_KEY).
    ///
    /// Example:
    ///
    ///   JOUST_API_KEY=$ADMIN joust keys create --scope ingest --project search --expires 90d
    Keys(keys::KeysArgs),
    /// Estimate a preference matrix from learning-to-rank data by simulated interleaved
    /// comparisons (one ranker per feature), in the format `joust simulate --matrix` reads.
    Prefmatrix(PrefmatrixArgs),
    /// Write a small seeded synthetic LETOR-format data set (for tests and demos).
    LetorGen(letor_gen::LetorGenArgs),
}

/// Parses the process's arguments and runs the subcommand. An error is printed as its message
/// and causes (never a backtrace, even with `RUST_BACKTRACE` set: the message is written for the
/// user) and the exit status is 1.
pub fn main() -> std::process::ExitCode {
    match run(Cli::parse().command) {
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

fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Serve(args) => serve::run(args),
        Command::Simulate(args) => simulate::run(args),
        Command::Grid(args) => grid::run(args),
        Command::SimulateConversions(args) => simulate_conversions::run(args),
        Command::SimulateUnits(args) => simulate_units::run(args),
        Command::SimulateSegments(args) => simulate_segments::run(args),
        Command::Prefmatrix(args) => prefmatrix::run(args),
        Command::LetorGen(args) => letor_gen::run(args),
        Command::Keygen => keygen::run(),
        Command::Export(args) => export::run(args),
        Command::Keys(args) => keys::run(args),
    }
}

/// `joust prefmatrix` with already parsed arguments.
pub fn run_prefmatrix(args: PrefmatrixArgs) -> anyhow::Result<()> {
    prefmatrix::run(args)
}
