//! Per-arm counts of the Condorcet decision's confident statements, kept up to date outcome by
//! outcome so that the confirmation layer and the simulator can ask "decided yet?" and "whom
//! should the champion meet?" without the O(K^2) pass of [`super::decide`].
//!
//! Each pair's bounds depend only on that pair's counts (delta is split over the active arms, a
//! number that changes only when arms are added or retired), so one outcome changes the
//! statements of one pair: `record` subtracts the pair's contribution before the outcome and adds
//! it back after. Arms added or retired, or new settings, rebuild everything. The tracker is
//! derived from the win matrix alone and never persisted; a state rebuilt from JSON rebuilds it
//! to the same values.

use super::beaters::Beaters;
use super::confidence::Boundary;
use super::row_minima::RowMinima;
use super::settings::DecisionSettings;
use crate::bandit::{Arm, View};

/// Most arms for which every pair's lower bound and evidence are kept (13.4 MB at this size,
/// with the transposed copy of [`Beaters`] and the three tables' block minimums).
pub const KEPT_BOUNDS: usize = 1024;

/// The confident statements of the Condorcet decision, per arm and per pair.
#[derive(Debug, Clone)]
pub struct Tracker {
    /// What it was built for: arms in all, active arms, and the settings' delta and epsilon.
    k: usize,
    active: usize,
    delta: f64,
    epsilon: f64,
    /// A rival whose lower bound is at or below this is one the arm does not yet hold against
    /// (1/2 - epsilon, as the bounds are kept: single precision).
    rival_at: f32,
    boundary: Boundary,
    /// Rivals the arm is confidently not worse than by more than epsilon.
    holds: Vec<u32>,
    /// Rivals that confidently beat the arm by more than epsilon.
    beaten: Vec<u32>,
    /// Arms whose `holds` covers every other active arm: decided Condorcet winners.
    full: usize,
    /// Comparisons of the arm with active rivals, in all (the counts of its row).
    compared: Vec<f64>,
    /// The active arm played most (comparisons plus self-duels, which are the tie counts'
    /// diagonal; the lowest index among equals), a function of the counts alone so that a rebuilt
    /// tracker agrees with a kept one.
    most_played: Option<Arm>,
    /// Entry `i * k + j`: the lower bound of P(i beats j) (-inf with no comparison), kept up to
    /// [`KEPT_BOUNDS`] arms (4 k^2 bytes); above, bounds are computed when asked. The counts'
    /// statements are read from these single-precision bounds, so they may differ from
    /// [`super::decide`]'s (double precision) on a bound within about 1e-7 of its threshold.
    lower: Option<Vec<f32>>,
    /// With `lower`, entry `i * k + j`: the evidence that `i` is not worse than `j`, while `i`
    /// does not yet hold against `j` ([`evidence`]); +inf once it holds.
    evidence: Option<Vec<f32>>,
    /// With `lower`: each row's lowest bound among rivals not yet held against, by blocks, which
    /// [`Tracker::widest_rival`] reads instead of the row.
    minima: Option<RowMinima>,
    /// With `evidence`: each row's least evidence by blocks, which [`Tracker::weakest_rival`]
    /// reads instead of the row.
    evidence_minima: Option<RowMinima>,
    /// With `lower`: each arm's strongest beater, by blocks, which [`Tracker::strongest_beater`]
    /// reads instead of the arm's column.
    beaters: Option<Beaters>,
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
            rival_at: (0.5 - settings.epsilon) as f32,
            boundary: Boundary::condorcet(settings.delta, active.len()),
            holds: vec![0; k],
            beaten: vec![0; k],
            full: 0,
            compared: vec![0.0; k],
            most_played: None,
            lower: (k <= KEPT_BOUNDS).then(|| vec![f32::NEG_INFINITY; k * k]),
            evidence: (k <= KEPT_BOUNDS).then(|| vec![f32::NEG_INFINITY; k * k]),
            minima: None,
            evidence_minima: None,
            beaters: None,
        };
        for (x, &i) in active.iter().enumerate() {
            for &j in &active[x + 1..] {
                t.apply(view, i, j, true);
                let n = view.count(i, j);
                t.compared[i] += n;
                t.compared[j] += n;
            }
        }
        t.full = active.iter().filter(|&&a| t.is_full(a)).count();
        t.most_played = t.rescan_most_played(view, &active);
        t.minima = t
            .lower
            .as_ref()
            .map(|lower| RowMinima::build(k, lower, view.active, t.rival_at));
        t.evidence_minima = t
            .evidence
            .as_ref()
            .map(|evidence| RowMinima::build(k, evidence, view.active, f32::INFINITY));
        t.beaters = t
            .lower
            .as_ref()
            .map(|lower| Beaters::build(k, lower, view.active, t.beat_at()));
        t
    }

    /// Whether this tracker counts `view` under `settings` (it does unless arms or settings
    /// changed since it was built).
    pub fn fits(&self, view: &View, settings: &DecisionSettings) -> bool {
        self.k == view.k() && self.delta == settings.delta && self.epsilon == settings.epsilon
    }

    /// The lower bound of P(i beats j).
    #[inline]
    fn lower_bound(&self, view: &View, i: Arm, j: Arm) -> f32 {
        match &self.lower {
            Some(lower) => lower[i * self.k + j],
            None => self.boundary.lower(view.score(i, j), view.count(i, j)) as f32,
        }
    }

    /// The statements of the pair (`i`, `j`) as (i holds, j holds, j beats i, i beats j), from
    /// the lower bounds of P(i beats j) and P(j beats i).
    fn statements(&self, li: f32, lj: f32) -> [bool; 4] {
        let (hold, beat) = (self.rival_at, self.beat_at());
        [li > hold, lj > hold, lj > beat, li > beat]
    }

    /// The evidence of an arm against a rival ([`evidence`]) from its `score` over `n`
    /// comparisons and its lower bound `lower` of beating the rival: +inf once it holds.
    fn evidence_of(&self, score: f64, n: f64, lower: f32) -> f32 {
        if lower > self.rival_at {
            return f32::INFINITY;
        }
        evidence(score, n, 0.5 - self.epsilon)
    }

    /// A rival whose lower bound of beating an arm is above this beats it by more than epsilon
    /// (1/2 + epsilon in single precision, as the bounds are kept).
    fn beat_at(&self) -> f32 {
        (0.5 + self.epsilon) as f32
    }

    /// The lower bounds of P(i beats j) and P(j beats i) from the pair's scores `si` and `sj`
    /// (their sum is its comparisons; one square root and one logarithm), `-inf` with no
    /// comparison.
    fn fresh_bounds(&self, (si, sj): (f64, f64)) -> (f32, f32) {
        let n = si + sj;
        if n <= 0.0 {
            return (f32::NEG_INFINITY, f32::NEG_INFINITY);
        }
        let margin = self.boundary.margin(n);
        (((si - margin) / n) as f32, ((sj - margin) / n) as f32)
    }

    /// Adds (`add`) or removes the statements of the pair (`i`, `j`). The statements are read
    /// from the kept bounds where they are kept (so removing costs no square root or logarithm:
    /// it reads what adding wrote), and recomputed from the counts otherwise.
    fn apply(&mut self, view: &View, i: Arm, j: Arm, add: bool) {
        let k = self.k;
        // The pair's scores, read once for its bounds and its evidence where they are computed.
        let (scores, (li, lj)) = match (&self.lower, add) {
            (Some(lower), false) => (None, (lower[i * k + j], lower[j * k + i])),
            _ => {
                let scores = (view.score(i, j), view.score(j, i));
                (Some(scores), self.fresh_bounds(scores))
            }
        };
        let [hold_i, hold_j, beats_i, beats_j] = self.statements(li, lj);
        let step = |v: &mut u32, on: bool| {
            if on {
                *v = if add { *v + 1 } else { *v - 1 };
            }
        };
        step(&mut self.holds[i], hold_i);
        step(&mut self.holds[j], hold_j);
        step(&mut self.beaten[i], beats_i);
        step(&mut self.beaten[j], beats_j);
        let fresh = scores
            .filter(|_| add && self.evidence.is_some())
            .map(|(si, sj)| {
                let n = si + sj;
                (self.evidence_of(si, n, li), self.evidence_of(sj, n, lj))
            });
        if let (Some((ei, ej)), Some(evidence)) = (fresh, self.evidence.as_mut()) {
            let old = (evidence[i * k + j], evidence[j * k + i]);
            evidence[i * k + j] = ei;
            evidence[j * k + i] = ej;
            // Built after the pairs, when the tracker itself is built.
            if let Some(minima) = self.evidence_minima.as_mut() {
                let (row_i, row_j) = (&evidence[i * k..(i + 1) * k], &evidence[j * k..(j + 1) * k]);
                minima.changed((i, j), old.0, row_i, view.active, f32::INFINITY);
                minima.changed((j, i), old.1, row_j, view.active, f32::INFINITY);
            }
        }
        if add && let Some(lower) = self.lower.as_mut() {
            let old = (lower[i * k + j], lower[j * k + i]);
            lower[i * k + j] = li;
            lower[j * k + i] = lj;
            // Built after the pairs, when the tracker itself is built.
            if let Some(minima) = self.minima.as_mut() {
                let (row_i, row_j) = (&lower[i * k..(i + 1) * k], &lower[j * k..(j + 1) * k]);
                minima.changed((i, j), old.0, row_i, view.active, self.rival_at);
                minima.changed((j, i), old.1, row_j, view.active, self.rival_at);
            }
            if let Some(beaters) = self.beaters.as_mut() {
                beaters.changed((i, j), li, view.active);
                beaters.changed((j, i), lj, view.active);
            }
        }
    }

    /// The first active arm played most. O(K).
    fn rescan_most_played(&self, view: &View, active: &[Arm]) -> Option<Arm> {
        let mut best: Option<Arm> = None;
        for &a in active {
            if best.is_none_or(|b| self.played(view, a) > self.played(view, b)) {
                best = Some(a);
            }
        }
        best
    }

    /// Whether `a` comes before the kept most played arm: played more, or as much and a lower
    /// index.
    fn outranks_most_played(&self, view: &View, a: Arm) -> bool {
        self.most_played.is_none_or(|m| {
            let (pa, pm) = (self.played(view, a), self.played(view, m));
            pa > pm || (pa == pm && a < m)
        })
    }

    /// Keeps the most played arm after `arms`' plays grew (and no other arm's).
    fn played_more(&mut self, view: &View, arms: [Arm; 2]) {
        for a in arms {
            if self.outranks_most_played(view, a) {
                self.most_played = Some(a);
            }
        }
    }

    /// Call after the active arm `arm` duelled itself (its tie count grew).
    pub fn self_duel(&mut self, view: &View, arm: Arm) {
        self.played_more(view, [arm, arm]);
    }

    fn is_full(&self, arm: Arm) -> bool {
        self.holds[arm] as usize + 1 == self.active
    }

    /// Call before the counts of the pair (`i`, `j`) of distinct active arms change.
    pub fn before(&mut self, view: &View, i: Arm, j: Arm) {
        self.full -= self.is_full(i) as usize + self.is_full(j) as usize;
        self.apply(view, i, j, false);
        let n = view.count(i, j);
        self.compared[i] -= n;
        self.compared[j] -= n;
    }

    /// Call after the counts of the pair (`i`, `j`) changed (`before` was called for them).
    pub fn after(&mut self, view: &View, i: Arm, j: Arm) {
        self.apply(view, i, j, true);
        self.full += self.is_full(i) as usize + self.is_full(j) as usize;
        let n = view.count(i, j);
        self.compared[i] += n;
        self.compared[j] += n;
        // Counts only grow (no outcome is ever withdrawn), so the kept arm still leads every arm
        // whose counts did not move, and only `i` or `j` can pass it. That holds for a query's
        // pairs too (`before` for each, then `after` for each): an arm is compared at a value no
        // higher than its final one, and again at its final one in its last `after`.
        self.played_more(view, [i, j]);
    }

    /// Active arms other than one.
    pub fn rivals(&self) -> usize {
        self.active.saturating_sub(1)
    }

    /// The active arm played most so far (comparisons with active rivals plus self-duels), the
    /// first among equals (O(1)).
    pub fn most_played(&self) -> Option<Arm> {
        self.most_played
    }

    /// Comparisons of `arm` with active rivals plus its self-duels so far (O(1)).
    pub fn played(&self, view: &View, arm: Arm) -> f64 {
        self.compared[arm] + view.wins.ties(arm, arm) as f64
    }

    /// The active rival that beats `arm` by the widest confident margin (highest lower bound of
    /// P(j beats arm) above 1/2 + epsilon; the first among equals), if any beats it. With kept
    /// bounds about K/16 block values and one block are read ([`Beaters`]); otherwise O(K).
    pub fn strongest_beater(&self, view: &View, arm: Arm) -> Option<Arm> {
        if let Some(beaters) = &self.beaters {
            return beaters.strongest(arm, view.active);
        }
        let beat = self.beat_at();
        let mut best: Option<(f32, Arm)> = None;
        for j in view.active_arms().filter(|&j| j != arm) {
            let lower = self.lower_bound(view, j, arm);
            if lower > beat && best.is_none_or(|(b, _)| lower > b) {
                best = Some((lower, j));
            }
        }
        best.map(|(_, j)| j)
    }

    /// Whether some arm is a decided Condorcet winner (O(1)).
    pub fn condorcet_decided(&self) -> bool {
        self.active >= 2 && self.full > 0
    }

    /// Whether some rival confidently beats `arm` by more than epsilon.
    pub fn is_beaten(&self, arm: Arm) -> bool {
        self.beaten[arm] > 0
    }

    /// The rival `champion` most needs evidence against: among the active rivals it does not
    /// yet hold against, the one with the least [`evidence`], never-compared rivals first (the
    /// first among equals). With kept bounds, about K/16 block minimums and one block of 16 are
    /// read ([`RowMinima`]); otherwise the row is computed.
    pub fn weakest_rival(&self, view: &View, champion: Arm) -> Option<Arm> {
        if let (Some(evidence), Some(minima)) = (&self.evidence, &self.evidence_minima) {
            let row = &evidence[champion * self.k..(champion + 1) * self.k];
            return minima.first_lowest(champion, row, view.active, f32::INFINITY);
        }
        let mut best: Option<(f32, Arm)> = None;
        for j in view.active_arms().filter(|&j| j != champion) {
            let lower = self.lower_bound(view, champion, j);
            let e = self.evidence_of(view.score(champion, j), view.count(champion, j), lower);
            if e < f32::INFINITY && best.is_none_or(|(b, _)| e < b) {
                best = Some((e, j));
            }
        }
        best.map(|(_, j)| j)
    }

    /// The rival `champion` is least separated from (LUCB's choice): the active rival with the
    /// lowest lower bound among those it does not yet hold against, never-compared rivals
    /// first. With kept bounds, about K/16 block minimums and one block of 16 are read
    /// ([`RowMinima`]); otherwise the row's bounds are computed.
    pub fn widest_rival(&self, view: &View, champion: Arm) -> Option<Arm> {
        let at = self.rival_at;
        if let (Some(lower), Some(minima)) = (&self.lower, &self.minima) {
            let row = &lower[champion * self.k..(champion + 1) * self.k];
            return minima.first_lowest(champion, row, view.active, at);
        }
        let mut best: Option<(f32, Arm)> = None;
        for j in view.active_arms().filter(|&j| j != champion) {
            let lower = self.lower_bound(view, champion, j);
            if lower <= at && best.is_none_or(|(b, _)| lower < b) {
                best = Some((lower, j));
            }
        }
        best.map(|(_, j)| j)
    }
}

/// How little a pair's evidence says that `i` is not worse than `j`, optimistically for `j`: the
/// estimate's lead over the threshold `at` (1/2 - epsilon) less two of its standard deviations
/// at 1/2, (score / n - at) - 1 / sqrt(n); -inf with no comparison. The confirmation layer meets
/// the rival with the least of it ([`Tracker::weakest_rival`]).
///
/// Why not the lowest lower bound (LUCB's rule, the layer's before): that bound carries the
/// decision's whole union over arms and its anytime validity, so a rival compared a few times
/// has a very wide interval and LUCB spends every leader's first dozens of comparisons on each
/// clearly worse rival. When the leader is not
/// the best arm (three head arms within 0.05 of each other on a 64-ranker long tail, the most
/// played one a wrong leader in many runs) those comparisons are wasted, and the rival that
/// beats the leader waits behind them. Two standard deviations of optimism give a clearly worse
/// rival a handful of comparisons before the one behind which the leader trails. Why not the
/// estimate alone (no optimism; the transportation-cost challenger of top-two sampling, T3C:
/// Shang, de Heide, Kaufmann, Menard and Valko 2020): it stays on the pair the leader trails
/// most in standard deviations, and when that is a near-tie it stays there for good, while the
/// rival that beats the leader clearly, but was met a few hundred times, waits (on a 4-ranker
/// transitive matrix at margin 0.005, 4% of runs undecided after 10^6 steps). Measured in
/// docs/decisions.md.
#[inline]
pub fn evidence(score: f64, n: f64, at: f64) -> f32 {
    if n <= 0.0 {
        return f32::NEG_INFINITY;
    }
    ((score / n - at) - 1.0 / n.sqrt()) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::decision::decide;
    use crate::bandit::testing::{view_of, wins_of};
    use crate::bandit::{BanditRng, WinMatrix};
    use rand::{Rng, SeedableRng};

    /// A multi-ranker query changes several pairs at once (`before` for each, then `after` for
    /// each, as `BanditState::record_set` does), here with ties counting as half a win and
    /// self-duels between queries: the kept counts and the most played arm still match a
    /// rebuild.
    #[test]
    fn query_shaped_updates_with_half_win_ties_match_a_rebuild() {
        use crate::bandit::TieRule;
        let mut rng = BanditRng::seed_from_u64(8);
        let k = 7;
        let mut w = WinMatrix::new(k);
        let active = [true, true, true, false, true, true, true];
        let settings = DecisionSettings::default();
        let mut t = Tracker::build(&View::new(&w, &active, TieRule::HalfWin), &settings);
        for query in 0..3_000 {
            if rng.random::<f64>() < 0.2 {
                // Mostly arm 6 (as a policy exploits its champion), so that its self-duels, not
                // its comparisons, make it the most played arm for stretches.
                let a = if rng.random::<bool>() {
                    6
                } else {
                    rng.random_range(0..k)
                };
                w.record_tie(a, a);
                if active[a] {
                    t.self_duel(&View::new(&w, &active, TieRule::HalfWin), a);
                }
                let fresh = Tracker::build(&View::new(&w, &active, TieRule::HalfWin), &settings);
                assert_eq!(t.most_played, fresh.most_played, "self-duel at {query}");
                continue;
            }
            // 2 to 4 distinct active arms, arm 0 the strongest.
            let m = rng.random_range(2..=4);
            let mut shown: Vec<Arm> = Vec::new();
            while shown.len() < m {
                let a = rng.random_range(0..k);
                if active[a] && !shown.contains(&a) {
                    shown.push(a);
                }
            }
            let pairs: Vec<(Arm, Arm)> = (0..m)
                .flat_map(|x| (x + 1..m).map(move |y| (x, y)))
                .map(|(x, y)| (shown[x], shown[y]))
                .collect();
            for &(i, j) in &pairs {
                t.before(&View::new(&w, &active, TieRule::HalfWin), i, j);
            }
            for &(i, j) in &pairs {
                let u = rng.random::<f64>();
                let p = if i == 0 {
                    0.7
                } else if j == 0 {
                    0.3
                } else {
                    0.45
                };
                if u < 0.1 {
                    w.record_tie(i, j);
                } else if u < 0.1 + 0.9 * p {
                    w.record_win(i, j);
                } else {
                    w.record_win(j, i);
                }
            }
            for &(i, j) in &pairs {
                t.after(&View::new(&w, &active, TieRule::HalfWin), i, j);
            }
            let fresh = Tracker::build(&View::new(&w, &active, TieRule::HalfWin), &settings);
            assert_eq!(t.most_played, fresh.most_played, "query {query}");
            if query % 100 == 0 {
                assert_eq!(t.compared, fresh.compared);
                assert_eq!(
                    (t.holds.clone(), t.beaten.clone()),
                    (fresh.holds, fresh.beaten)
                );
                assert_eq!(t.lower, fresh.lower);
                assert_eq!(t.evidence, fresh.evidence);
            }
        }
    }

    /// Self-duels alone can make an arm the most played: the arm a policy exploits leads.
    #[test]
    fn self_duels_make_an_arm_the_most_played() {
        let mut w = WinMatrix::new(3);
        w.add_wins(0, 1, 5);
        let active = [true; 3];
        let mut t = Tracker::build(&view_of(&w, &active), &DecisionSettings::default());
        assert_eq!(t.most_played(), Some(0));
        for n in 1..=6 {
            w.record_tie(2, 2);
            t.self_duel(&view_of(&w, &active), 2);
            // As many plays as arm 0 (5) is not enough: the lower index leads among equals.
            let want = if n <= 5 { 0 } else { 2 };
            assert_eq!(t.most_played(), Some(want), "{n} self-duels");
            let fresh = Tracker::build(&view_of(&w, &active), &DecisionSettings::default());
            assert_eq!(fresh.most_played(), Some(want));
        }
    }

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
            if i == j {
                // A self-duel: a tie on the diagonal.
                w.record_tie(i, i);
                if active[i] {
                    t.self_duel(&view_of(&w, &active), i);
                }
                continue;
            }
            let both = active[i] && active[j];
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
                assert_eq!(t.lower, fresh.lower);
                assert_eq!(t.minima, fresh.minima);
                assert_eq!(t.evidence, fresh.evidence);
                assert_eq!(t.evidence_minima, fresh.evidence_minima);
                assert_eq!(t.beaters, fresh.beaters);
                assert_eq!(t.compared, fresh.compared);
                assert_eq!(t.most_played, fresh.most_played);
                let d = decide(&view_of(&w, &active), &settings);
                assert_eq!(t.condorcet_decided(), d.champion.is_some());
            }
        }
        assert!(t.condorcet_decided());
        assert!(!t.is_beaten(0) && t.is_beaten(1));
    }

    #[test]
    fn the_kept_blocks_choose_as_the_general_loops() {
        // Sizes below, at and across a block, with unseen rivals (tied at -inf).
        for (seed, k) in [(8, 12), (9, 3), (10, 16), (11, 37), (12, 136)] {
            kept_minimums_match_the_general_loop(seed, k);
        }
    }

    fn kept_minimums_match_the_general_loop(seed: u64, k: usize) {
        let mut rng = BanditRng::seed_from_u64(seed);
        let mut w = WinMatrix::new(k);
        for _ in 0..3_000 {
            let (i, j) = (rng.random_range(0..k), rng.random_range(0..k));
            if i != j {
                // Higher arms win more often, so bounds spread out and some pairs separate.
                let (a, b) = (i.max(j), i.min(j));
                if rng.random::<f64>() < 0.3 + 0.04 * a as f64 {
                    w.record_win(a, b);
                } else {
                    w.record_win(b, a);
                }
            }
        }
        let active: Vec<bool> = (0..k).map(|a| a % 5 != 3).collect();
        let view = view_of(&w, &active);
        let kept = Tracker::build(&view, &DecisionSettings::default());
        let mut general = kept.clone();
        general.lower = None;
        general.minima = None;
        general.evidence = None;
        general.evidence_minima = None;
        general.beaters = None;
        for c in (0..k).filter(|&c| active[c]) {
            assert_eq!(
                kept.weakest_rival(&view, c),
                general.weakest_rival(&view, c),
                "k {k}, champion {c}"
            );
            assert_eq!(
                kept.widest_rival(&view, c),
                general.widest_rival(&view, c),
                "k {k}, champion {c}"
            );
            assert_eq!(
                kept.strongest_beater(&view, c),
                general.strongest_beater(&view, c),
                "k {k}, arm {c}"
            );
        }
    }

    /// Rival 1, compared 100 times (65 to 35), has the wider interval; rival 2, compared 2,000
    /// times (1,050 to 950), the less evidence: 0.15 - 0.1 = 0.05 against 0.025 - 0.022 = 0.003.
    /// Never-compared rivals come first for both, separated ones for neither.
    #[test]
    fn the_least_evidence_and_the_widest_interval_name_their_own_rivals() {
        let mut w = wins_of(
            5,
            &[
                (0, 1, 65),
                (1, 0, 35),
                (0, 2, 1050),
                (2, 0, 950),
                (0, 3, 900),
                (3, 0, 100),
            ],
        );
        let active = [true; 5];
        let t = Tracker::build(&view_of(&w, &active), &DecisionSettings::default());
        let view = view_of(&w, &active);
        assert_eq!(t.weakest_rival(&view, 0), Some(4));
        assert_eq!(t.widest_rival(&view, 0), Some(4));
        w.add_wins(0, 4, 1000);
        let view = view_of(&w, &active);
        let t = Tracker::build(&view, &DecisionSettings::default());
        assert_eq!(t.weakest_rival(&view, 0), Some(2));
        assert_eq!(t.widest_rival(&view, 0), Some(1));
        // Behind on the counts is less evidence than a lead: 65 to 75 gives -0.036 - 0.085.
        w.add_wins(1, 0, 40);
        let view = view_of(&w, &active);
        let t = Tracker::build(&view, &DecisionSettings::default());
        assert_eq!(t.weakest_rival(&view, 0), Some(1));
    }

    #[test]
    fn evidence_is_the_lead_over_the_threshold_less_two_standard_deviations() {
        assert_eq!(evidence(0.0, 0.0, 0.5), f32::NEG_INFINITY);
        assert!((evidence(60.0, 100.0, 0.5) - 0.0).abs() < 1e-6);
        assert!((evidence(45.0, 100.0, 0.5) + 0.15).abs() < 1e-6);
        // An indifference margin lowers the threshold: 50 of 100 is then a lead of 0.05.
        assert!((evidence(50.0, 100.0, 0.45) + 0.05).abs() < 1e-6);
    }
}
