//! Each arm's strongest beater kept by blocks, so that the confirmation layer's question "which
//! rival beats the most played arm most clearly?" reads about K/16 block values and one block
//! instead of a column of the K x K bounds.
//!
//! The layer asks it on every duel while the most played arm is confidently beaten, which on
//! 136 MSLR rankers is most of a run: the column scan, strided through the row-major bounds, was
//! then the largest cost of a simulated step. The answer is the first of the highest lower bounds
//! of P(j beats arm) above 1/2 + epsilon, as the scan gives it. It is [`RowMinima`] over a
//! transposed, negated copy of the bounds: arm `a`'s row holds -lower(j beats a) for every j, and
//! the first lowest of those above the threshold is the first highest bound.

use super::row_minima::RowMinima;
use crate::bandit::Arm;

#[derive(Debug, Clone, PartialEq)]
pub struct Beaters {
    k: usize,
    /// Entry `arm * k + j`: minus the lower bound of P(j beats arm).
    negated: Vec<f32>,
    minima: RowMinima,
    /// A negated bound at or below this is a beater: -lower <= -(beat's next float up), that is
    /// lower > beat.
    at: f32,
}

impl Beaters {
    /// From the row-major bounds `lower` (entry `i * k + j`: the lower bound of P(i beats j)); a
    /// rival beats an arm when its bound exceeds `beat`.
    pub fn build(k: usize, lower: &[f32], active: &[bool], beat: f32) -> Beaters {
        let mut negated = vec![f32::INFINITY; k * k];
        for i in 0..k {
            for j in 0..k {
                negated[j * k + i] = -lower[i * k + j];
            }
        }
        let at = -next_up(beat);
        let minima = RowMinima::build(k, &negated, active, at);
        Beaters {
            k,
            negated,
            minima,
            at,
        }
    }

    /// Call after the lower bound of P(`i` beats `j`) became `lower`.
    pub fn changed(&mut self, (i, j): (Arm, Arm), lower: f32, active: &[bool]) {
        let k = self.k;
        let cell = j * k + i;
        let old = self.negated[cell];
        self.negated[cell] = -lower;
        let row = &self.negated[j * k..(j + 1) * k];
        self.minima.changed((j, i), old, row, active, self.at);
    }

    /// The active rival with the highest lower bound of beating `arm` above the threshold, the
    /// first among equals; `None` if no rival beats it.
    pub fn strongest(&self, arm: Arm, active: &[bool]) -> Option<Arm> {
        let row = &self.negated[arm * self.k..(arm + 1) * self.k];
        self.minima.first_lowest(arm, row, active, self.at)
    }
}

/// The least `f32` above `x` (`f32::next_up`, which is newer than the crate's minimum Rust).
fn next_up(x: f32) -> f32 {
    if x.is_nan() || x == f32::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f32::from_bits(1);
    }
    let bits = x.to_bits();
    f32::from_bits(if x > 0.0 { bits + 1 } else { bits - 1 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::BanditRng;
    use rand::{Rng, SeedableRng};

    /// The first of the highest bounds above `beat` in `arm`'s column, by a plain scan.
    fn scan(k: usize, lower: &[f32], active: &[bool], beat: f32, arm: Arm) -> Option<Arm> {
        let mut best: Option<(f32, Arm)> = None;
        for j in (0..k).filter(|&j| active[j] && j != arm) {
            let v = lower[j * k + arm];
            if v > beat && best.is_none_or(|(b, _)| v > b) {
                best = Some((v, j));
            }
        }
        best.map(|(_, j)| j)
    }

    #[test]
    fn next_up_is_the_least_float_above() {
        for x in [0.5f32, 0.75, -0.5, 0.0, -0.0, 1e-40, -1e-40, f32::MAX / 2.0] {
            let up = next_up(x);
            assert!(up > x, "{x}");
            // Nothing lies between: the midpoint rounds to one of the two.
            let mid = (x as f64 + up as f64) / 2.0;
            assert!(mid as f32 == x || mid as f32 == up, "{x}");
        }
        assert_eq!(next_up(f32::NEG_INFINITY), f32::MIN);
        assert_eq!(next_up(f32::INFINITY), f32::INFINITY);
    }

    #[test]
    fn kept_beaters_choose_as_a_scan_of_the_column() {
        let mut rng = BanditRng::seed_from_u64(6);
        let beat = 0.5;
        for k in [1, 2, 15, 16, 17, 40, 136] {
            let active: Vec<bool> = (0..k).map(|a| a % 7 != 5).collect();
            // Few distinct values, the threshold among them, so that ties and the boundary
            // itself are common.
            let pick = |rng: &mut BanditRng| match rng.random_range(0..7) {
                0 => f32::NEG_INFINITY,
                1 => beat,
                2 => next_up(beat),
                v => 0.15 * v as f32,
            };
            let mut lower: Vec<f32> = (0..k * k).map(|_| pick(&mut rng)).collect();
            let mut b = Beaters::build(k, &lower, &active, beat);
            for _ in 0..2_000 {
                let (i, j) = (rng.random_range(0..k), rng.random_range(0..k));
                lower[i * k + j] = pick(&mut rng);
                b.changed((i, j), lower[i * k + j], &active);
                let arm = rng.random_range(0..k);
                assert_eq!(
                    b.strongest(arm, &active),
                    scan(k, &lower, &active, beat, arm),
                    "k {k}, arm {arm}"
                );
            }
            assert_eq!(b, Beaters::build(k, &lower, &active, beat), "k {k}");
        }
    }
}
