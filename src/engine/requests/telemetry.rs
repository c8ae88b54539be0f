//! What the per-experiment Prometheus series report: counters and champion confidence of the
//! running experiments, at most a configured number of them so the cardinality stays bounded.

use crate::store;

use crate::engine::model::{agree, verdicts};
use crate::engine::{Engine, EngineError};

/// Default cap on experiments with their own series.
pub const DEFAULT_MAX_EXPERIMENTS: usize = 1000;

/// One running experiment's figures.
#[derive(Debug, Clone)]
pub struct ExperimentCounters {
    pub id: i64,
    pub outcomes_applied: i64,
    pub ties_recorded: i64,
    pub duels_issued: i64,
    pub champion_confident: bool,
    /// Per metric, for an experiment with more than one, and whether the metrics agree on the
    /// champion.
    pub metrics: Vec<MetricCounters>,
    pub metrics_agree: bool,
}

/// One metric's figures.
#[derive(Debug, Clone)]
pub struct MetricCounters {
    pub name: String,
    /// Decided (non-tie) outcomes.
    pub outcomes: u64,
    pub ties: u64,
    pub champion_confident: bool,
}

impl Engine {
    /// The running experiments with the lowest ids, at most the configured number, and how many
    /// run in all.
    pub async fn running_counters(&self) -> Result<(Vec<ExperimentCounters>, i64), EngineError> {
        let limit = self.options.metrics_max_experiments as i64;
        let (rows, total) = store::telemetry::running(&self.pool, limit).await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let snap = match self.snapshot(row.id).await {
                Ok(s) => s,
                // Deleted between the two reads.
                Err(EngineError::UnknownExperiment(_)) => continue,
                Err(e) => return Err(e),
            };
            let (metrics, metrics_agree) = if snap.metrics.list.len() > 1 {
                let verdicts = verdicts(&snap);
                let figures = verdicts
                    .iter()
                    .map(|v| {
                        let w = snap.metric_wins.get(&v.name).unwrap_or(&snap.state.wins);
                        MetricCounters {
                            name: v.name.clone(),
                            outcomes: w.total_wins(),
                            ties: w.total_ties(),
                            champion_confident: v.report.confident,
                        }
                    })
                    .collect();
                (figures, agree(&verdicts))
            } else {
                (Vec::new(), true)
            };
            out.push(ExperimentCounters {
                id: row.id,
                // The snapshot's, as the API reports them: on the owner it may be ahead of the
                // stored row by the outcomes held until the next checkpoint.
                outcomes_applied: snap.outcomes_applied,
                ties_recorded: snap.ties_applied,
                duels_issued: row.duels_issued + self.cache.unflushed_duels(row.id) as i64,
                // Computed once per version and shared with the API.
                champion_confident: snap.champion().confident,
                metrics,
                metrics_agree,
            });
        }
        Ok((out, total))
    }
}
