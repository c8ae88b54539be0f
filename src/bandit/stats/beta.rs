//! Exact P(Beta(a, b) > 1/2) for integer a, b >= 1.
//!
//! Thompson-sampling tournaments (MergeDTS, DTS) only look at whether a sampled preference
//! theta ~ Beta(a, b) exceeds 1/2. For integer parameters that probability has a closed form:
//! Beta(a, b) is the a-th order statistic of a + b - 1 uniforms, so theta > 1/2 exactly when at
//! most a - 1 of those uniforms fall below 1/2, i.e.
//!
//! P(Beta(a, b) > 1/2) = P(Binomial(a + b - 1, 1/2) <= a - 1).
//!
//! Drawing a Bernoulli with this probability has the same distribution as drawing theta and
//! comparing it with 1/2, at the cost of one uniform. The binomial probabilities are computed with
//! Loader's saddle-point method (Stirling error terms and deviance), which keeps full relative
//! precision for counts in the millions, where naive `C(n, k) / 2^n` overflows or cancels.
//!
//! When a count grows by one the probability changes by a single binomial term, so caches update
//! it in O(1) ([`prob_above_half_step`]) instead of summing a tail again.

use rand::Rng;
use rand_distr::{Beta, Distribution, Gamma};

const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// ln(n!) - ln(sqrt(2 pi n) (n / e)^n), the error of Stirling's formula, for integer n >= 1.
fn stirling_error(n: f64) -> f64 {
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    if n <= 15.0 {
        // n! is exact in f64 here; the subtraction loses at most a few ulps of ln(n!).
        let mut factorial = 1.0;
        let mut i = 2.0;
        while i <= n {
            factorial *= i;
            i += 1.0;
        }
        return factorial.ln() - 0.5 * (LN_2PI + n.ln()) - n * n.ln() + n;
    }
    let nn = n * n;
    if n > 500.0 {
        (S0 - S1 / nn) / n
    } else if n > 80.0 {
        (S0 - (S1 - S2 / nn) / nn) / n
    } else if n > 35.0 {
        (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / n
    } else {
        (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n
    }
}

/// The deviance term x ln(x / m) + m - x, computed by a series when x is close to m (where the
/// direct formula cancels).
fn deviance(x: f64, m: f64) -> f64 {
    if (x - m).abs() < 0.1 * (x + m) {
        let v = (x - m) / (x + m);
        let v2 = v * v;
        let mut sum = (x - m) * v;
        let mut term = 2.0 * x * v;
        let mut j = 1.0;
        loop {
            term *= v2;
            let next = sum + term / (2.0 * j + 1.0);
            if next == sum {
                return sum;
            }
            sum = next;
            j += 1.0;
        }
    }
    x * (x / m).ln() + m - x
}

/// P(Binomial(n, 1/2) = k).
pub fn binomial_half_pmf(k: u64, n: u64) -> f64 {
    if k > n {
        return 0.0;
    }
    if k == 0 || k == n {
        return (-(n as f64) * std::f64::consts::LN_2).exp();
    }
    let (k, n) = (k as f64, n as f64);
    let half = 0.5 * n;
    let log_core = stirling_error(n)
        - stirling_error(k)
        - stirling_error(n - k)
        - deviance(k, half)
        - deviance(n - k, half);
    let log_scale = LN_2PI + k.ln() + (-k / n).ln_1p();
    (log_core - 0.5 * log_scale).exp()
}

/// Terms smaller than this fraction of the partial sum no longer change an f64 sum.
const TAIL_EPSILON: f64 = 1e-17;

/// P(Beta(a, b) > 1/2) for integers a, b >= 1, summing the smaller binomial tail.
pub fn prob_above_half(a: u64, b: u64) -> f64 {
    assert!(a >= 1 && b >= 1, "Beta parameters must be at least 1");
    let n = a + b - 1;
    let k = a - 1;
    if 2 * k <= n {
        // Lower tail P(X <= k), walking down from k: pmf(i - 1) = pmf(i) * i / (n - i + 1).
        let mut term = binomial_half_pmf(k, n);
        let mut sum = term;
        let mut i = k;
        while i > 0 && term > sum * TAIL_EPSILON {
            term *= i as f64 / (n - i + 1) as f64;
            sum += term;
            i -= 1;
        }
        sum.min(1.0)
    } else {
        // Upper tail P(X >= k + 1), walking up: pmf(i + 1) = pmf(i) * (n - i) / (i + 1).
        let mut i = k + 1;
        let mut term = binomial_half_pmf(i, n);
        let mut sum = term;
        while i < n && term > sum * TAIL_EPSILON {
            term *= (n - i) as f64 / (i + 1) as f64;
            sum += term;
            i += 1;
        }
        (1.0 - sum).max(0.0)
    }
}

/// P(Beta(a, b) > 1/2) after `a` (when `a_grew`) or `b` grew by one, from the value `before` it
/// grew: both directions move the probability by the same binomial term,
/// P(Binomial(a + b - 2, 1/2) = a - 1) / 2, so an update costs O(1). Each step adds an f64
/// rounding error; callers bound the number of steps between exact values
/// ([`super::duel_table`] computes [`prob_above_half`] again every 64 counts).
pub fn prob_above_half_step(before: f64, a: u64, b: u64, a_grew: bool) -> f64 {
    debug_assert!(a >= 1 && b >= 1 && a + b >= 3);
    let term = 0.5 * binomial_half_pmf(a - 1, a + b - 2);
    let p = if a_grew { before + term } else { before - term };
    p.clamp(0.0, 1.0)
}

/// Samples the indicator Beta(a, b) > 1/2 for real parameters (non-integer counts arise when ties
/// count as half a win, where the closed form does not apply).
pub fn sample_above_half<R: Rng + ?Sized>(a: f64, b: f64, rng: &mut R) -> bool {
    sample_beta(a, b, rng) > 0.5
}

/// One draw from Beta(a, b), a, b > 0, as X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b): the same
/// distribution as a direct Beta sampler, and for the parameters Thompson sampling uses (at least
/// 1) about twice as fast, because Marsaglia and Tsang's Gamma sampler rarely needs a logarithm.
pub fn sample_beta<R: Rng + ?Sized>(a: f64, b: f64, rng: &mut R) -> f64 {
    if a < 1.0 || b < 1.0 {
        return Beta::new(a, b)
            .expect("Beta parameters are positive and finite")
            .sample(rng);
    }
    let x = Gamma::new(a, 1.0).expect("shape is positive").sample(rng);
    let y = Gamma::new(b, 1.0).expect("shape is positive").sample(rng);
    x / (x + y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::BanditRng;
    use rand::SeedableRng;

    /// P(Binomial(n, 1/2) <= k) by exact integer binomial coefficients (small n only).
    fn cdf_exact(k: u64, n: u64) -> f64 {
        let mut c: u128 = 1;
        let mut sum: u128 = 0;
        for i in 0..=k {
            sum += c;
            c = c * (n - i) as u128 / (i + 1) as u128;
        }
        sum as f64 / 2f64.powi(n as i32)
    }

    #[test]
    fn matches_exact_binomial_tails_for_small_counts() {
        for a in 1..60u64 {
            for b in 1..60u64 {
                let exact = cdf_exact(a - 1, a + b - 1);
                let got = prob_above_half(a, b);
                assert!((got - exact).abs() < 1e-13, "a={a} b={b}: {got} vs {exact}");
            }
        }
        assert_eq!(prob_above_half(1, 1), 0.5);
        assert!((prob_above_half(2, 1) - 0.75).abs() < 1e-15);
    }

    #[test]
    fn pmf_matches_exact_coefficients() {
        for n in [1u64, 2, 10, 33, 100] {
            let mut c: u128 = 1;
            for k in 0..=n {
                let exact = c as f64 / 2f64.powi(n as i32);
                let got = binomial_half_pmf(k, n);
                assert!(
                    (got - exact).abs() <= 1e-12 * exact,
                    "n={n} k={k}: {got} vs {exact}"
                );
                c = c * (n - k) as u128 / (k + 1) as u128;
            }
        }
    }

    #[test]
    fn symmetric_and_large_counts_stay_accurate() {
        // Beta(a, b) > 1/2 and Beta(b, a) < 1/2 are the same event by symmetry.
        for (a, b) in [
            (5_000u64, 5_100u64),
            (100_000, 99_000),
            (1_000_000, 1_000_500),
            (7, 90_000),
        ] {
            let s = prob_above_half(a, b) + prob_above_half(b, a);
            assert!((s - 1.0).abs() < 1e-12, "a={a} b={b}: sum {s}");
        }
        // Equal parameters: exactly 1/2 by symmetry.
        assert!((prob_above_half(400_000, 400_000) - 0.5).abs() < 1e-12);
        // Normal approximation far from the centre: (a - b) / 2 = 1414 is 2 sd of
        // Binomial(2e6, 1/2) (sd 707.1), so the probability is Phi(2) = 0.97725.
        let (a, b) = (1_001_414u64, 998_586u64);
        let p = prob_above_half(a, b);
        assert!((p - 0.977_25).abs() < 1e-3, "{p}");
    }

    #[test]
    fn steps_follow_the_direct_value() {
        // 63 steps from an exact value (what the duel table allows between exact values) stay
        // within 2^-40 of the direct value; the duel table's guard is 2^-38. Checked after every
        // step of 200,000, restarting from the exact value every 64 counts as the table does.
        let mut rng = BanditRng::seed_from_u64(3);
        let (mut a, mut b) = (1u64, 1u64);
        let mut p = prob_above_half(a, b);
        let mut worst = 0f64;
        for _ in 0..200_000 {
            let a_grows = rng.random::<f64>() < 0.503;
            if a_grows {
                a += 1;
            } else {
                b += 1;
            }
            let direct = prob_above_half(a, b);
            p = if (a + b) % 64 == 0 {
                direct
            } else {
                prob_above_half_step(p, a, b, a_grows)
            };
            worst = worst.max((p - direct).abs());
        }
        assert!(worst < 2f64.powi(-40), "a={a} b={b}: worst error {worst:e}");
    }

    #[test]
    fn sampled_indicator_agrees_with_the_exact_probability() {
        // 20,000 draws: the standard error of a frequency near 0.8 is 0.0028; 5 sigma is 0.014.
        let mut rng = BanditRng::seed_from_u64(11);
        let (a, b) = (9.0, 5.0);
        let hits = (0..20_000)
            .filter(|_| sample_above_half(a, b, &mut rng))
            .count();
        let freq = hits as f64 / 20_000.0;
        let exact = prob_above_half(9, 5);
        assert!((freq - exact).abs() < 0.014, "{freq} vs {exact}");
    }

    #[test]
    fn beta_samples_have_the_right_mean_and_variance() {
        // Beta(3, 7): mean 0.3, variance ab / ((a+b)^2 (a+b+1)) = 21 / 1100 = 0.019091. With
        // 40,000 draws the sample mean has sd sqrt(0.019091 / 40000) = 0.00069 (5 sd: 0.0035);
        // the sample variance has sd about 0.00012 (fourth moment of a bounded variable; 5 sd:
        // 0.0006).
        let mut rng = BanditRng::seed_from_u64(12);
        let draws: Vec<f64> = (0..40_000)
            .map(|_| sample_beta(3.0, 7.0, &mut rng))
            .collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / draws.len() as f64;
        assert!((mean - 0.3).abs() < 0.0035, "{mean}");
        assert!((var - 21.0 / 1100.0).abs() < 0.0006, "{var}");
    }
}
