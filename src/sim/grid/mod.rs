//! A benchmark of families, not of matrices (`joust grid`): every policy on every cell of a grid
//! of generated matrices (family x size x margin x noise), and each policy's worst ratio to the
//! best policy of a cell, per horizon.

mod plan;
mod table;

pub use plan::{GridCell, GridPlan};
pub use table::{CellResult, markdown};

use crate::bandit::PolicySpec;
use crate::sim::matrix::MatrixPlan;
use crate::sim::run::{DuelSource, FeedbackTiming, Regret, Simulation, regret_rate};

/// How every cell is simulated.
#[derive(Debug, Clone)]
pub struct GridRuns {
    pub policies: Vec<(String, PolicySpec)>,
    pub steps: u64,
    pub runs: u64,
    /// Seed of the runs (arm shuffles and duel draws), the same in every cell.
    pub seed: u64,
}

impl GridRuns {
    /// The simulation of one cell: the whole matrix, shuffled per run; checkpoints at every
    /// power of ten, which are the horizons the grid reports.
    pub fn simulation(&self, cell: &GridCell) -> Result<Simulation, String> {
        let sim = Simulation {
            source: DuelSource::Matrix {
                name: cell.scenario(),
                plan: MatrixPlan::new(cell.matrix.clone(), None)?,
            },
            policies: self.policies.clone(),
            steps: self.steps,
            runs: self.runs,
            seed: self.seed,
            feedback: FeedbackTiming { delay: 0, batch: 1 },
            checkpoints_per_decade: 1,
            rankers_per_query: 2,
        };
        sim.validate().map_err(|e| e.to_string())?;
        Ok(sim)
    }

    /// Runs one cell, taking each policy's figures from `known` (the same cell of an earlier
    /// grid with the same steps, runs and seed) when it has them: run r's seed depends only on
    /// the seed and r, so they are the figures a new run would give.
    pub fn run_cell(
        &self,
        cell: &GridCell,
        known: Option<&CellResult>,
        threads: usize,
    ) -> Result<CellResult, String> {
        let reused =
            |label: &str| known.and_then(|k| k.policies.iter().find(|p| p.policy == label));
        let missing: Vec<(String, PolicySpec)> = self
            .policies
            .iter()
            .filter(|(label, _)| reused(label).is_none())
            .cloned()
            .collect();
        let fresh = if missing.is_empty() {
            None
        } else {
            let mut sim = self.simulation(cell)?;
            sim.policies = missing;
            let summary = sim.run(threads, &|| {}).map_err(|e| e.to_string())?;
            Some(CellResult::from_summary(
                &cell.family,
                cell.cell.k,
                cell.cell.margin,
                cell.cell.noise,
                cell.scenario(),
                &summary,
            ))
        };
        let policies = self
            .policies
            .iter()
            .map(|(label, _)| {
                fresh
                    .as_ref()
                    .and_then(|f| f.policies.iter().find(|p| &p.policy == label))
                    .or_else(|| reused(label))
                    .cloned()
                    .expect("every policy is fresh or reused")
            })
            .collect();
        Ok(CellResult {
            family: cell.family.clone(),
            k: cell.cell.k,
            margin: cell.cell.margin,
            noise: cell.cell.noise,
            scenario: cell.scenario(),
            policies,
            // Every run shuffles the same matrix, and the bound does not depend on the order.
            regret_rate: Some(regret_rate(&cell.matrix, &Regret::of(&cell.matrix))),
        })
    }
}
