//! Per-arm counts of the decision's confident statements, kept up to date outcome by outcome so
//! that the confirmation layer and the simulator can ask "decided yet?" and "whom should the
//! candidate meet?" without the O(K^2) pass of [`super::decide`].
//!
//! Each pair's bounds depend only on that pair's counts (delta is split over the pairs of the
//! active arms, a number that changes only when arms are added or retired), so one outcome
//! changes the statements of one pair: `record` subtracts the pair's contribution before the
//! outcome and adds it back after. Arms added or retired, or new settings, rebuild everything.
//! The tracker is derived from the win matrix alone, never persisted, and a state rebuilt from
//! JSON rebuilds it to the same values (all counts are exact in f64: sums of halves).

use super::confidence::Boundary;
use super::settings::DecisionSettings;
use crate::bandit::{Arm, View};

/// The confident statements of the decision, per arm.
#[derive(Debug, Clone)]
pub struct Tracker {
    /// What it was built for: arms in all, active arms, and the settings' delta and epsilon.
    k: usize,
    active: usize,
    delta: f64,
    epsilon: f64,
    boundary: Boundary,
    /// Rivals the arm is confidently not worse than by more than epsilon.
    holds: Vec<u32>,
    /// Rivals that confidently beat the arm by more than epsilon.
    beaten: Vec<u32>,
    /// Arms whose `holds` covers every other active arm: decided Condorcet winners.
    full: usize,
    /// Score and comparisons of the arm against all active arms (a tie-break for the candidate).
    score: Vec<f64>,
    count: Vec<f64>,
}

/// One pair's share of the counts.
struct Share {
    holds: (bool, bool),
    beaten: (bool, bool),
    score: (f64, f64),
    count: f64,
}

impl Tracker {
    /// Counts every pair of active arms of `view` under `settings`.
    pub fn build(view: &View, settings: &DecisionSettings) -> Tracker {
        let k = view.k();
        let active: Vec<Arm> = view.active_arms().collect();
        let mut t = Tracker {
            k,
            active: active.len(),
            delta: settings.delta,
            epsilon: settings.epsilon,
            boundary: Boundary::for_pairs(settings.delta, active.len()),
            holds: vec![0; k],
            beaten: vec![0; k],
            full: 0,
            score: vec![0.0; k],
            count: vec![0.0; k],
        };
        for (x, &i) in active.iter().enumerate() {
            for &j in &active[x + 1..] {
                t.apply(view, i, j, 1);
            }
        }
        t.full = active
            .iter()
            .filter(|&&a| t.holds[a] as usize + 1 == t.active)
            .count();
        t
    }

    /// Whether this tracker counts `view` under `settings` (it does unless arms or settings
    /// changed since it was built).
    pub fn fits(&self, view: &View, settings: &DecisionSettings) -> bool {
        self.k == view.k() && self.delta == settings.delta && self.epsilon == settings.epsilon
    }

    fn share(&self, view: &View, i: Arm, j: Arm) -> Share {
        let n = view.count(i, j);
        let s = view.score(i, j);
        let lower_i = self.boundary.lower(s, n);
        let lower_j = self.boundary.lower(n - s, n);
        let eps = self.epsilon;
        Share {
            holds: (lower_i > 0.5 - eps, lower_j > 0.5 - eps),
            beaten: (lower_j > 0.5 + eps, lower_i > 0.5 + eps),
            score: (s, n - s),
            count: n,
        }
    }

    /// Adds (`sign` 1) or removes (`sign` -1) the pair's share.
    fn apply(&mut self, view: &View, i: Arm, j: Arm, sign: i32) {
        let s = self.share(view, i, j);
        let f = sign as f64;
        let add = |v: &mut u32, on: bool| {
            if on {
                *v = (*v as i64 + sign as i64) as u32;
            }
        };
        add(&mut self.holds[i], s.holds.0);
        add(&mut self.holds[j], s.holds.1);
        add(&mut self.beaten[i], s.beaten.0);
        add(&mut self.beaten[j], s.beaten.1);
        self.score[i] += f * s.score.0;
        self.score[j] += f * s.score.1;
        self.count[i] += f * s.count;
        self.count[j] += f * s.count;
    }

    fn is_full(&self, arm: Arm) -> bool {
        self.holds[arm] as usize + 1 == self.active
    }

    /// Call before the counts of the pair (`i`, `j`) of distinct active arms change.
    pub fn before(&mut self, view: &View, i: Arm, j: Arm) {
        self.full -= self.is_full(i) as usize + self.is_full(j) as usize;
        self.apply(view, i, j, -1);
    }

    /// Call after the counts of the pair (`i`, `j`) changed.
    pub fn after(&mut self, view: &View, i: Arm, j: Arm) {
        self.apply(view, i, j, 1);
        self.full += self.is_full(i) as usize + self.is_full(j) as usize;
    }

    /// Whether some arm is a decided Condorcet winner (O(1)).
    pub fn condorcet_decided(&self) -> bool {
        self.active >= 2 && self.full > 0
    }

    /// The arm the evidence points to: not confidently beaten, confidently not worse than the
    /// most rivals (at least one), then the highest share of its comparisons won.
    pub fn candidate(&self, view: &View) -> Option<Arm> {
        let rate = |a: Arm| {
            if self.count[a] > 0.0 {
                self.score[a] / self.count[a]
            } else {
                0.0
            }
        };
        view.active_arms()
            .filter(|&a| self.beaten[a] == 0 && self.holds[a] > 0)
            .max_by(|&a, &b| {
                self.holds[a]
                    .cmp(&self.holds[b])
                    .then(rate(a).total_cmp(&rate(b)))
                    .then(b.cmp(&a))
            })
    }

    /// The rival the candidate most needs evidence against (LUCB's choice): the active rival
    /// with the lowest lower bound among those it is not yet separated from; never-compared
    /// rivals first.
    pub fn weakest_rival(&self, view: &View, candidate: Arm) -> Option<Arm> {
        let eps = self.epsilon;
        let mut best: Option<(f64, Arm)> = None;
        for j in view.active_arms().filter(|&j| j != candidate) {
            let lower = self
                .boundary
                .lower(view.score(candidate, j), view.count(candidate, j));
            if lower > 0.5 - eps {
                continue;
            }
            if best.is_none_or(|(b, _)| lower < b) {
                best = Some((lower, j));
            }
        }
        best.map(|(_, j)| j)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::decision::decide;
    use crate::bandit::testing::view_of;
    use crate::bandit::{BanditRng, WinMatrix};
    use rand::{Rng, SeedableRng};

    #[test]
    fn updates_one_pair_at_a_time_match_a_rebuild() {
        let mut rng = BanditRng::seed_from_u64(3);
        let k = 5;
        let mut w = WinMatrix::new(k);
        let active = [true, true, false, true, true];
        let settings = DecisionSettings::default();
        let mut t = Tracker::build(&view_of(&w, &active), &settings);
        for step in 0..20_000 {
            let (i, j) = (rng.random_range(0..k), rng.random_range(0..k));
            let both = i != j && active[i] && active[j];
            if both {
                t.before(&view_of(&w, &active), i, j);
            }
            // Arm 0 beats everyone 80% of the time, the others are even.
            let p = if i == 0 {
                0.8
            } else if j == 0 {
                0.2
            } else {
                0.5
            };
            if rng.random::<f64>() < p {
                w.record_win(i, j);
            } else {
                w.record_win(j, i);
            }
            if both {
                t.after(&view_of(&w, &active), i, j);
            }
            if step % 1000 == 0 {
                let fresh = Tracker::build(&view_of(&w, &active), &settings);
                assert_eq!(
                    (t.holds.clone(), t.beaten.clone()),
                    (fresh.holds, fresh.beaten)
                );
                assert_eq!(t.full, fresh.full);
                assert_eq!(t.score, fresh.score);
                let d = decide(&view_of(&w, &active), &settings);
                assert_eq!(t.condorcet_decided(), d.champion.is_some());
            }
        }
        assert!(t.condorcet_decided());
        assert_eq!(t.candidate(&view_of(&w, &active)), Some(0));
    }

    #[test]
    fn the_weakest_rival_is_the_least_separated_and_unseen_rivals_come_first() {
        let mut w = WinMatrix::new(4);
        w.add_wins(0, 1, 900);
        w.add_wins(1, 0, 100);
        w.add_wins(0, 2, 60);
        w.add_wins(2, 0, 40);
        let active = [true; 4];
        let view = view_of(&w, &active);
        let t = Tracker::build(&view, &DecisionSettings::default());
        assert_eq!(t.candidate(&view), Some(0));
        assert_eq!(t.weakest_rival(&view, 0), Some(3));
        w.add_wins(0, 3, 1000);
        let view = view_of(&w, &active);
        let t = Tracker::build(&view, &DecisionSettings::default());
        assert_eq!(t.weakest_rival(&view, 0), Some(2));
    }
}
