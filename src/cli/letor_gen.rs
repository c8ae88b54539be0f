//! `joust letor-gen`: a small seeded synthetic LETOR data set.

use crate::sim::{SyntheticSpec, synthetic_letor};

#[derive(clap::Args)]
pub struct LetorGenArgs {
    /// Size as QUERIES:DOCS:FEATURES, e.g. 200:30:8.
    #[arg(long, default_value = "200:30:8")]
    size: SyntheticSpec,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to write the data (LETOR text format).
    #[arg(long)]
    out: std::path::PathBuf,
}

pub fn run(args: LetorGenArgs) -> anyhow::Result<()> {
    let data = synthetic_letor(&args.size, args.seed);
    std::fs::write(&args.out, data.to_letor_text())?;
    println!("wrote {}", args.out.display());
    Ok(())
}
