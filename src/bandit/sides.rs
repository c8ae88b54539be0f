//! Which side of a duel each arm of an outcome was on.
//!
//! The reductions of Ailon, Karnin and Joachims (2014) feed each outcome to the box that chose a
//! given side (Sparring's left or right box, Doubler's right box, MultiSBM's box of the left
//! arm). joust's outcomes name the winner and the loser, not the sides, and arrive late and out
//! of order, so the side is inferred: given the two arms `a` and `b`, the duel was (left `a`,
//! right `b`) with odds `P(left = a) P(right = b) : P(left = b) P(right = a)` under the policy's
//! current choice distributions, and the side is drawn with those odds (Bayes' rule with equal
//! prior odds). Drawing rather than taking the likelier side keeps each box's feedback unbiased
//! in expectation when the two readings are close, e.g. before the boxes have learnt anything.

use rand::Rng;

/// Draws whether the outcome's arms were (left `a`, right `b`), given the weight of that reading
/// and of the swapped one (`b` left, `a` right). Equal or degenerate weights give a fair coin.
pub fn a_was_left<R: Rng + ?Sized>(weight_a_left: f64, weight_b_left: f64, rng: &mut R) -> bool {
    let total = weight_a_left + weight_b_left;
    if !(total.is_finite() && total > 0.0) {
        return rng.random::<bool>();
    }
    rng.random::<f64>() * total < weight_a_left
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::BanditRng;
    use rand::SeedableRng;

    #[test]
    fn sides_follow_the_odds() {
        // 20,000 draws at odds 3:1: the count of "a left" has mean 15,000 and standard deviation
        // sqrt(20000 * 0.75 * 0.25) = 61; 5 standard deviations is 306.
        let mut rng = BanditRng::seed_from_u64(7);
        let n = 20_000;
        let hits = (0..n).filter(|_| a_was_left(3.0, 1.0, &mut rng)).count() as f64;
        assert!((hits - 15_000.0).abs() < 306.0, "{hits}");
        assert!((0..100).all(|_| a_was_left(1.0, 0.0, &mut rng)));
        assert!((0..100).all(|_| !a_was_left(0.0, 1.0, &mut rng)));
        let coin = (0..n).filter(|_| a_was_left(0.0, 0.0, &mut rng)).count() as f64;
        assert!((coin - 10_000.0).abs() < 354.0, "{coin}");
    }
}
