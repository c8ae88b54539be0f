//! Does traffic clustered in units make the decision confident sooner? Two rankers; a share of
//! the units prefers ranker 0, each unit with a strong taste of its own (it prefers its ranker in
//! `taste` of its comparisons), so that a query prefers ranker 0 with probability
//! `share * taste + (1 - share) * (1 - taste)`. Three arms, each over at most `budget`
//! comparisons drawn from that same query-level preference:
//!
//! - `independent`: every comparison from a new unit (the evidence the decision assumes);
//! - `clustered, by query`: units with Pareto query counts (a few send hundreds), every
//!   comparison counted (`aggregation: "query"`);
//! - `clustered, by unit`: the same traffic, each unit's first decisive comparison counted once
//!   (`aggregation: "unit"`, [`crate::bandit::unit_evidence`]).
//!
//! Each arm records the comparison at which the decision was made (checked every
//! `check_every` comparisons) and whether it named ranker 1, the worse one.

use rand::{Rng, SeedableRng};

use crate::bandit::unit_evidence::UnitEvidence;
use crate::bandit::{BanditRng, DecisionSettings, TieRule, View, WinMatrix, decide};

/// The arms, in the order [`run`] returns them.
pub const ARMS: [&str; 3] = ["independent", "clustered, by query", "clustered, by unit"];

/// The population of units and the length of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnitModel {
    /// Share of units that prefer ranker 0; in (0, 1).
    pub share: f64,
    /// How often a unit prefers its own ranker; in [0.5, 1].
    pub taste: f64,
    /// Pareto shape of a unit's query count (smaller: heavier tail); > 0.
    pub shape: f64,
    /// Largest query count of one unit.
    pub max_queries: usize,
    /// Comparisons per arm and run, at most.
    pub budget: usize,
    /// The decision is checked every this many comparisons.
    pub check_every: usize,
}

impl UnitModel {
    /// P(a query prefers ranker 0).
    pub fn query_preference(&self) -> f64 {
        self.share * self.taste + (1.0 - self.share) * (1.0 - self.taste)
    }

    pub fn validate(&self) -> Result<(), String> {
        let ok = self.share > 0.0
            && self.share < 1.0
            && (0.5..=1.0).contains(&self.taste)
            && self.shape > 0.0
            && self.max_queries >= 1
            && self.budget >= 1
            && self.check_every >= 1;
        ok.then_some(()).ok_or_else(|| {
            "need 0 < share < 1, 0.5 <= taste <= 1, shape > 0 and max-queries, budget, \
             check-every of at least 1"
                .to_string()
        })
    }

    /// A unit's number of queries: Pareto with `shape` and minimum 1, at most `max_queries`.
    pub fn unit_size<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        let u: f64 = rng.random_range(0.0..1.0);
        ((1.0 - u).powf(-1.0 / self.shape) as usize).clamp(1, self.max_queries)
    }

    /// A new unit's probability of preferring ranker 0.
    fn unit_taste<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        if rng.random_bool(self.share) {
            self.taste
        } else {
            1.0 - self.taste
        }
    }
}

/// One arm of one run: the comparison at which the decision was made (`None`: not within the
/// budget) and the ranker it named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArmRun {
    pub decided_at: Option<usize>,
    pub champion: Option<usize>,
}

impl ArmRun {
    /// Decided for ranker 1, which fewer queries prefer.
    pub fn decided_wrong(&self) -> bool {
        self.champion == Some(1)
    }
}

fn decided(m: &WinMatrix, settings: &DecisionSettings) -> Option<usize> {
    let active = [true, true];
    let d = decide(&View::new(m, &active, TieRule::Ignore), settings);
    if d.decided { d.champion } else { None }
}

/// One run of the three arms ([`ARMS`]) from `seed`.
pub fn run(model: &UnitModel, settings: &DecisionSettings, seed: u64) -> [ArmRun; 3] {
    let mut rng = BanditRng::seed_from_u64(seed);
    let mut arms = [ArmRun::default(); 3];
    // Independent: a new unit per comparison.
    let mut m = WinMatrix::new(2);
    for t in 1..=model.budget {
        let p = model.unit_taste(&mut rng);
        let (w, l) = if rng.random_bool(p) { (0, 1) } else { (1, 0) };
        m.record_win(w, l);
        if t % model.check_every == 0
            && let Some(c) = decided(&m, settings)
        {
            arms[0] = ArmRun {
                decided_at: Some(t),
                champion: Some(c),
            };
            break;
        }
    }
    // Clustered: units in turn, each sending its comparisons.
    let mut by_query = WinMatrix::new(2);
    let mut by_unit = UnitEvidence::new(2);
    let (mut t, mut unit) = (0usize, 0u32);
    while t < model.budget && (arms[1].decided_at.is_none() || arms[2].decided_at.is_none()) {
        let p = model.unit_taste(&mut rng);
        for _ in 0..model.unit_size(&mut rng) {
            t += 1;
            let (w, l) = if rng.random_bool(p) { (0, 1) } else { (1, 0) };
            by_query.record_win(w, l);
            by_unit.record(unit, w, l);
            if t % model.check_every == 0 {
                for (m, arm) in [(&by_query, 1), (&by_unit.wins, 2)] {
                    if arms[arm].decided_at.is_none()
                        && let Some(c) = decided(m, settings)
                    {
                        arms[arm] = ArmRun {
                            decided_at: Some(t),
                            champion: Some(c),
                        };
                    }
                }
            }
            if t >= model.budget {
                break;
            }
        }
        unit += 1;
    }
    arms
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> UnitModel {
        UnitModel {
            share: 0.625,
            taste: 0.9,
            shape: 1.1,
            max_queries: 500,
            budget: 20_000,
            check_every: 25,
        }
    }

    #[test]
    fn unit_sizes_are_heavy_tailed() {
        // Pareto(1.1) with minimum 1: P(size >= 100) = 100^-1.1 = 0.0063, so over 20,000 units
        // about 126 are that large (a Poisson count; 50 is more than 6 standard deviations
        // below), while the median unit sends 1 query (P(size < 2) = 1 - 2^-1.1 = 0.53).
        let m = model();
        let mut rng = BanditRng::seed_from_u64(7);
        let sizes: Vec<usize> = (0..20_000).map(|_| m.unit_size(&mut rng)).collect();
        let big = sizes.iter().filter(|&&s| s >= 100).count();
        let ones = sizes.iter().filter(|&&s| s == 1).count();
        assert!(big > 50, "{big}");
        assert!(ones > 9_000, "{ones}");
        assert!(sizes.iter().all(|&s| (1..=500).contains(&s)));
    }

    #[test]
    fn counting_units_needs_more_comparisons_than_independent_traffic() {
        // A unit's first decisive comparison is one vote at P = 0.6, as an independent
        // comparison is, but each vote costs a whole unit's queries: about 5 on average
        // (Pareto(1.1) from 1, cut at 500: 11 * (1 - 500^-0.1) = 5.1). So the per-unit arm needs
        // about five times the comparisons; the totals over 20 fixed seeds (an undecided run
        // counted at the budget) are far apart, not a near thing.
        let m = model();
        let settings = DecisionSettings::default();
        let (mut independent, mut by_unit) = (0usize, 0usize);
        for seed in 0..20 {
            let r = run(&m, &settings, seed);
            independent += r[0].decided_at.unwrap_or(m.budget);
            by_unit += r[2].decided_at.unwrap_or(m.budget);
        }
        assert!(by_unit > independent, "{by_unit} <= {independent}");
    }
}
