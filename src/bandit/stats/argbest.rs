//! Arg-max (or arg-min) with ties broken uniformly at random, in one pass (reservoir sampling):
//! the i-th arm to tie the best value replaces the current choice with probability 1/i. The RNG is
//! used only when a tie occurs, so runs replay exactly from the seed.

use rand::Rng;

use crate::bandit::Arm;

#[derive(Debug, Clone, Copy)]
pub struct ArgMax {
    best: f64,
    arm: Option<Arm>,
    ties: u32,
}

impl Default for ArgMax {
    fn default() -> Self {
        Self::new()
    }
}

impl ArgMax {
    pub fn new() -> Self {
        ArgMax {
            best: f64::NEG_INFINITY,
            arm: None,
            ties: 0,
        }
    }

    #[inline]
    pub fn offer<R: Rng + ?Sized>(&mut self, arm: Arm, value: f64, rng: &mut R) {
        if value > self.best || self.arm.is_none() {
            self.best = value;
            self.arm = Some(arm);
            self.ties = 1;
        } else if value == self.best {
            self.ties += 1;
            if rng.random_range(0..self.ties) == 0 {
                self.arm = Some(arm);
            }
        }
    }

    pub fn arm(&self) -> Option<Arm> {
        self.arm
    }
}

/// The arm with the highest strictly positive score (the lowest index among equals), or `None`
/// when no arm scores above zero: how policies without an RNG at hand name their belief, e.g.
/// the arm played most.
pub fn highest_positive(
    arms: impl Iterator<Item = Arm>,
    score: impl Fn(Arm) -> f64,
) -> Option<Arm> {
    let mut best: Option<(Arm, f64)> = None;
    for a in arms {
        let s = score(a);
        if s > 0.0 && best.is_none_or(|(_, b)| s > b) {
            best = Some((a, s));
        }
    }
    best.map(|(a, _)| a)
}

#[cfg(test)]
mod tests {
    #[test]
    fn highest_positive_prefers_the_lowest_index_among_equals_and_ignores_zero() {
        let scores = [0.0, 2.0, 1.0, 2.0];
        assert_eq!(super::highest_positive(0..4, |a| scores[a]), Some(1));
        assert_eq!(super::highest_positive(0..1, |a| scores[a]), None);
    }

    use super::*;
    use crate::bandit::BanditRng;
    use rand::SeedableRng;

    #[test]
    fn ties_are_broken_uniformly() {
        // Three tied arms, 30,000 trials: each count is Binomial(30000, 1/3), sd 82; allow 5 sd.
        let mut rng = BanditRng::seed_from_u64(5);
        let mut counts = [0usize; 4];
        for _ in 0..30_000 {
            let mut m = ArgMax::new();
            for (arm, v) in [(0, 1.0), (1, 2.0), (2, 2.0), (3, 2.0)] {
                m.offer(arm, v, &mut rng);
            }
            counts[m.arm().unwrap()] += 1;
        }
        assert_eq!(counts[0], 0);
        for c in &counts[1..] {
            assert!((*c as f64 - 10_000.0).abs() < 410.0, "{counts:?}");
        }
    }
}
