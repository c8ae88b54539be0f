//! A grid's results: each policy's regret at each horizon (10^4, 10^5, ... up to the run length)
//! on each cell, its ratio to the best policy of that cell, and its worst case over the grid.
//!
//! A ratio counts only when the difference is real: a policy whose mean regret is within two
//! standard errors of the best one's (the errors of the two means combined) is level with it,
//! ratio 1.00 in the worst case, since fewer runs could not tell the two apart.
//!
//! Each cell also carries the asymptotic regret lower bound of consistent policies, C ln T
//! (`sim/run/regret_limit.rs`): a best policy below it is one that has not yet paid for the
//! comparisons that tell the winner from every alternative, as a policy naming the winner on
//! every matrix must eventually (or sits before the asymptote, at the smallest margins).

use serde::{Deserialize, Serialize};

use crate::sim::Summary;

/// One policy's figures at one horizon of one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AtHorizon {
    pub step: u64,
    pub regret_mean: f64,
    pub regret_stderr: f64,
    pub accuracy: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyCell {
    pub policy: String,
    pub steps_per_second: f64,
    pub horizons: Vec<AtHorizon>,
}

/// One cell's results, every policy at the same horizons.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellResult {
    pub family: String,
    pub k: usize,
    pub margin: f64,
    pub noise: f64,
    /// The `--matrix` name of the cell's matrix.
    pub scenario: String,
    pub policies: Vec<PolicyCell>,
    /// C of the regret lower bound C ln T on the cell's matrix (`GridRuns::run_cell` sets it);
    /// absent from grids written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regret_rate: Option<f64>,
}

/// The horizons a grid reports: 10^4, 10^5, ... below `steps`, and `steps` itself.
pub fn horizons(steps: u64) -> Vec<u64> {
    let mut out: Vec<u64> = std::iter::successors(Some(10_000u64), |h| h.checked_mul(10))
        .take_while(|&h| h < steps)
        .collect();
    out.push(steps);
    out
}

impl CellResult {
    pub fn from_summary(
        family: &str,
        k: usize,
        margin: f64,
        noise: f64,
        scenario: String,
        summary: &Summary,
    ) -> Self {
        let wanted = horizons(summary.steps);
        let policies = summary
            .policies
            .iter()
            .map(|p| PolicyCell {
                policy: p.policy.clone(),
                steps_per_second: p.steps_per_second,
                horizons: p
                    .checkpoints
                    .iter()
                    .filter(|c| wanted.contains(&c.step))
                    .map(|c| AtHorizon {
                        step: c.step,
                        regret_mean: c.regret_mean,
                        regret_stderr: c.regret_stderr,
                        accuracy: c.accuracy,
                    })
                    .collect(),
            })
            .collect();
        CellResult {
            family: family.to_string(),
            k,
            margin,
            noise,
            scenario,
            policies,
            regret_rate: None,
        }
    }

    /// The best policy's mean regret at horizon index `h`.
    fn best_regret(&self, h: usize) -> f64 {
        self.policies
            .iter()
            .map(|p| p.horizons[h].regret_mean)
            .fold(f64::INFINITY, f64::min)
    }

    /// C ln T at horizon index `h`, when the cell has a bound.
    fn bound_at(&self, h: usize) -> Option<f64> {
        let step = self.policies.first()?.horizons.get(h)?.step;
        self.regret_rate.map(|c| c * (step.max(1) as f64).ln())
    }

    /// The best policy's mean regret at horizon index `h` over C ln T there; `None` without a
    /// bound or when it is 0 (every arm a winner).
    pub fn best_over_bound(&self, h: usize) -> Option<f64> {
        self.bound_at(h)
            .filter(|&b| b > 0.0)
            .map(|b| self.best_regret(h) / b)
    }

    /// Policy `p`'s ratio to the cell's best mean regret at horizon index `h`, and whether the
    /// difference is beyond two standard errors.
    pub fn ratio(&self, p: usize, h: usize) -> (f64, bool) {
        let at = |q: usize| &self.policies[q].horizons[h];
        let best = (0..self.policies.len())
            .min_by(|&a, &b| at(a).regret_mean.total_cmp(&at(b).regret_mean))
            .expect("a cell has policies");
        let (mine, theirs) = (at(p), at(best));
        // Regret is a sum of non-negative terms: a best of 0 makes every other policy's regret
        // infinitely worse only if it is above 0 at all, so floor the denominator at one duel's
        // smallest meaningful regret instead.
        let ratio = mine.regret_mean / theirs.regret_mean.max(1e-9);
        let se = (mine.regret_stderr.powi(2) + theirs.regret_stderr.powi(2)).sqrt();
        let real = mine.regret_mean - theirs.regret_mean > 2.0 * se;
        (
            if mine.regret_mean == theirs.regret_mean {
                1.0
            } else {
                ratio
            },
            real,
        )
    }

    fn label(&self) -> String {
        if self.family == "given" {
            return format!("{} (K={})", self.scenario, self.k);
        }
        format!(
            "{} K={} margin={} noise={}",
            self.family, self.k, self.margin, self.noise
        )
    }
}

/// A policy's worst case at one horizon: its largest ratio beyond noise, and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Worst {
    pub step: u64,
    pub ratio: f64,
    pub cell: Option<String>,
    /// The largest ratio counting differences within noise too.
    pub raw_ratio: f64,
    /// At the worst cell: the best policy's regret over C ln T.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_over_bound: Option<f64>,
    /// The largest ratio beyond noise over the cells whose best policy is at or above C ln T
    /// (cells without a bound count): how far the policy is from the best where the best pays
    /// what naming the winner on every matrix asks.
    pub ratio_where_best_pays: f64,
}

/// Worst cases of policy `p` over `cells`, one per horizon.
pub fn worst(cells: &[CellResult], p: usize) -> Vec<Worst> {
    let Some(first) = cells.first() else {
        return Vec::new();
    };
    (0..first.policies[p].horizons.len())
        .map(|h| {
            let mut w = Worst {
                step: first.policies[p].horizons[h].step,
                ratio: 1.0,
                cell: None,
                raw_ratio: 1.0,
                best_over_bound: None,
                ratio_where_best_pays: 1.0,
            };
            for c in cells {
                let (ratio, real) = c.ratio(p, h);
                let best_over_bound = c.best_over_bound(h);
                w.raw_ratio = w.raw_ratio.max(ratio);
                if real && ratio > w.ratio {
                    w.ratio = ratio;
                    w.cell = Some(c.label());
                    w.best_over_bound = best_over_bound;
                }
                if real && best_over_bound.is_none_or(|r| r >= 1.0) {
                    w.ratio_where_best_pays = w.ratio_where_best_pays.max(ratio);
                }
            }
            w
        })
        .collect()
}

/// Cells where policy `p`'s accuracy at the last horizon is below 1 while another policy's is 1.
pub fn accuracy_misses(cells: &[CellResult], p: usize) -> Vec<String> {
    cells
        .iter()
        .filter(|c| {
            let last = |q: usize| c.policies[q].horizons.last().map_or(0.0, |a| a.accuracy);
            last(p) < 1.0 && (0..c.policies.len()).any(|q| last(q) >= 1.0)
        })
        .map(|c| c.label())
        .collect()
}

fn power_of_ten(step: u64) -> String {
    let log = (step as f64).log10();
    if (log - log.round()).abs() < 1e-9 {
        format!("10^{}", log.round())
    } else {
        step.to_string()
    }
}

/// The grid as Markdown: the worst cases first, then every cell.
pub fn markdown(cells: &[CellResult]) -> String {
    let Some(first) = cells.first() else {
        return "no cells\n".into();
    };
    let names: Vec<&str> = first.policies.iter().map(|p| p.policy.as_str()).collect();
    let steps: Vec<u64> = first.policies[0].horizons.iter().map(|h| h.step).collect();
    let mut out = String::new();
    out.push_str(&format!(
        "Worst case over {} cells: each policy's largest ratio of mean regret to the best \
         policy of a cell, counting only differences beyond two standard errors (raw largest \
         ratio in brackets); then the cells where its accuracy at {} is below 1.00 while \
         another policy's is 1.00.\n\n",
        cells.len(),
        power_of_ten(*steps.last().unwrap_or(&0))
    ));
    out.push_str("| policy |");
    for s in &steps {
        out.push_str(&format!(" worst at {} |", power_of_ten(*s)));
    }
    out.push_str(" accuracy misses |\n|---|");
    out.push_str(&"---|".repeat(steps.len() + 1));
    out.push('\n');
    for (p, name) in names.iter().enumerate() {
        out.push_str(&format!("| `{name}` |"));
        for w in worst(cells, p) {
            match &w.cell {
                Some(cell) => {
                    out.push_str(&format!(" {:.2}x ({:.2}x), {cell}", w.ratio, w.raw_ratio));
                    if let Some(r) = w.best_over_bound {
                        out.push_str(&format!(", best at {r:.2}x C ln T"));
                    }
                    out.push_str(" |");
                }
                None => out.push_str(&format!(" 1.00x ({:.2}x) |", w.raw_ratio)),
            }
        }
        let misses = accuracy_misses(cells, p);
        out.push_str(&format!(" {} |\n", misses.len()));
    }
    out.push_str(
        "\nWhere the best policy pays at least the regret lower bound of consistent policies \
         (C ln T, column `C ln T` below): each policy's largest ratio beyond two standard errors \
         over those cells.\n\n| policy |",
    );
    for s in &steps {
        out.push_str(&format!(" at {} |", power_of_ten(*s)));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(steps.len()));
    out.push('\n');
    for (p, name) in names.iter().enumerate() {
        out.push_str(&format!("| `{name}` |"));
        for w in worst(cells, p) {
            out.push_str(&format!(" {:.2}x |", w.ratio_where_best_pays));
        }
        out.push('\n');
    }
    out.push_str("\nEvery cell: the best policy's mean regret at each horizon, C ln T there, and each policy's ratio to the best (`*`: beyond two standard errors).\n\n| cell | best regret | C ln T |");
    for name in &names {
        out.push_str(&format!(" `{name}` |"));
    }
    out.push_str("\n|---|---|---|");
    out.push_str(&"---|".repeat(names.len()));
    out.push('\n');
    for c in cells {
        let best: Vec<String> = (0..steps.len())
            .map(|h| format!("{:.0}", c.best_regret(h)))
            .collect();
        let bound: Vec<String> = (0..steps.len())
            .map(|h| c.bound_at(h).map_or("-".into(), |b| format!("{b:.0}")))
            .collect();
        out.push_str(&format!(
            "| {} | {} | {} |",
            c.label(),
            best.join(" / "),
            bound.join(" / ")
        ));
        for p in 0..c.policies.len() {
            let ratios: Vec<String> = (0..steps.len())
                .map(|h| {
                    let (ratio, real) = c.ratio(p, h);
                    format!("{ratio:.2}{}", if real { "*" } else { "" })
                })
                .collect();
            let acc = c.policies[p].horizons.last().map_or(0.0, |a| a.accuracy);
            out.push_str(&format!(" {} (acc {acc:.2}) |", ratios.join(" / ")));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(label: &str, figures: &[&[(f64, f64, f64)]]) -> CellResult {
        CellResult {
            family: label.into(),
            k: 4,
            margin: 0.1,
            noise: 0.0,
            scenario: label.into(),
            regret_rate: None,
            policies: figures
                .iter()
                .enumerate()
                .map(|(p, hs)| PolicyCell {
                    policy: format!("p{p}"),
                    steps_per_second: 1.0,
                    horizons: hs
                        .iter()
                        .enumerate()
                        .map(|(h, &(mean, se, acc))| AtHorizon {
                            step: 10_000 * 10u64.pow(h as u32),
                            regret_mean: mean,
                            regret_stderr: se,
                            accuracy: acc,
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    #[test]
    fn horizons_are_decades_from_ten_thousand_then_the_length() {
        assert_eq!(horizons(1_000_000), vec![10_000, 100_000, 1_000_000]);
        assert_eq!(horizons(300_000), vec![10_000, 100_000, 300_000]);
        assert_eq!(horizons(5_000), vec![5_000]);
    }

    #[test]
    fn a_difference_within_two_standard_errors_is_level() {
        // 120 +- 10 against 100 +- 10: 20 < 2 * sqrt(200) = 28.3, noise.
        let c = cell("a", &[&[(100.0, 10.0, 1.0)], &[(120.0, 10.0, 1.0)]]);
        assert_eq!(c.ratio(1, 0), (1.2, false));
        // 150 +- 10: 50 > 28.3, real.
        let c = cell("b", &[&[(100.0, 10.0, 1.0)], &[(150.0, 10.0, 1.0)]]);
        assert_eq!(c.ratio(1, 0), (1.5, true));
        assert_eq!(c.ratio(0, 0), (1.0, false));
    }

    #[test]
    fn worst_case_is_the_largest_real_ratio_and_says_where() {
        let cells = vec![
            cell("a", &[&[(100.0, 1.0, 1.0)], &[(300.0, 1.0, 1.0)]]),
            cell("b", &[&[(100.0, 1.0, 1.0)], &[(200.0, 1.0, 0.5)]]),
            cell("c", &[&[(100.0, 50.0, 1.0)], &[(400.0, 200.0, 1.0)]]),
        ];
        let w = &worst(&cells, 1)[0];
        assert_eq!((w.ratio, w.raw_ratio), (3.0, 4.0));
        assert!(w.cell.as_deref().unwrap().starts_with("a "));
        assert_eq!(worst(&cells, 0)[0].ratio, 1.0);
        assert_eq!(accuracy_misses(&cells, 1).len(), 1);
        let md = markdown(&cells);
        assert!(md.contains("| `p1` | 3.00x (4.00x), a K=4"), "{md}");
    }

    #[test]
    fn the_bound_says_where_the_best_policy_pays_less_than_consistency_asks() {
        // C = 100 / ln 10^4 puts C ln T at 100 at 10^4: cell `a`'s best (50) is below it, cell
        // `b`'s (200) above.
        let rate = 100.0 / 10_000f64.ln();
        let mut a = cell("a", &[&[(50.0, 1.0, 1.0)], &[(300.0, 1.0, 1.0)]]);
        let mut b = cell("b", &[&[(200.0, 1.0, 1.0)], &[(400.0, 1.0, 1.0)]]);
        a.regret_rate = Some(rate);
        b.regret_rate = Some(rate);
        assert!((a.best_over_bound(0).unwrap() - 0.5).abs() < 1e-9);
        let w = &worst(&[a.clone(), b.clone()], 1)[0];
        assert_eq!(w.ratio, 6.0);
        assert!((w.best_over_bound.unwrap() - 0.5).abs() < 1e-9);
        // Where the best pays at least C ln T only `b` counts.
        assert_eq!(w.ratio_where_best_pays, 2.0);
        let md = markdown(&[a, b.clone()]);
        assert!(
            md.contains("6.00x (6.00x), a K=4 margin=0.1 noise=0, best at 0.50x C ln T"),
            "{md}"
        );
        assert!(md.contains("| `p1` | 2.00x |"), "{md}");
        assert!(
            md.contains("| b K=4 margin=0.1 noise=0 | 200 | 100 |"),
            "{md}"
        );
        // A cell whose every arm is a winner (bound 0) or that has no bound counts as paying.
        b.regret_rate = Some(0.0);
        assert_eq!(b.best_over_bound(0), None);
        assert_eq!(worst(&[b], 1)[0].ratio_where_best_pays, 2.0);
    }
}
