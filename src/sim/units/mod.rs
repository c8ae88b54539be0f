//! Units and segments in simulation, behind `joust simulate-units` and `joust simulate-segments`:
//!
//! - `clustering`: traffic from units with heavy-tailed query counts and tastes of their own,
//!   and how soon (and how wrongly) the decision is made when its evidence is counted per query
//!   or per unit, against the same number of comparisons from independent units;
//! - `segments`: traffic as a mix of segments whose preference matrices have different winners,
//!   the policy learning from all of it, and whether each segment's own counts name its winner.

pub mod clustering;
pub mod segments;

/// Mean and standard error of the mean of `xs` (0 and 0 when empty; s.e. 0 for one value).
pub fn mean_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, (var / n).sqrt())
}
