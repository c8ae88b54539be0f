//! `joust grid`: every policy on every cell of a grid of generated matrices, and each policy's
//! worst ratio to the best policy of a cell (`sim::grid`). Writes `grid.md` and `grid.json`
//! after every cell, so a long grid can be read (and stopped) part way; run again into the same
//! directory, it reuses the figures it already has.

use std::path::PathBuf;

use anyhow::Context;

use crate::bandit::PolicySpec;
use crate::sim::grid::{CellResult, GridPlan, GridRuns, markdown};

/// Options of `joust grid`.
#[derive(Debug, Clone, clap::Args)]
pub struct GridArgs {
    /// A policy spec `name[:key=value,...]`; repeat for every policy to compare.
    #[arg(long = "policy", value_name = "SPEC", required = true)]
    pub policies: Vec<String>,

    /// Families, comma-separated: transitive, cyclic, copeland, near-ties, long-tail,
    /// bradley-terry, thurstone, copeland-random [default: all].
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub families: Vec<String>,

    /// A matrix to add as it is (a file, e.g. data/mslr-navigational.txt, or a scenario);
    /// repeat for more. With --matrix and no --families, only the given matrices run.
    #[arg(long = "matrix", value_name = "PATH_OR_SCENARIO")]
    pub matrices: Vec<String>,

    /// Numbers of rankers, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "4,16,64,200")]
    pub sizes: Vec<usize>,

    /// The winner's smallest gap (p - 1/2), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0.005,0.05,0.3")]
    pub margins: Vec<f64>,

    /// How far the other preferences are moved at random, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0.05")]
    pub noise: Vec<f64>,

    /// Steps per run; horizons are 10^4, 10^5, ... below it, and it.
    #[arg(long, default_value_t = 1_000_000)]
    pub steps: u64,

    /// Runs per policy and cell.
    #[arg(long, default_value_t = 8)]
    pub runs: u64,

    /// Seed of the generated matrices: tune on one, report on another.
    #[arg(long, default_value_t = 1)]
    pub matrix_seed: u64,

    /// Seed of the runs (arm shuffles and duel draws).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Worker threads [default: all cores]. Does not change the results.
    #[arg(long)]
    pub threads: Option<usize>,

    /// Directory for grid.md and grid.json (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

pub fn run(args: GridArgs) -> anyhow::Result<()> {
    let policies = args
        .policies
        .iter()
        .map(|text| {
            PolicySpec::parse_cli(text)
                .map(|spec| (text.clone(), spec))
                .map_err(|e| anyhow::anyhow!("--policy `{text}`: {e}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let given = args
        .matrices
        .iter()
        .map(|m| {
            crate::sim::resolve_matrix(m)
                .map(|matrix| (m.clone(), matrix))
                .map_err(|e| anyhow::anyhow!("--matrix `{m}`: {e}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let families = if !args.families.is_empty() {
        args.families.clone()
    } else if !given.is_empty() {
        Vec::new()
    } else {
        crate::sim::MATRIX_FAMILIES
            .iter()
            .map(|f| f.to_string())
            .collect()
    };
    let plan = GridPlan {
        families,
        sizes: args.sizes.clone(),
        margins: args.margins.clone(),
        noises: args.noise.clone(),
        seed: args.matrix_seed,
        given,
    };
    let cells = plan.cells().map_err(anyhow::Error::msg)?;
    let runs = GridRuns {
        policies,
        steps: args.steps,
        runs: args.runs,
        seed: args.seed,
    };
    // Refuse a bad policy or length before the first cell runs.
    runs.simulation(&cells[0]).map_err(anyhow::Error::msg)?;
    let threads = match args.threads {
        Some(0) => anyhow::bail!("--threads must be at least 1"),
        Some(t) => t,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let started = std::time::Instant::now();
    let (earlier, earlier_seconds) = earlier_results(&args);
    let mut results: Vec<CellResult> = Vec::with_capacity(cells.len());
    for (i, cell) in cells.iter().enumerate() {
        let t = std::time::Instant::now();
        let known = earlier.iter().find(|c| c.scenario == cell.scenario());
        results.push(
            runs.run_cell(cell, known, threads)
                .map_err(anyhow::Error::msg)?,
        );
        eprintln!(
            "cell {}/{} {} in {:.1} s",
            i + 1,
            cells.len(),
            cell.scenario(),
            t.elapsed().as_secs_f64()
        );
        write(
            &args,
            &results,
            earlier_seconds + started.elapsed().as_secs_f64(),
        )?;
    }
    print!("{}", std::fs::read_to_string(args.out.join("grid.md"))?);
    Ok(())
}

/// The cells of an earlier grid.json in `--out` made with the same steps, runs and seeds: a
/// policy already run on a cell is not run again (its figures would be the same, as run r's
/// seed depends on the seed and r only), so adding a policy to a grid costs only its own runs;
/// and the seconds spent on them, which the new grid's total includes.
fn earlier_results(args: &GridArgs) -> (Vec<CellResult>, f64) {
    let Ok(text) = std::fs::read_to_string(args.out.join("grid.json")) else {
        return (Vec::new(), 0.0);
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
        return (Vec::new(), 0.0);
    };
    let same = json["steps"] == args.steps
        && json["runs"] == args.runs
        && json["matrix_seed"] == args.matrix_seed
        && json["seed"] == args.seed;
    if !same {
        return (Vec::new(), 0.0);
    }
    match serde_json::from_value(json["cells"].clone()) {
        Ok(cells) => (cells, json["seconds"].as_f64().unwrap_or(0.0)),
        Err(_) => (Vec::new(), 0.0),
    }
}

/// Writes the results so far: grid.json (every figure) and grid.md (the tables).
fn write(args: &GridArgs, results: &[CellResult], seconds: f64) -> anyhow::Result<()> {
    let json = serde_json::json!({
        "steps": args.steps,
        "runs": args.runs,
        "matrix_seed": args.matrix_seed,
        "seed": args.seed,
        "seconds": seconds,
        "cells": results,
    });
    let path = args.out.join("grid.json");
    std::fs::write(&path, serde_json::to_string_pretty(&json)?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let text = format!(
        "{} runs per policy and cell, {} steps, matrix seed {}, run seed {}; {:.0} s.\n\n{}",
        args.runs,
        args.steps,
        args.matrix_seed,
        args.seed,
        seconds,
        markdown(results)
    );
    let path = args.out.join("grid.md");
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}
