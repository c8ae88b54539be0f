//! The relative upper confidence bound of RUCB (zoghi-2014, Algorithm 1, line 3):
//!
//! u_ij = w_ij / n_ij + sqrt(alpha * L / n_ij),  n_ij = w_ij + w_ji,
//!
//! where L is the log term (ln t for RUCB and DTS, ln(t + C) for the Merge policies), and x/0 := 1:
//! a pair never compared has u_ij = 1, the largest value a probability can take (the literal
//! element-wise reading, 1 + 1 = 2, would make unexplored pairs outrank any explored one with a
//! bonus below 1; we read it as "maximally optimistic").
//!
//! Deciding whether u_ij < 1/2 does not need the square root: with mu = w_ij / n_ij < 1/2,
//! u_ij < 1/2 iff L < n_ij (1/2 - mu)^2 / alpha. That threshold depends only on the counts, so it can
//! be cached per pair and compared with the (growing) log term at every step.

/// u_ij from the evidence `score` (wins of i over j) and `count` (comparisons of i and j).
#[inline]
pub fn ucb(score: f64, count: f64, alpha: f64, log_term: f64) -> f64 {
    if count <= 0.0 {
        1.0
    } else {
        score / count + (alpha * log_term / count).sqrt()
    }
}

/// The log-term threshold of a pair: u_ij < 1/2 exactly when `log_term < threshold`, and
/// u_ij > 1/2 exactly when `log_term > threshold`. Pairs whose mean is at least 1/2 (or that were
/// never compared) have threshold -infinity for "u_ij >= 1/2 always"; a mean of exactly 1/2 gives 0.
#[inline]
pub fn threshold(score: f64, count: f64, alpha: f64) -> f64 {
    if count <= 0.0 {
        return f64::NEG_INFINITY;
    }
    let gap = 0.5 - score / count;
    if gap < 0.0 {
        f64::NEG_INFINITY
    } else {
        count * gap * gap / alpha
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unexplored_pairs_are_maximally_optimistic() {
        assert_eq!(ucb(0.0, 0.0, 0.51, 3.0), 1.0);
        assert_eq!(threshold(0.0, 0.0, 0.51), f64::NEG_INFINITY);
    }

    #[test]
    fn threshold_agrees_with_the_bound() {
        let alpha = 0.51;
        for (s, n) in [
            (1.0, 10.0),
            (3.0, 10.0),
            (40.0, 100.0),
            (0.0, 3.0),
            (7.0, 9.0),
        ] {
            let th = threshold(s, n, alpha);
            for log_term in [0.0, 0.5, 1.0, 2.0, 5.0, 20.0] {
                let below = ucb(s, n, alpha, log_term) < 0.5;
                assert_eq!(below, log_term < th, "s={s} n={n} L={log_term}");
            }
        }
    }
}
