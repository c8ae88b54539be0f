//! The simulation report: per policy, regret and accuracy curves at the checkpoints, averaged
//! over runs; written as `summary.json` and `curves.csv`.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::decision_ratios::DecisionRatios;
use super::regret_bound::RegretBound;
use crate::interleave::Method;
use crate::sim::run::{RegretKind, RunRecord};

/// One point of a policy's curves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub step: u64,
    /// Cumulative regret, mean over runs.
    pub regret_mean: f64,
    /// Standard error of that mean: sample standard deviation / sqrt(runs); 0 for one run.
    pub regret_stderr: f64,
    /// Fraction of runs whose champion is the true winner (the Condorcet winner, or any
    /// Copeland winner when there is none; with `--letor`, a feature of highest NDCG@10).
    pub accuracy: f64,
    /// Fraction of runs whose decision is made (Condorcet or Copeland, at the run's delta).
    #[serde(default)]
    pub decided: f64,
    /// Fraction of runs decided on an arm that is not a true winner (not the Condorcet winner;
    /// without one, outside the Copeland set): a decision's error, at most delta by design.
    #[serde(default)]
    pub decided_wrong: f64,
    /// With `--letor`: clicks per query on the shown list over the steps since the previous
    /// checkpoint, mean over runs and its standard error (li-2020 Figure 5, left).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clicks: Option<MeanSe>,
    /// With `--letor`: NDCG@10 of the shown lists over the same window (Figure 5, right).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown_ndcg: Option<MeanSe>,
}

/// A mean over runs with its standard error (sample sd / sqrt(runs); 0 for one run).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeanSe {
    pub mean: f64,
    pub stderr: f64,
}

impl MeanSe {
    pub fn of(values: impl Iterator<Item = f64> + Clone) -> MeanSe {
        let n = values.clone().count() as f64;
        let mean = values.clone().sum::<f64>() / n;
        let stderr = if n > 1.0 {
            let var = values.map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
            (var / n).sqrt()
        } else {
            0.0
        };
        MeanSe { mean, stderr }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicySummary {
    /// The policy spec as given on the command line.
    pub policy: String,
    pub regret_kind: RegretKind,
    /// Per thread: the policy's steps divided by the thread time they took (selection, update
    /// and environment draws; checkpoint bookkeeping excluded). A timing field.
    pub steps_per_second: f64,
    pub checkpoints: Vec<Checkpoint>,
    /// The steps at which runs decided (absent when none did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<DecidedSteps>,
    /// On matrices with a Condorcet winner: the decision steps' median, 90th percentile and
    /// maximum, and their ratios to the oracle cost and the lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_limit: Option<DecisionRatios>,
    /// On preference matrices: the regret lower bound of consistent policies at the horizon and
    /// the policy's regret over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regret_bound: Option<RegretBound>,
}

/// When the runs that decided did so.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DecidedSteps {
    /// Runs that decided within the horizon.
    pub runs: u64,
    pub median: f64,
    pub min: u64,
    pub max: u64,
}

impl DecidedSteps {
    /// Median and range of the steps of the runs that decided; `None` when none did.
    pub fn of(steps: impl Iterator<Item = u64>) -> Option<DecidedSteps> {
        let mut s: Vec<u64> = steps.collect();
        if s.is_empty() {
            return None;
        }
        s.sort_unstable();
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2] as f64
        } else {
            (s[n / 2 - 1] as f64 + s[n / 2] as f64) / 2.0
        };
        Some(DecidedSteps {
            runs: n as u64,
            median,
            min: s[0],
            max: s[n - 1],
        })
    }
}

/// Timing of the whole simulation: varies between identical runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub threads: usize,
    pub wall_seconds: f64,
}

/// Where the duels of a `--letor` simulation came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LetorSummary {
    /// `--letor` as given.
    pub file: String,
    pub click_model: String,
    /// The interleaving method with its options.
    pub interleaving: Method,
    /// Rankers compared per query (2: duels; more: one multileaved list).
    #[serde(default = "two")]
    pub rankers_per_query: usize,
    /// Length of every ranker's list and of the shown list (NDCG is cut at it too).
    pub list_len: usize,
    /// Queries duels were drawn from (those with at least one document).
    pub queries: usize,
    /// Every feature ranker's mean NDCG@`list_len`, in ascending feature-id order: the utilities
    /// behind the regret.
    pub ndcg: Vec<RankerNdcg>,
}

fn two() -> usize {
    2
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankerNdcg {
    /// `f<feature id>`.
    pub ranker: String,
    pub ndcg: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// `--matrix` as given (absent with `--letor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<String>,
    /// With `--letor`: the data, click model and interleaving method (absent with `--matrix`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub letor: Option<LetorSummary>,
    /// Arms per run.
    pub k: usize,
    /// `--subset K`: each run used a random K-arm subset (with a Condorcet winner, for matrices).
    pub subset: Option<usize>,
    /// Names of the true winners of the whole matrix (none when runs use random subsets).
    pub winners: Option<Vec<String>>,
    pub steps: u64,
    pub runs: u64,
    pub seed: u64,
    pub delay: u64,
    pub batch: usize,
    pub policies: Vec<PolicySummary>,
    pub timing: Timing,
}

impl PolicySummary {
    /// Averages the runs of one policy, checkpoint by checkpoint.
    pub fn aggregate(policy: &str, checkpoints: &[u64], runs: &[RunRecord]) -> Self {
        let n = runs.len() as f64;
        let points: Vec<Checkpoint> = checkpoints
            .iter()
            .enumerate()
            .map(|(c, &step)| {
                let regret = MeanSe::of(runs.iter().map(|r| r.regret[c]));
                let hits = runs.iter().filter(|r| r.correct[c]).count();
                let share = |flags: fn(&RunRecord) -> &Vec<bool>| {
                    runs.iter().filter(|r| flags(r)[c]).count() as f64 / n
                };
                let measured = |values: fn(&RunRecord) -> &Vec<f64>| {
                    runs.iter()
                        .all(|r| values(r).len() > c)
                        .then(|| MeanSe::of(runs.iter().map(move |r| values(r)[c])))
                };
                Checkpoint {
                    step,
                    regret_mean: regret.mean,
                    regret_stderr: regret.stderr,
                    accuracy: hits as f64 / n,
                    decided: share(|r| &r.decided),
                    decided_wrong: share(|r| &r.decided_wrong),
                    clicks: measured(|r| &r.clicks),
                    shown_ndcg: measured(|r| &r.shown_ndcg),
                }
            })
            .collect();
        let steps: u64 = runs.iter().map(|r| r.steps).sum();
        let nanos: u64 = runs.iter().map(|r| r.nanos).sum();
        let regret_bound = points
            .last()
            .and_then(|last| RegretBound::of(runs, last.step, last.regret_mean));
        PolicySummary {
            policy: policy.to_string(),
            regret_kind: runs[0].regret_kind,
            steps_per_second: steps as f64 / (nanos.max(1) as f64 * 1e-9),
            checkpoints: points,
            decided_at: DecidedSteps::of(runs.iter().filter_map(|r| r.decided_at)),
            decision_limit: DecisionRatios::of(runs),
            regret_bound,
        }
    }
}

impl Summary {
    /// What the simulation ran on, for captions: the matrix or the LETOR file.
    pub fn source_label(&self) -> &str {
        match (&self.matrix, &self.letor) {
            (Some(m), _) => m,
            (None, Some(l)) => &l.file,
            (None, None) => "simulation",
        }
    }

    /// The summary with its timing fields zeroed: what must be identical between two runs of the
    /// same command line.
    pub fn without_timing(&self) -> Summary {
        let mut s = self.clone();
        s.timing = Timing {
            threads: 0,
            wall_seconds: 0.0,
        };
        for p in &mut s.policies {
            p.steps_per_second = 0.0;
        }
        s
    }

    pub fn write_json(&self, path: &Path) -> std::io::Result<()> {
        let mut text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        text.push('\n');
        std::fs::write(path, text)
    }

    /// One line per policy and checkpoint; the policy spec is quoted (it contains commas).
    pub fn write_csv(&self, path: &Path) -> std::io::Result<()> {
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        writeln!(
            out,
            "policy,regret_kind,step,regret_mean,regret_stderr,accuracy,clicks_mean,clicks_stderr,\
             shown_ndcg_mean,shown_ndcg_stderr,decided,decided_wrong"
        )?;
        for p in &self.policies {
            let kind = p.regret_kind.name();
            let name = p.policy.replace('"', "\"\"");
            let pair = |m: Option<MeanSe>| {
                m.map_or_else(|| ",".to_string(), |m| format!("{},{}", m.mean, m.stderr))
            };
            for c in &p.checkpoints {
                writeln!(
                    out,
                    "\"{name}\",{kind},{},{},{},{},{},{},{},{}",
                    c.step,
                    c.regret_mean,
                    c.regret_stderr,
                    c.accuracy,
                    pair(c.clicks),
                    pair(c.shown_ndcg),
                    c.decided,
                    c.decided_wrong
                )?;
            }
        }
        out.flush()
    }

    /// `decisions.csv`: one line per policy with its decision steps against the limit (written
    /// only when some policy has one: a matrix with a Condorcet winner). Empty cells: beyond the
    /// horizon.
    pub fn write_decisions_csv(&self, path: &Path) -> std::io::Result<bool> {
        if self.policies.iter().all(|p| p.decision_limit.is_none()) {
            return Ok(false);
        }
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        writeln!(
            out,
            "policy,runs,steps,decided,oracle_cost,lower_bound,median_step,p90_step,max_step,\
             median_to_oracle,p90_to_oracle,max_to_oracle,\
             median_to_lower_bound,p90_to_lower_bound,max_to_lower_bound"
        )?;
        let cell = |x: Option<f64>| x.map_or_else(String::new, |x| x.to_string());
        for p in &self.policies {
            let Some(d) = &p.decision_limit else {
                continue;
            };
            let decided = p.checkpoints.last().map_or(0.0, |c| c.decided);
            let name = p.policy.replace('"', "\"\"");
            write!(
                out,
                "\"{name}\",{},{},{decided},{},{}",
                self.runs, self.steps, d.oracle_cost, d.lower_bound
            )?;
            for q in [d.steps, d.to_oracle, d.to_lower_bound] {
                write!(out, ",{},{},{}", cell(q.median), cell(q.p90), cell(q.max))?;
            }
            writeln!(out)?;
        }
        out.flush()?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decided_steps_give_median_and_range() {
        assert_eq!(DecidedSteps::of(std::iter::empty()), None);
        let d = DecidedSteps::of([40, 10, 30, 20].into_iter()).unwrap();
        assert_eq!((d.runs, d.median, d.min, d.max), (4, 25.0, 10, 40));
    }

    fn record(regret: Vec<f64>, correct: Vec<bool>) -> RunRecord {
        RunRecord {
            regret_kind: RegretKind::Condorcet,
            regret,
            decided: correct.clone(),
            decided_wrong: vec![false; correct.len()],
            decided_at: correct.iter().position(|c| *c).map(|i| 5 * i as u64 + 5),
            correct,
            clicks: Vec::new(),
            shown_ndcg: Vec::new(),
            steps: 10,
            limit: None,
            regret_rate: None,
            nanos: 1000,
        }
    }

    #[test]
    fn aggregate_computes_mean_stderr_and_accuracy() {
        let runs = [
            record(vec![1.0, 2.0], vec![false, true]),
            record(vec![3.0, 6.0], vec![false, false]),
        ];
        let s = PolicySummary::aggregate("uniform", &[1, 10], &runs);
        assert_eq!(s.checkpoints[0].regret_mean, 2.0);
        // Sample variance of (1, 3) is 2; stderr = sqrt(2 / 2) = 1.
        assert!((s.checkpoints[0].regret_stderr - 1.0).abs() < 1e-12);
        assert_eq!(s.checkpoints[1].regret_mean, 4.0);
        assert!((s.checkpoints[1].regret_stderr - 2.0).abs() < 1e-12);
        assert_eq!(s.checkpoints[0].accuracy, 0.0);
        assert_eq!(s.checkpoints[1].accuracy, 0.5);
        assert_eq!(
            (s.checkpoints[0].decided, s.checkpoints[1].decided),
            (0.0, 0.5)
        );
        assert_eq!(s.checkpoints[1].decided_wrong, 0.0);
        let at = s.decided_at.unwrap();
        assert_eq!((at.runs, at.median, at.min, at.max), (1, 10.0, 10, 10));
        // 20 steps in 2000 ns.
        assert!((s.steps_per_second - 1e7).abs() < 1.0);
    }
}
