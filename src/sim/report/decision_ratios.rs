//! How far a policy's decisions are from the limit: the median, 90th percentile and maximum of
//! the steps at which its runs decided, and of the same steps divided by each run's oracle cost
//! and lower bound ([`crate::sim::run::DecisionLimit`]). A run that did not decide within the
//! horizon counts as deciding later than every run that did, so a percentile that falls on such
//! runs is unknown (`None`: "beyond the horizon"), never the horizon itself.

use serde::{Deserialize, Serialize};

use crate::sim::run::RunRecord;

/// Median, 90th percentile and maximum over runs; `None` where the runs at that rank did not
/// decide within the horizon.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    pub median: Option<f64>,
    pub p90: Option<f64>,
    pub max: Option<f64>,
}

impl Quantiles {
    /// From values where `f64::INFINITY` stands for "not within the horizon". The median is the
    /// middle value (the mean of the two middle ones for an even count), the 90th percentile the
    /// value of rank ceil(0.9 n) (nearest rank).
    pub fn of(mut values: Vec<f64>) -> Option<Quantiles> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let finite = |v: f64| v.is_finite().then_some(v);
        let median = if n % 2 == 1 {
            values[n / 2]
        } else {
            (values[n / 2 - 1] + values[n / 2]) / 2.0
        };
        let rank = ((0.9 * n as f64).ceil() as usize).clamp(1, n);
        Some(Quantiles {
            median: finite(median),
            p90: finite(values[rank - 1]),
            max: finite(values[n - 1]),
        })
    }
}

/// A policy's decision steps against the limit of the matrices it ran on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DecisionRatios {
    /// The oracle cost and lower bound (the median over runs: each run's own matrix with
    /// `--subset`, the same for every run otherwise).
    pub oracle_cost: f64,
    pub lower_bound: f64,
    /// The decision steps.
    pub steps: Quantiles,
    /// Each run's decision step divided by its oracle cost, and by its lower bound.
    pub to_oracle: Quantiles,
    pub to_lower_bound: Quantiles,
}

impl DecisionRatios {
    /// The ratios of `runs`; `None` unless every run has a limit (a matrix with a Condorcet
    /// winner).
    pub fn of(runs: &[RunRecord]) -> Option<DecisionRatios> {
        let limits = runs.iter().map(|r| r.limit).collect::<Option<Vec<_>>>()?;
        let step = |r: &RunRecord| r.decided_at.map_or(f64::INFINITY, |s| s as f64);
        let ratios = |of: fn(&crate::sim::run::DecisionLimit) -> f64| {
            runs.iter()
                .zip(&limits)
                .map(|(r, l)| step(r) / of(l))
                .collect()
        };
        let median = |v: Vec<f64>| Quantiles::of(v).and_then(|q| q.median);
        Some(DecisionRatios {
            oracle_cost: median(limits.iter().map(|l| l.oracle_cost).collect())?,
            lower_bound: median(limits.iter().map(|l| l.lower_bound).collect())?,
            steps: Quantiles::of(runs.iter().map(step).collect())?,
            to_oracle: Quantiles::of(ratios(|l| l.oracle_cost))?,
            to_lower_bound: Quantiles::of(ratios(|l| l.lower_bound))?,
        })
    }
}

/// `x` as a ratio with two decimals, or `>horizon` when unknown.
pub fn ratio_text(x: Option<f64>) -> String {
    x.map_or_else(|| ">horizon".to_string(), |x| format!("{x:.2}x"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_count_undecided_runs_as_later_than_all() {
        assert_eq!(Quantiles::of(Vec::new()), None);
        let q = Quantiles::of((1..=10).map(f64::from).collect()).unwrap();
        assert_eq!((q.median, q.p90, q.max), (Some(5.5), Some(9.0), Some(10.0)));
        // Two of ten runs undecided: the 90th percentile is beyond the horizon.
        let mut v: Vec<f64> = (1..=8).map(f64::from).collect();
        v.extend([f64::INFINITY; 2]);
        let q = Quantiles::of(v).unwrap();
        assert_eq!((q.median, q.p90, q.max), (Some(5.5), None, None));
        // One of eleven: the median and 90th percentile are known.
        let mut v: Vec<f64> = (1..=10).map(f64::from).collect();
        v.push(f64::INFINITY);
        let q = Quantiles::of(v).unwrap();
        assert_eq!((q.median, q.p90, q.max), (Some(6.0), Some(10.0), None));
    }
}
