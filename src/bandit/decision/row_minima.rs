//! The lowest kept lower bound of each row, by blocks of [`BLOCK`] columns, so that the
//! confirmation layer's question "whom does the champion most need to meet?" reads about K/16
//! block minimums and one block instead of the champion's whole row.
//!
//! Every confirmation duel asks it, and with 136 rankers the row scan was the layer's largest
//! cost in the simulator. An outcome changes one cell in each of two rows, so keeping the minimums
//! costs two comparisons per outcome, and a rescan of 16 cells when a block's minimum rose.
//!
//! Only cells a rival could be chosen for count: an active rival, not the row's own arm, with a
//! bound at or below the threshold (the champion does not yet hold against it). Others count as
//! +inf. The choice is the first of the lowest, as a scan of the whole row would make it.

use crate::bandit::Arm;

/// Columns per block: a block rescan is short, and a row has few blocks.
pub const BLOCK: usize = 16;

#[derive(Debug, Clone, PartialEq)]
pub struct RowMinima {
    k: usize,
    blocks: usize,
    /// Entry `row * blocks + b`: the lowest eligible value in columns `b * BLOCK ..`.
    mins: Vec<f32>,
}

impl RowMinima {
    /// The minimums of every row of the k x k `cells` (row-major).
    pub fn build(k: usize, cells: &[f32], active: &[bool], at: f32) -> RowMinima {
        let blocks = k.div_ceil(BLOCK);
        let mut m = RowMinima {
            k,
            blocks,
            mins: vec![f32::INFINITY; k * blocks],
        };
        for row in 0..k {
            for b in 0..blocks {
                m.refresh_block(row, b, &cells[row * k..(row + 1) * k], active, at);
            }
        }
        m
    }

    /// Call after cell (`row`, `col`) changed from `old`; `values` is the row. O(1) unless the
    /// cell held its block's minimum and rose: then the block is rescanned.
    pub fn changed(
        &mut self,
        (row, col): (Arm, Arm),
        old: f32,
        values: &[f32],
        active: &[bool],
        at: f32,
    ) {
        let b = col / BLOCK;
        let min = &mut self.mins[row * self.blocks + b];
        let new = eligible(row, col, values[col], active[col], at);
        if new <= *min {
            *min = new;
        } else if eligible(row, col, old, active[col], at) <= *min {
            self.refresh_block(row, b, values, active, at);
        }
    }

    fn refresh_block(&mut self, row: Arm, b: usize, values: &[f32], active: &[bool], at: f32) {
        let end = ((b + 1) * BLOCK).min(self.k);
        self.mins[row * self.blocks + b] = (b * BLOCK..end)
            .map(|j| eligible(row, j, values[j], active[j], at))
            .fold(f32::INFINITY, f32::min);
    }

    /// The first column of the lowest eligible value of `row` (`values`), if any is eligible.
    pub fn first_lowest(&self, row: Arm, values: &[f32], active: &[bool], at: f32) -> Option<Arm> {
        let mins = &self.mins[row * self.blocks..(row + 1) * self.blocks];
        let (mut best, mut block) = (f32::INFINITY, None);
        for (b, &m) in mins.iter().enumerate() {
            // Strictly lower: the first block of the lowest value holds its first column.
            if m < best {
                (best, block) = (m, Some(b));
            }
        }
        let b = block?;
        let end = ((b + 1) * BLOCK).min(self.k);
        (b * BLOCK..end).find(|&j| eligible(row, j, values[j], active[j], at) == best)
    }
}

/// The cell's value if a rival could be chosen for it, +inf otherwise.
#[inline]
fn eligible(row: Arm, col: Arm, value: f32, active: bool, at: f32) -> f32 {
    if active && col != row && value <= at {
        value
    } else {
        f32::INFINITY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::BanditRng;
    use rand::{Rng, SeedableRng};

    /// The first of the lowest eligible cells of a row, by a plain scan.
    fn scan(row: Arm, values: &[f32], active: &[bool], at: f32) -> Option<Arm> {
        let mut best: Option<(f32, Arm)> = None;
        for (j, &v) in values.iter().enumerate() {
            if active[j] && j != row && v <= at && best.is_none_or(|(b, _)| v < b) {
                best = Some((v, j));
            }
        }
        best.map(|(_, j)| j)
    }

    #[test]
    fn kept_minimums_choose_as_a_scan_of_the_row() {
        let mut rng = BanditRng::seed_from_u64(4);
        let at = 0.5;
        for k in [1, 2, 15, 16, 17, 40, 136] {
            let active: Vec<bool> = (0..k).map(|a| a % 7 != 5).collect();
            // Few distinct values, so that ties (and -inf, unseen rivals) are common.
            let pick = |rng: &mut BanditRng| match rng.random_range(0..6) {
                0 => f32::NEG_INFINITY,
                1 => 0.7,
                v => 0.1 * v as f32,
            };
            let mut cells: Vec<f32> = (0..k * k).map(|_| pick(&mut rng)).collect();
            let mut m = RowMinima::build(k, &cells, &active, at);
            for _ in 0..2_000 {
                let (row, col) = (rng.random_range(0..k), rng.random_range(0..k));
                let old = cells[row * k + col];
                cells[row * k + col] = pick(&mut rng);
                let values = &cells[row * k..(row + 1) * k];
                m.changed((row, col), old, values, &active, at);
                let asked = rng.random_range(0..k);
                let values = &cells[asked * k..(asked + 1) * k];
                assert_eq!(
                    m.first_lowest(asked, values, &active, at),
                    scan(asked, values, &active, at),
                    "k {k}, row {asked}"
                );
            }
            assert_eq!(m, RowMinima::build(k, &cells, &active, at), "k {k}");
        }
    }
}
