//! Upper tails of Beta(a, b) for a, b >= 1: the tail probability P(X > u), a threshold with a
//! small tail, and exact draws from the tail X | X > u and the body X | X <= u.
//!
//! Used by [`super::thompson_argmax`] to skip arms whose draw cannot be the largest. Everything
//! here is a deterministic function of (a, b) and u, so a cache rebuilt from a stored state equals
//! the one it replaces bit for bit.
//!
//! The tail probability is the regularized incomplete beta function I_{1-u}(b, a), evaluated by
//! its continued fraction (modified Lentz) on the side where it converges, with the prefactor
//! x^a (1 - x)^b / (a B(a, b)) written through Stirling's error terms (as Loader's binomial
//! densities do), so it keeps its relative precision for counts in the millions instead of
//! cancelling between ln Gamma values of order 10^7.

use rand::Rng;

use super::beta::sample_beta;

const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// ln Gamma(z) for z > 0: Stirling's series from z >= 10, the recurrence below it.
pub fn ln_gamma(z: f64) -> f64 {
    let mut shift = 0.0;
    let mut z = z;
    while z < 10.0 {
        shift += z.ln();
        z += 1.0;
    }
    (z - 0.5) * z.ln() - z + LN_SQRT_2PI + stirling_error(z) - shift
}

/// ln Gamma(z) - ((z - 1/2) ln z - z + ln sqrt(2 pi)) for z > 0.
fn stirling_error(z: f64) -> f64 {
    if z < 10.0 {
        return ln_gamma(z) - ((z - 0.5) * z.ln() - z + LN_SQRT_2PI);
    }
    let r = 1.0 / z;
    let r2 = r * r;
    r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 * (1.0 / 1260.0 - r2 * (1.0 / 1680.0 - r2 / 1188.0))))
}

/// ln(x^a (1 - x)^b / B(a, b)), accurate for large a and b.
fn ln_prefactor(a: f64, b: f64, x: f64) -> f64 {
    let n = a + b;
    let (p, q) = (a / n, b / n);
    // a ln(x / p) + b ln((1 - x) / q), each as ln_1p of a relative deviation.
    let kl = a * ((x - p) / p).ln_1p() + b * ((q - (1.0 - x)) / -q).ln_1p();
    kl + 0.5 * (a * b / n).ln() - LN_SQRT_2PI - stirling_error(a) - stirling_error(b)
        + stirling_error(n)
}

/// Most continued-fraction terms allowed; it needs about sqrt(max(a, b)) near the mean.
const MAX_TERMS: usize = 20_000;

/// I_x(a, b) by the continued fraction, valid (fast) when x < (a + 1) / (a + b + 2). `None` if
/// it did not converge.
fn incomplete_beta_cf(a: f64, b: f64, x: f64) -> Option<f64> {
    const TINY: f64 = 1e-300;
    let nonzero = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / nonzero(1.0 - qab * x / qap);
    let mut h = d;
    // One step of the modified Lentz method with coefficient `aa`: the factor it applies to h.
    let mut lentz = |aa: f64| {
        d = 1.0 / nonzero(1.0 + aa * d);
        c = nonzero(1.0 + aa / c);
        d * c
    };
    for m in 1..=MAX_TERMS {
        let m = m as f64;
        let m2 = 2.0 * m;
        h *= lentz(m * (b - m) * x / ((qam + m2) * (a + m2)));
        let del = lentz(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)));
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            return Some((ln_prefactor(a, b, x).exp() * h / a).clamp(0.0, 1.0));
        }
    }
    None
}

/// P(X > u) for X ~ Beta(a, b), a, b >= 1, when u is at or above (a + 1) / (a + b + 2) (about
/// the mean), where the upper tail is computed directly without cancellation. `None` below that
/// or when the continued fraction did not converge.
pub fn upper_tail(a: f64, b: f64, u: f64) -> Option<f64> {
    if u >= 1.0 {
        return Some(0.0);
    }
    if u < (a + 1.0) / (a + b + 2.0) || u <= 0.0 {
        return None;
    }
    // P(X > u) = I_{1-u}(b, a), and 1 - u < (b + 1) / (a + b + 2): the convergent side.
    incomplete_beta_cf(b, a, 1.0 - u)
}

/// A threshold u < 1 with P(Beta(a, b) > u) <= `eps`, and that probability: u starts a normal
/// quantile above the mean (aiming at eps / 2) and moves away from the mean by half its distance
/// again until the tail is small enough. `None` when no such threshold was found (the caller then
/// draws the arm in full).
pub fn small_tail_threshold(a: f64, b: f64, eps: f64) -> Option<(f64, f64)> {
    let z = normal_upper_quantile(0.5 * eps);
    let (mean, mut u, _) = first_threshold(a, b, eps, z);
    for _ in 0..64 {
        let q = upper_tail(a, b, u)?;
        if q <= eps {
            return (u < 1.0).then_some((u, q));
        }
        u = (mean + 1.5 * (u - mean)).min(0.5 * (u + 1.0));
    }
    None
}

/// The mean of Beta(a, b), the first threshold [`small_tail_threshold`] tries, and the standard
/// deviation.
#[inline]
fn first_threshold(a: f64, b: f64, eps: f64, z: f64) -> (f64, f64, f64) {
    let n = a + b;
    let mean = a / n;
    let sd = (a * b / (n * n * (n + 1.0))).sqrt();
    let ceiling = 1.0 - (1.0 - mean) * 0.5 * eps;
    let floor = (a + 1.0) / (n + 2.0);
    (mean, (mean + z * sd).clamp(floor, ceiling), sd)
}

/// Largest a + b for which [`LazyThresholds`] trusts the continued fraction to
/// converge (it needs about sqrt(max(a, b)) of its [`MAX_TERMS`] terms near the mean).
const LAZY_MAX_COUNT: f64 = 4e6;

/// Relative margin of the tail bounds around the computed tail, for rounding in both.
const BOUND_MARGIN: f64 = 1e-3;

/// Bounds on P(X > u) for X ~ Beta(a, b), a, b >= 1, 0 < u < 1 above the mode, from the
/// concavity of the log-density g: its tangent at u bounds it above on [u, 1], its chord from u
/// to v = u + `step` (less than 1) below on [u, v]. The bounds are the integrals of their
/// exponentials, f(u) (1 - e^{s (1 - u)}) / -s with s = g'(u) < 0, and
/// f(u) (v - u) (1 - e^{d}) / -d with d = g(v) - g(u). At z standard deviations above the mean
/// and a step of one, they are about 1 + 1/z^2 and 0.9 times the tail, at the cost of a density
/// (a few logarithms) instead of a continued fraction. `None` unless s < 0.
///
/// This returns the tangent bound, and what the chord bound needs ([`LowerBound`]): the chord
/// costs two more logarithms and is read only by a draw that lands below the tangent bound, so
/// it waits for one.
fn upper_tail_above(a: f64, b: f64, u: f64, step: f64) -> Option<(f64, LowerBound)> {
    if u.is_nan() || u <= 0.0 || u >= 1.0 {
        return None;
    }
    let slope = (a - 1.0) / u - (b - 1.0) / (1.0 - u);
    if slope.is_nan() || slope >= 0.0 {
        return None;
    }
    // x^a (1 - x)^b / B(a, b) divided by x (1 - x) is the density.
    let density = (ln_prefactor(a, b, u) - (u * (1.0 - u)).ln()).exp();
    let exponent = slope * (1.0 - u);
    // Below -40, 1 - e^exponent is 1 to within 1e-17, far inside BOUND_MARGIN (and 1 is above
    // it, so the bound stays one): skips a exp_m1 once the counts are in the hundreds.
    let mass = if exponent < -40.0 {
        1.0
    } else {
        -exponent.exp_m1()
    };
    let lower = LowerBound {
        density,
        step: step.min(0.5 * (1.0 - u)),
    };
    Some((density * mass / -slope, lower))
}

/// What the chord bound of `upper_tail_above` needs beyond (a, b, u): the density at u and
/// the step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LowerBound {
    density: f64,
    step: f64,
}

impl LowerBound {
    /// The chord bound on P(X > u).
    fn below(&self, a: f64, b: f64, u: f64) -> f64 {
        let step = self.step;
        let d = (a - 1.0) * (step / u).ln_1p() + (b - 1.0) * (-step / (1.0 - u)).ln_1p();
        if d < 0.0 {
            self.density * step * -d.exp_m1() / -d
        } else {
            self.density * step
        }
    }

    /// A lower bound on the tail probability of [`Tail::Within`], with the margin for rounding
    /// (the same (a, b) and u it was given with).
    pub fn at_least(&self, a: f64, b: f64, u: f64) -> f64 {
        self.below(a, b, u) * (1.0 - BOUND_MARGIN)
    }
}

/// What [`LazyThresholds`] knows of a threshold's tail probability.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tail {
    /// The tail probability [`small_tail_threshold`] gives.
    Exact(f64),
    /// Not computed: it is `upper_tail(a, b, u)`, at most this (at most eps), and at least
    /// [`LowerBound::at_least`].
    Within(f64, LowerBound),
}

/// [`small_tail_threshold`] for one eps (its normal quantile computed once), lazy about the
/// tail probability: see [`LazyThresholds::threshold`].
#[derive(Clone, Copy, Debug)]
pub struct LazyThresholds {
    eps: f64,
    z: f64,
}

impl LazyThresholds {
    pub fn new(eps: f64) -> Self {
        LazyThresholds {
            eps,
            z: normal_upper_quantile(0.5 * eps),
        }
    }

    /// [`small_tail_threshold`]'s threshold, the same bit for bit, without computing its tail
    /// probability when a bound shows that the first threshold tried has a tail below eps (the
    /// common case once the counts are in the tens): then the answer is `(u, Tail::Within(..))`
    /// and the probability is `upper_tail(a, b, u)`, computed by the caller only if it needs it.
    /// Otherwise the answer is [`small_tail_threshold`]'s, with `Tail::Exact`.
    pub fn threshold(&self, a: f64, b: f64) -> Option<(f64, Tail)> {
        lazy_threshold(a, b, self.eps, self.z)
    }
}

fn lazy_threshold(a: f64, b: f64, eps: f64, z: f64) -> Option<(f64, Tail)> {
    let (mean, u, sd) = first_threshold(a, b, eps, z);
    if a + b <= LAZY_MAX_COUNT
        && u < 1.0
        && u >= (a + 1.0) / (a + b + 2.0)
        && u > mean
        && let Some((above, lower)) = upper_tail_above(a, b, u, sd)
    {
        let at_most = above * (1.0 + BOUND_MARGIN);
        if at_most <= eps {
            return Some((u, Tail::Within(at_most, lower)));
        }
    }
    small_tail_threshold(a, b, eps).map(|(u, q)| (u, Tail::Exact(q)))
}

/// z with P(N(0, 1) > z) = p, for small p (Acklam's rational approximation of the tail, relative
/// error below 1.2e-9; only a starting point here).
fn normal_upper_quantile(p: f64) -> f64 {
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-300, 0.02425);
    let q = (-2.0 * p.ln()).sqrt();
    -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
        / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
}

/// An exact draw of X ~ Beta(a, b) given X > u (a, b >= 1, 0 < u < 1). The log-density
/// g(x) = (a - 1) ln x + (b - 1) ln(1 - x) is concave, so its tangent at u bounds it on [u, 1]:
/// draw from the truncated exponential of that tangent and accept with exp(g(x) - tangent(x)).
pub fn sample_upper_tail<R: Rng + ?Sized>(a: f64, b: f64, u: f64, rng: &mut R) -> f64 {
    let g = |x: f64| (a - 1.0) * x.ln() + (b - 1.0) * (-x).ln_1p();
    let slope = (a - 1.0) / u - (b - 1.0) / (1.0 - u);
    let width = 1.0 - u;
    let gu = g(u);
    loop {
        let v: f64 = rng.random();
        let x = if (slope * width).abs() < 1e-12 {
            u + v * width
        } else {
            u + (v * (slope * width).exp_m1()).ln_1p() / slope
        };
        if x <= u || x >= 1.0 {
            continue;
        }
        let accept = (g(x) - gu - slope * (x - u)).exp();
        if rng.random::<f64>() < accept {
            return x;
        }
    }
}

/// An exact draw of X ~ Beta(a, b) given X <= u: draws of X until one is at most u (the caller
/// keeps P(X > u) small, so this almost always takes one draw).
pub fn sample_body<R: Rng + ?Sized>(a: f64, b: f64, u: f64, rng: &mut R) -> f64 {
    loop {
        let x = sample_beta(a, b, rng);
        if x <= u {
            return x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::BanditRng;
    use rand::SeedableRng;

    #[test]
    fn ln_gamma_matches_factorials_and_half_integers() {
        let mut factorial = 1.0f64;
        for n in 1..30u32 {
            let got = ln_gamma(n as f64);
            assert!(
                (got - factorial.ln()).abs() < 1e-13 * factorial.ln().max(1.0),
                "{n}"
            );
            factorial *= n as f64;
        }
        // Gamma(1/2) = sqrt(pi), Gamma(7/2) = 15 sqrt(pi) / 8.
        let ln_sqrt_pi = 0.5 * std::f64::consts::PI.ln();
        assert!((ln_gamma(0.5) - ln_sqrt_pi).abs() < 1e-14);
        assert!((ln_gamma(3.5) - (15.0f64 / 8.0).ln() - ln_sqrt_pi).abs() < 1e-14);
    }

    #[test]
    fn upper_tail_matches_binomial_sums_for_integer_parameters() {
        // For integers, P(Beta(a, b) > u) = P(Binomial(a + b - 1, u) <= a - 1), summed exactly.
        for (a, b) in [(1u64, 1u64), (2, 5), (10, 3), (40, 60), (300, 200), (1, 50)] {
            for u in [0.6, 0.75, 0.9, 0.97] {
                if u < (a + 1) as f64 / (a + b + 2) as f64 {
                    continue;
                }
                let n = a + b - 1;
                let mut sum = 0.0;
                for k in 0..a {
                    let ln_c = ln_gamma((n + 1) as f64)
                        - ln_gamma((k + 1) as f64)
                        - ln_gamma((n - k + 1) as f64);
                    sum += (ln_c + k as f64 * u.ln() + (n - k) as f64 * (1.0 - u).ln()).exp();
                }
                let got = upper_tail(a as f64, b as f64, u).unwrap();
                assert!(
                    (got - sum).abs() <= 1e-11 * sum.max(1e-300),
                    "a={a} b={b} u={u}: {got} vs {sum}"
                );
            }
        }
    }

    #[test]
    fn upper_tail_is_symmetric_with_the_lower_tail_at_large_counts() {
        // P(Beta(a, a) > 1/2 + d) = P(Beta(a, a) < 1/2 - d); at a = 1e6, d = 3 sd the tail is
        // Phi(-3) = 0.00135 (normal limit, skewness 0).
        let a: f64 = 1e6;
        let sd = (a * a / (4.0 * a * a * (2.0 * a + 1.0))).sqrt();
        let q = upper_tail(a, a, 0.5 + 3.0 * sd).unwrap();
        assert!((q - 0.001_349_9).abs() < 2e-6, "{q}");
    }

    #[test]
    fn thresholds_have_small_tails() {
        for (a, b) in [
            (1.0, 1.0),
            (1.5, 7.0),
            (30.0, 2.0),
            (5e4, 4.9e4),
            (2.5, 2e5),
        ] {
            let (u, q) =
                small_tail_threshold(a, b, 1.0 / 256.0).unwrap_or_else(|| panic!("a={a} b={b}"));
            assert!(q > 1e-6 && q <= 1.0 / 256.0, "a={a} b={b}: u={u} q={q}");
            assert_eq!(upper_tail(a, b, u), Some(q));
        }
    }

    #[test]
    fn lazy_thresholds_equal_the_computed_ones_and_bound_their_tails() {
        // Counts from 1 to LAZY_MAX_COUNT on a log grid, half-integers included (self-duels).
        let grid: Vec<f64> = (0..=44)
            .map(|i| (10f64.powf(i as f64 * 6.6 / 44.0) * 2.0).round() / 2.0)
            .map(|x| x.max(1.0))
            .collect();
        let mut lazy = 0;
        for &a in &grid {
            for &b in &grid {
                if a + b > LAZY_MAX_COUNT {
                    continue;
                }
                for eps in [1.0 / 64.0, 1.0 / 256.0] {
                    let exact = small_tail_threshold(a, b, eps);
                    match LazyThresholds::new(eps).threshold(a, b) {
                        Some((u, Tail::Within(at_most, lower))) => {
                            lazy += 1;
                            let at_least = lower.at_least(a, b, u);
                            let (v, q) = exact.unwrap_or_else(|| panic!("a={a} b={b}"));
                            assert_eq!(u.to_bits(), v.to_bits(), "a={a} b={b}");
                            assert_eq!(upper_tail(a, b, u), Some(q));
                            let bounds = format!("a={a} b={b}: {at_least} {q} {at_most}");
                            assert!(at_least <= q && q <= at_most && at_most <= eps, "{bounds}");
                            assert!(at_most < 2.0 * q && at_least > 0.5 * q, "{bounds}");
                        }
                        Some((u, Tail::Exact(q))) => assert_eq!(exact, Some((u, q))),
                        None => assert_eq!(exact, None),
                    }
                }
            }
        }
        assert!(lazy > 2_500, "{lazy}");
    }

    #[test]
    fn tail_and_body_draws_follow_the_conditional_distributions() {
        // Beta(3, 9) given X > u = 0.5: P(X > 0.7 | X > 0.5) = tail(0.7) / tail(0.5). 40,000
        // draws give a frequency with standard error at most sqrt(0.25 / 40000) = 0.0025; 5
        // sigma is 0.0125. Likewise for the body given X <= 0.5, at 0.2.
        let mut rng = BanditRng::seed_from_u64(5);
        let (a, b, u) = (3.0, 9.0, 0.5);
        let tail_u = upper_tail(a, b, u).unwrap();
        let draws = 40_000;
        let above = (0..draws)
            .filter(|_| sample_upper_tail(a, b, u, &mut rng) > 0.7)
            .count() as f64;
        let want = upper_tail(a, b, 0.7).unwrap() / tail_u;
        assert!(
            (above / draws as f64 - want).abs() < 0.0125,
            "{above} {want}"
        );
        // P(X > 0.2 | X <= 0.5) = (P(X > 0.2) - P(X > 0.5)) / (1 - P(X > 0.5)); P(X > 0.2) is
        // below the mean side, so by the binomial identity: P(Bin(11, 0.2) <= 2).
        let p_above_02: f64 = (0..3u32)
            .map(|k| {
                let c = [1.0, 11.0, 55.0][k as usize];
                c * 0.2f64.powi(k as i32) * 0.8f64.powi(11 - k as i32)
            })
            .sum();
        let want = (p_above_02 - tail_u) / (1.0 - tail_u);
        let above = (0..draws)
            .filter(|_| sample_body(a, b, u, &mut rng) > 0.2)
            .count() as f64;
        assert!(
            (above / draws as f64 - want).abs() < 0.0125,
            "{above} {want}"
        );
    }
}
