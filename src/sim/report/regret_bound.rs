//! A policy's regret against the asymptotic lower bound of consistent policies
//! (`sim/run/regret_limit.rs`): C ln T at the horizon, and the policy's mean regret there
//! as a multiple of it.

use serde::{Deserialize, Serialize};

use super::decision_ratios::Quantiles;
use crate::sim::run::RunRecord;

/// The bound C ln T at the last checkpoint and the regret there over it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RegretBound {
    /// C of liminf R(T) / ln T >= C: the median over runs (each run's own matrix with
    /// `--subset`, the same for every run otherwise).
    pub rate: f64,
    /// C ln T at the last checkpoint.
    pub at_horizon: f64,
    /// Mean regret at the last checkpoint over `at_horizon`; `None` when the bound is 0 (every
    /// arm a winner).
    pub ratio: Option<f64>,
}

impl RegretBound {
    /// The bound of `runs` at `step` with mean regret `regret`; `None` unless every run has a
    /// rate (a preference matrix).
    pub fn of(runs: &[RunRecord], step: u64, regret: f64) -> Option<RegretBound> {
        let rates = runs
            .iter()
            .map(|r| r.regret_rate)
            .collect::<Option<Vec<_>>>()?;
        let rate = Quantiles::of(rates)?.median?;
        let at_horizon = rate * (step.max(1) as f64).ln();
        Some(RegretBound {
            rate,
            at_horizon,
            ratio: (at_horizon > 0.0).then(|| regret / at_horizon),
        })
    }
}
