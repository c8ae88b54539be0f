//! Phase I of the Thompson-sampling tournaments (MergeDTS, DTS): for every pair (i, j) of a group
//! of arms, whether a sample theta_ij ~ Beta(w_ij + 1, w_ji + 1) exceeds 1/2. Two ways to draw:
//! [`DuelTable::sample_wins`] ties theta_ji = 1 - theta_ij, as li-2020 Algorithm 2 writes it, so
//! one draw decides the pair and exactly one side wins it; [`DuelTable::sample_wins_independent`]
//! draws theta_ij and theta_ji independently, as the MergeDTS authors' code does, so a pair may
//! count for both sides or for neither.
//!
//! The table caches P(theta_ij > 1/2) per pair ([`super::beta`]), so a pair costs one uniform
//! instead of two Beta samples. Pairs whose counts are not integers (ties counting as half a win)
//! hold NaN and are sampled from the Beta distribution directly.
//!
//! **A cell is a function of the pair's counts alone.** The policies' states are persisted
//! without this table and rebuild it from the win matrix, and a restored state must choose
//! exactly as the live one, whose table was kept up to date outcome by outcome. So a cell holds
//! [`quantized`] P: the exact probability rounded to a multiple of 2^-30 ([`RESOLUTION`]), always
//! for the pair in the order of the arms' ids. `update` still moves a cell in O(1): an outcome
//! changes P by one binomial term ([`super::beta::prob_above_half_step`]), and the table keeps
//! that unrounded running value. Its rounding error since the last exact computation stays far
//! below [`GUARD`] (the exact value is computed again whenever the pair's count is a multiple of
//! [`EXACT_EVERY`], so at most 63 steps of an f64 sum with error about 2^-54 each); so when the
//! running value is more than [`GUARD`] from a rounding boundary, it rounds as the exact value
//! does, and when it is closer (about one update in 128) the exact value is computed. Rounding
//! moves a Thompson draw's probability by at most 2^-31: nothing a run can detect.

use rand::Rng;

use super::beta::{prob_above_half, prob_above_half_step, sample_above_half};
use crate::bandit::{Arm, View};

/// Cells are multiples of 1 / RESOLUTION.
pub const RESOLUTION: f64 = (1u64 << 30) as f64;

/// A running value this close to a rounding boundary is replaced by the exact one before
/// rounding: 2^-38. The 63 additions at most between exact values round by about 2^-47 in all,
/// and over 200,000 outcomes of a close pair the running value stays within 2^-40 of the exact
/// one (`beta.rs`'s tests), the exact one's own error included.
pub const GUARD: f64 = 1.0 / (1u64 << 38) as f64;

/// The exact value is computed when a pair's count (wins both ways plus the prior's two) is a
/// multiple of this, bounding the steps a running value accumulates rounding error over.
pub const EXACT_EVERY: u64 = 64;

/// `p` rounded to the nearest multiple of 1 / [`RESOLUTION`] (NaN stays NaN).
#[inline]
pub fn quantized(p: f64) -> f64 {
    (p * RESOLUTION).round() / RESOLUTION
}

/// Whether `p` is within [`GUARD`] of a point where [`quantized`] changes.
#[inline]
fn near_boundary(p: f64) -> bool {
    let scaled = p * RESOLUTION;
    ((scaled - scaled.floor()) - 0.5).abs() < GUARD * RESOLUTION
}

/// Exact P(theta_ij > 1/2) from the win matrix (not rounded), or NaN when the counts are not
/// integers.
fn exact(view: &View, i: Arm, j: Arm) -> f64 {
    let (s_ij, s_ji) = (view.score(i, j), view.score(j, i));
    if s_ij.fract() == 0.0 && s_ji.fract() == 0.0 {
        prob_above_half(s_ij as u64 + 1, s_ji as u64 + 1)
    } else {
        f64::NAN
    }
}

/// floor(p * 2^64), saturating at u64::MAX: P(uniform u64 < threshold) = p up to 2^-64.
#[inline]
fn to_threshold(p: f64) -> u64 {
    (p * 18_446_744_073_709_551_616.0) as u64
}

/// The cached probabilities for one group of arms.
#[derive(Clone, Debug)]
pub struct DuelTable {
    pub arms: Vec<Arm>,
    /// Per ordered pair of positions, x * n + y: where arms[x] < arms[y], the running value of
    /// P(theta > 1/2) (exact at the last exact computation, moved by one binomial term per
    /// outcome since); the other order holds 1 minus it. NaN for non-integer counts.
    running: Vec<f64>,
    /// Per ordered pair of positions: [`quantized`] P as a threshold on a uniform u64,
    /// `floor(p * 2^64)` (saturating), so a pair is decided by one integer comparison.
    thresholds: Vec<u64>,
    /// Cells with non-integer counts (sampled from the Beta distribution).
    nan_cells: usize,
}

impl DuelTable {
    /// Builds the table for `arms`, reusing cells of `previous` tables where both arms were in the
    /// same one (batches change by removing arms or joining groups, so most cells carry over).
    /// `previous` must be up to date with `view`: a cell that missed an outcome would stay wrong.
    pub fn build(view: &View, arms: &[Arm], previous: &[DuelTable]) -> Self {
        let n = arms.len();
        let mut table = DuelTable {
            arms: arms.to_vec(),
            running: vec![0.5; n * n],
            thresholds: vec![to_threshold(0.5); n * n],
            nan_cells: 0,
        };
        let mut located = Vec::with_capacity(n);
        for &a in arms {
            located.push(
                previous
                    .iter()
                    .enumerate()
                    .find_map(|(t, table)| table.position(a).map(|pos| (t, pos))),
            );
        }
        for x in 0..n {
            for y in x + 1..n {
                let (lo, hi) = table.in_id_order(x, y);
                match (located[lo], located[hi]) {
                    (Some((t1, p1)), Some((t2, p2))) if t1 == t2 => {
                        let from = &previous[t1];
                        table.set(lo, hi, from.running[p1 * from.n() + p2], from.get(p1, p2));
                    }
                    _ => {
                        table.set_exact(view, lo, hi);
                    }
                }
            }
        }
        table
    }

    fn n(&self) -> usize {
        self.arms.len()
    }

    /// Positions `x` and `y` ordered by their arms' ids.
    #[inline]
    fn in_id_order(&self, x: usize, y: usize) -> (usize, usize) {
        if self.arms[x] < self.arms[y] {
            (x, y)
        } else {
            (y, x)
        }
    }

    pub fn position(&self, arm: Arm) -> Option<usize> {
        self.arms.iter().position(|&a| a == arm)
    }

    /// The cell of positions `x` and `y`: [`quantized`] P(theta > 1/2) for the pair in id order,
    /// or 1 minus it for the other order (NaN for non-integer counts).
    #[inline]
    pub fn get(&self, x: usize, y: usize) -> f64 {
        let xy = x * self.n() + y;
        if self.running[xy].is_nan() {
            f64::NAN
        } else {
            self.thresholds[xy] as f64 / 18_446_744_073_709_551_616.0
        }
    }

    /// Sets the pair of positions `lo` and `hi` (arms in id order): its running value and its
    /// quantized value `q`; the other order gets the complements.
    fn set(&mut self, lo: usize, hi: usize, running: f64, q: f64) {
        let n = self.n();
        let (xy, yx) = (lo * n + hi, hi * n + lo);
        self.nan_cells -= 2 * usize::from(self.running[xy].is_nan());
        self.nan_cells += 2 * usize::from(running.is_nan());
        self.running[xy] = running;
        self.running[yx] = 1.0 - running;
        // q is a multiple of 2^-30, so 1 - q is exact, and both thresholds convert back exactly
        // (`get`).
        self.thresholds[xy] = to_threshold(q);
        self.thresholds[yx] = to_threshold(1.0 - q);
    }

    /// Sets the pair from its exact value.
    fn set_exact(&mut self, view: &View, lo: usize, hi: usize) {
        let p = exact(view, self.arms[lo], self.arms[hi]);
        self.set(lo, hi, p, quantized(p));
    }

    /// Applies a win of `winner` over `loser` (already in `view`) if both are in the table.
    pub fn record_win(&mut self, view: &View, winner: Arm, loser: Arm) {
        let (Some(x), Some(y)) = (self.position(winner), self.position(loser)) else {
            return;
        };
        if x == y {
            return;
        }
        let (lo, hi) = self.in_id_order(x, y);
        let before = self.running[lo * self.n() + hi];
        let (a, b) = (
            view.score(self.arms[lo], self.arms[hi]),
            view.score(self.arms[hi], self.arms[lo]),
        );
        if before.is_nan() || a.fract() != 0.0 || b.fract() != 0.0 {
            return self.set_exact(view, lo, hi);
        }
        let (a, b) = (a as u64 + 1, b as u64 + 1);
        if (a + b) % EXACT_EVERY == 0 {
            return self.set_exact(view, lo, hi);
        }
        let running = prob_above_half_step(before, a, b, lo == x);
        if near_boundary(running) {
            return self.set_exact(view, lo, hi);
        }
        self.set(lo, hi, running, quantized(running));
    }

    /// Recomputes the cell of `a` and `b` (after a tie) if both are in the table.
    pub fn recompute(&mut self, view: &View, a: Arm, b: Arm) {
        if let (Some(x), Some(y)) = (self.position(a), self.position(b))
            && x != y
        {
            let (lo, hi) = self.in_id_order(x, y);
            self.set_exact(view, lo, hi);
        }
    }

    /// Whether the pair of positions x and y has x's arm winning the sampled duel.
    #[inline]
    fn draw<R: Rng + ?Sized>(&self, view: &View, x: usize, y: usize, rng: &mut R) -> bool {
        let xy = x * self.n() + y;
        if self.running[xy].is_nan() {
            let (i, j) = (self.arms[x], self.arms[y]);
            sample_above_half(view.score(i, j) + 1.0, view.score(j, i) + 1.0, rng)
        } else {
            rng.next_u64() < self.thresholds[xy]
        }
    }

    /// Phase I: samples every pair once and returns, per position, how many sampled duels the arm
    /// wins (pairs are drawn in a fixed order, so runs replay exactly).
    pub fn sample_wins<R: Rng + ?Sized>(&self, view: &View, wins: &mut [u32], rng: &mut R) {
        let n = self.n();
        wins[..n].fill(0);
        if self.nan_cells == 0 {
            (0..n).for_each(|x| self.sample_row_after(x, wins, rng));
            return;
        }
        for x in 0..n {
            for y in x + 1..n {
                if self.draw(view, x, y, rng) {
                    wins[x] += 1;
                } else {
                    wins[y] += 1;
                }
            }
        }
    }

    /// The hot path of Phase I, while no cell is NaN: position x against every later position,
    /// one u64 per pair compared with the cached threshold.
    #[inline]
    fn sample_row_after<R: Rng + ?Sized>(&self, x: usize, wins: &mut [u32], rng: &mut R) {
        let n = self.n();
        let row = &self.thresholds[x * n..(x + 1) * n];
        let mut won = 0;
        for (y, &threshold) in row.iter().enumerate().skip(x + 1) {
            let x_wins = rng.next_u64() < threshold;
            won += u32::from(x_wins);
            wins[y] += u32::from(!x_wins);
        }
        wins[x] += won;
    }

    /// DTS's first sample: [`DuelTable::sample_wins`] for only the pairs with at least one
    /// `marked` position, in the same order.
    pub fn sample_wins_marked<R: Rng + ?Sized>(
        &self,
        view: &View,
        marked: &[bool],
        wins: &mut [u32],
        rng: &mut R,
    ) {
        let n = self.n();
        let marked_positions: Vec<usize> = (0..n).filter(|&x| marked[x]).collect();
        wins[..n].fill(0);
        for x in 0..n {
            let later = if marked[x] {
                &[][..]
            } else {
                &marked_positions[marked_positions.partition_point(|&y| y <= x)..]
            };
            let mut duel = |y: usize, rng: &mut R| {
                let x_wins = self.draw(view, x, y, rng);
                wins[x] += u32::from(x_wins);
                wins[y] += u32::from(!x_wins);
            };
            if marked[x] && self.nan_cells == 0 {
                self.sample_row_after(x, wins, rng);
            } else if marked[x] {
                (x + 1..n).for_each(|y| duel(y, rng));
            } else {
                later.iter().for_each(|&y| duel(y, rng));
            }
        }
    }

    /// Phase I with theta_ij and theta_ji drawn independently: per position, how many of its
    /// own draws theta_xy (y another arm of the table) exceed 1/2. An arm is not compared with
    /// itself. Ordered pairs are drawn row by row, so runs replay exactly.
    pub fn sample_wins_independent<R: Rng + ?Sized>(
        &self,
        view: &View,
        wins: &mut [u32],
        rng: &mut R,
    ) {
        let n = self.n();
        wins[..n].fill(0);
        for (x, won) in wins[..n].iter_mut().enumerate() {
            if self.nan_cells == 0 {
                let row = &self.thresholds[x * n..(x + 1) * n];
                for (y, &threshold) in row.iter().enumerate() {
                    if y != x {
                        *won += u32::from(rng.next_u64() < threshold);
                    }
                }
            } else {
                for y in (0..n).filter(|&y| y != x) {
                    *won += u32::from(self.draw(view, x, y, rng));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::{BanditRng, TieRule, WinMatrix};
    use rand::SeedableRng;

    /// The cell of `i` against `j` computed on its own, as the table defines it.
    fn cell(view: &View, i: Arm, j: Arm) -> f64 {
        if i <= j {
            quantized(exact(view, i, j))
        } else {
            1.0 - quantized(exact(view, j, i))
        }
    }

    /// Every cell of a table kept outcome by outcome equals, bit for bit, the cell of a table
    /// built from the win matrix, after every one of 300,000 outcomes among 6 arms: three close
    /// pairs (p = 0.5, 0.505 and 0.52) that reach counts in the tens of thousands, where most
    /// cells move by the running sum and some land near a rounding boundary, and clear pairs
    /// whose cells reach 0 and 1; with half-win ties (a pair with an odd number of ties is NaN).
    #[test]
    fn a_kept_table_equals_one_built_from_the_counts() {
        let k = 6;
        let arms: Vec<Arm> = vec![4, 1, 5, 0, 3, 2];
        let active = vec![true; k];
        for ties in [TieRule::Ignore, TieRule::HalfWin] {
            let mut rng = BanditRng::seed_from_u64(5);
            let mut w = WinMatrix::new(k);
            let mut kept = DuelTable::build(&View::new(&w, &active, ties), &arms, &[]);
            let mut exact_fallbacks = 0;
            for step in 0..300_000 {
                // Pairs (0, 1), (2, 3), (4, 5) are close; the rest are decided by 0.8.
                let i = rng.random_range(0..k);
                let j = if rng.random::<f64>() < 0.8 {
                    i ^ 1
                } else {
                    (i + rng.random_range(1..k)) % k
                };
                let p_i = match (i.min(j), i.max(j)) {
                    (0, 1) => 0.5,
                    (2, 3) => 0.505,
                    (4, 5) => 0.52,
                    _ => 0.8,
                };
                let p_i = if i < j { p_i } else { 1.0 - p_i };
                if ties == TieRule::HalfWin && rng.random::<f64>() < 0.01 {
                    w.record_tie(i, j);
                    kept.recompute(&View::new(&w, &active, ties), i, j);
                } else {
                    let (winner, loser) = if rng.random::<f64>() < p_i {
                        (i, j)
                    } else {
                        (j, i)
                    };
                    w.record_win(winner, loser);
                    let view = View::new(&w, &active, ties);
                    let (x, y) = (
                        kept.position(winner).unwrap(),
                        kept.position(loser).unwrap(),
                    );
                    let (lo, hi) = kept.in_id_order(x, y);
                    let before = kept.running[lo * k + hi];
                    kept.record_win(&view, winner, loser);
                    let stepped = prob_above_half_step(
                        before,
                        view.score(arms[lo], arms[hi]) as u64 + 1,
                        view.score(arms[hi], arms[lo]) as u64 + 1,
                        lo == x,
                    );
                    exact_fallbacks += usize::from(
                        !before.is_nan()
                            && kept.running[lo * k + hi].to_bits() != stepped.to_bits(),
                    );
                }
                if step % 7 == 0 || step > 299_000 {
                    let view = View::new(&w, &active, ties);
                    let fresh = DuelTable::build(&view, &arms, &[]);
                    assert_eq!(kept.thresholds, fresh.thresholds, "step {step}, {ties:?}");
                    assert_eq!(kept.nan_cells, fresh.nan_cells, "step {step}, {ties:?}");
                    for x in 0..k {
                        for y in (0..k).filter(|&y| y != x) {
                            let (g, c) = (kept.get(x, y), cell(&view, arms[x], arms[y]));
                            assert!(g.to_bits() == c.to_bits() || (g.is_nan() && c.is_nan()));
                        }
                    }
                }
            }
            // The running sum served most outcomes; the exact value the rest.
            assert!(
                (1_000..150_000).contains(&exact_fallbacks),
                "{exact_fallbacks}"
            );
        }
    }

    /// Reused cells keep their value: a table built from another one, with the arms in another
    /// order, equals one built from the counts.
    #[test]
    fn cells_carry_over_between_tables_in_any_order() {
        let k = 5;
        let active = vec![true; k];
        let mut rng = BanditRng::seed_from_u64(8);
        let mut w = WinMatrix::new(k);
        let arms: Vec<Arm> = (0..k).collect();
        let mut kept = DuelTable::build(&View::new(&w, &active, TieRule::Ignore), &arms, &[]);
        for _ in 0..5_000 {
            let (i, j) = (rng.random_range(0..k), rng.random_range(0..k));
            if i != j {
                w.record_win(i, j);
                kept.record_win(&View::new(&w, &active, TieRule::Ignore), i, j);
            }
        }
        let view = View::new(&w, &active, TieRule::Ignore);
        let reordered = [3, 0, 4, 1];
        let carried = DuelTable::build(&view, &reordered, &[kept]);
        let fresh = DuelTable::build(&view, &reordered, &[]);
        assert_eq!(carried.thresholds, fresh.thresholds);
    }
}
