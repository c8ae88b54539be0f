//! Phase I of the Thompson-sampling tournaments (MergeDTS, DTS): for every pair (i, j) of a group
//! of arms, whether a sample theta_ij ~ Beta(w_ij + 1, w_ji + 1) exceeds 1/2. Two ways to draw:
//! [`DuelTable::sample_wins`] ties theta_ji = 1 - theta_ij, as li-2020 Algorithm 2 writes it, so
//! one draw decides the pair and exactly one side wins it; [`DuelTable::sample_wins_independent`]
//! draws theta_ij and theta_ji independently, as the MergeDTS authors' code does, so a pair may
//! count for both sides or for neither.
//!
//! The table caches P(theta_ij > 1/2) per pair ([`super::beta`]), so a pair costs one uniform
//! instead of two Beta samples. It is kept in `update`: an outcome moves one cell by one binomial
//! term. Pairs whose counts are not integers (ties counting as half a win) hold NaN and are
//! sampled from the Beta distribution directly.

use rand::Rng;

use super::beta::{prob_above_half, prob_above_half_next, sample_above_half};
use crate::bandit::{Arm, View};

/// P(theta_ij > 1/2) from the win matrix, or NaN when the counts are not integers.
pub fn cell(view: &View, i: Arm, j: Arm) -> f64 {
    let (s_ij, s_ji) = (view.score(i, j), view.score(j, i));
    if s_ij.fract() == 0.0 && s_ji.fract() == 0.0 {
        prob_above_half(s_ij as u64 + 1, s_ji as u64 + 1)
    } else {
        f64::NAN
    }
}

/// Draws the indicator theta_ij > 1/2 given its cached probability `p` (NaN: sample).
#[inline]
pub fn draw<R: Rng + ?Sized>(view: &View, i: Arm, j: Arm, p: f64, rng: &mut R) -> bool {
    if p.is_nan() {
        sample_above_half(view.score(i, j) + 1.0, view.score(j, i) + 1.0, rng)
    } else {
        rng.next_u64() < to_threshold(p)
    }
}

/// The cached probabilities for one group of arms: `p[x * n + y]` = P(theta_{arms[x] arms[y]} >
/// 1/2), both orientations stored.
#[derive(Clone, Debug)]
pub struct DuelTable {
    pub arms: Vec<Arm>,
    p: Vec<f64>,
    /// The same probabilities as thresholds on a uniform u64, `floor(p * 2^64)` (saturating), so
    /// a pair is decided by one integer comparison; used while no cell is NaN.
    thresholds: Vec<u64>,
    /// Cells with non-integer counts (sampled from the Beta distribution).
    nan_cells: usize,
}

/// floor(p * 2^64), saturating at u64::MAX: P(uniform u64 < threshold) = p up to 2^-64.
#[inline]
fn to_threshold(p: f64) -> u64 {
    (p * 18_446_744_073_709_551_616.0) as u64
}

impl DuelTable {
    /// Builds the table for `arms`, reusing cells of `previous` tables where both arms were in the
    /// same one (batches change by removing arms or joining groups, so most cells carry over).
    pub fn build(view: &View, arms: &[Arm], previous: &[DuelTable]) -> Self {
        let n = arms.len();
        let mut p = vec![0.5; n * n];
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
                let value = match (located[x], located[y]) {
                    (Some((t1, p1)), Some((t2, p2))) if t1 == t2 => previous[t1].get(p1, p2),
                    _ => cell(view, arms[x], arms[y]),
                };
                p[x * n + y] = value;
                p[y * n + x] = 1.0 - value;
            }
        }
        let thresholds = p.iter().map(|&v| to_threshold(v)).collect();
        let nan_cells = p.iter().filter(|v| v.is_nan()).count();
        DuelTable {
            arms: arms.to_vec(),
            p,
            thresholds,
            nan_cells,
        }
    }

    pub fn position(&self, arm: Arm) -> Option<usize> {
        self.arms.iter().position(|&a| a == arm)
    }

    #[inline]
    pub fn get(&self, x: usize, y: usize) -> f64 {
        self.p[x * self.arms.len() + y]
    }

    fn set(&mut self, x: usize, y: usize, value: f64) {
        let n = self.arms.len();
        let (xy, yx) = (x * n + y, y * n + x);
        self.nan_cells -= 2 * usize::from(self.p[xy].is_nan());
        self.nan_cells += 2 * usize::from(value.is_nan());
        self.p[xy] = value;
        self.p[yx] = 1.0 - value;
        self.thresholds[xy] = to_threshold(value);
        self.thresholds[yx] = to_threshold(1.0 - value);
    }

    /// Applies a win of `winner` over `loser` (already in `view`) if both are in the table.
    pub fn record_win(&mut self, view: &View, winner: Arm, loser: Arm) {
        let (Some(x), Some(y)) = (self.position(winner), self.position(loser)) else {
            return;
        };
        let before = self.get(x, y);
        let (a, b) = (view.score(winner, loser), view.score(loser, winner));
        let value = if before.is_nan() || a.fract() != 0.0 || b.fract() != 0.0 {
            cell(view, winner, loser)
        } else {
            prob_above_half_next(before, a as u64 + 1, b as u64 + 1, true)
        };
        self.set(x, y, value);
    }

    /// Recomputes the cell of `a` and `b` (after a tie) if both are in the table.
    pub fn recompute(&mut self, view: &View, a: Arm, b: Arm) {
        if let (Some(x), Some(y)) = (self.position(a), self.position(b)) {
            self.set(x, y, cell(view, a, b));
        }
    }

    /// Phase I: samples every pair once and returns, per position, how many sampled duels the arm
    /// wins (pairs are drawn in a fixed order, so runs replay exactly).
    pub fn sample_wins<R: Rng + ?Sized>(&self, view: &View, wins: &mut [u32], rng: &mut R) {
        let n = self.arms.len();
        wins[..n].fill(0);
        if self.nan_cells == 0 {
            (0..n).for_each(|x| self.sample_row_after(x, wins, rng));
            return;
        }
        for x in 0..n {
            let row = &self.p[x * n..(x + 1) * n];
            for (y, &p) in row.iter().enumerate().skip(x + 1) {
                if draw(view, self.arms[x], self.arms[y], p, rng) {
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
        let n = self.arms.len();
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
        let n = self.arms.len();
        let marked_positions: Vec<usize> = (0..n).filter(|&x| marked[x]).collect();
        wins[..n].fill(0);
        for x in 0..n {
            let later = if marked[x] {
                &[][..]
            } else {
                &marked_positions[marked_positions.partition_point(|&y| y <= x)..]
            };
            let mut duel = |y: usize, rng: &mut R| {
                let xy = x * n + y;
                let x_wins = if self.nan_cells == 0 {
                    rng.next_u64() < self.thresholds[xy]
                } else {
                    draw(view, self.arms[x], self.arms[y], self.p[xy], rng)
                };
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
        let n = self.arms.len();
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
                let row = &self.p[x * n..(x + 1) * n];
                for (y, &p) in row.iter().enumerate() {
                    if y != x {
                        *won += u32::from(draw(view, self.arms[x], self.arms[y], p, rng));
                    }
                }
            }
        }
    }
}
