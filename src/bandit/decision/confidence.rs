//! Anytime-valid confidence sequences for one pair's preference P(i beats j).
//!
//! **Which.** Robbins' normal-mixture boundary for sub-Gaussian increments, in the form of
//! Howard, Ramdas, McAuliffe and Sekhon (2021), "Time-uniform, nonparametric, nonasymptotic
//! confidence sequences", Annals of Statistics 49(2), eq. (14) with the two-sided mixture: one
//! comparison of `i` with `j` is an observation in [0, 1] (1 a win of `i`, 0 a loss, 1/2 a tie
//! when ties count as half a win), hence sub-Gaussian with variance proxy 1/4 (Hoeffding's lemma),
//! so after `n` comparisons with score `S` and intrinsic time `V = n / 4`,
//!
//! ```text
//!     |S - n p|  <  sqrt( (V + rho) * (2 ln(1/alpha) + ln((V + rho) / rho)) )   for all n >= 1
//! ```
//!
//! with probability at least 1 - alpha, because exp(lambda (S - n p) - lambda^2 V / 2) mixed over
//! lambda ~ N(0, 1/rho) is a nonnegative supermartingale and Ville's inequality bounds its
//! crossing of 1/alpha at any time.
//!
//! **Why this one.** It is valid however often anyone looks and whatever the policy chose: the
//! supermartingale advances only when the pair is compared, and each comparison's outcome, given
//! everything before it (including the policy's choice to compare this pair), has mean p. A
//! fixed-sample Hoeffding interval, which the champion report used before, is not: polled
//! repeatedly it crosses far more often than its nominal level. Among anytime boundaries it is the
//! simplest closed form, within a few percent of the stitched boundaries near the time it is
//! tuned for, and it grows like sqrt(n ln n) rather than the sqrt(n ln ln n) of stitching only far
//! from that time; a beta-binomial mixture would be tighter only for preferences far from 1/2,
//! which separate quickly anyway. Closeness to 1/2 is what costs comparisons.
//!
//! **One side is enough for a Condorcet decision.** Mixing over lambda >= 0 only (a half-normal
//! of precision rho; Howard et al. 2021, Proposition 6) bounds one side, S - n p, at error alpha:
//! the mixture is 2 sqrt(rho / (V + rho)) exp(S^2 / (2 (V + rho))) Phi(S / sqrt(V + rho)), and
//! with Phi at the crossing at least Phi_0 = 1 - 2 alpha / (x_0 sqrt(2 pi)), x_0 =
//! sqrt(2 ln(1 / (2 alpha))) (the Mills-ratio bound, at the smallest S where it can cross), the
//! margin above with 2 ln(1 / (2 alpha Phi_0)) in place of 2 ln(1 / alpha) is crossed at most
//! with probability alpha ([`Boundary::one_sided`]): the two-sided boundary at about 2 alpha,
//! some 8% fewer comparisons at the error split below.
//!
//! **Union.** Which pairs a decision reads depends on the data (whatever champion they pick), but
//! the pairs whose error makes a Condorcet decision wrong do not: naming arm c wrongly needs
//! c's lower bound above 1/2 - epsilon against one rival j_c that in truth beats it by more than
//! epsilon (fix one such j_c per arm from the true matrix; with a Condorcet winner w, j_c = w).
//! That is one crossing of one side (c looks better than it is) of one of K fixed sequences, so
//! splitting [`CONDORCET_SHARE`] of delta over K one-sided sequences bounds the probability
//! that *any* Condorcet decision, whichever arm the data name, is ever wrong by that share of
//! delta ([`Boundary::condorcet`]); the same event covers "the Condorcet winner is confidently
//! beaten" (j's lower bound against w above 1/2 is the same side of the pair (j, w)), so it
//! stays among the possible best. A Copeland decision reads both sides of every pair, so it
//! splits the rest of delta over all K (K - 1) / 2 pairs with the two-sided boundary
//! ([`Boundary::all_pairs`]). Together (a union bound over the two events): wrong with
//! probability at most delta, whatever the matrix, however often anyone looks and whatever the
//! sampling.
//!
//! **Why the split is uneven.** What a decision costs grows with the logarithm of the inverse
//! of its share of delta. The Condorcet decision is the one asked for by default and the one a
//! matrix with a winner is decided by, and its boundary is the narrow one (K one-sided
//! sequences), so it gets most: at 0.9 instead of 0.5 its logarithm is ln(1.8) = 0.59 nats
//! smaller, 5-6% fewer comparisons at 136 rankers and 10% at 5 ([`Boundary::comparisons_for`]
//! at the gaps of docs/decisions.md). The Copeland decision, whose union runs
//! over K^2 / 2 pairs, pays ln 5 = 1.6 nats more on a logarithm of 10 to 16 nats (K from 5 to
//! 136): 10 to 16% more comparisons where there is no Condorcet winner.
//!
//! **Two scales.** rho sets the intrinsic time at which a normal mixture is tightest (for a given
//! alpha, the first-order condition is x - ln(1 + x) = 2 ln(1/alpha) with x = V / rho), and away
//! from it the margin grows by about ln(V / rho) / 2 nats. Most of a decision's comparisons are
//! of rivals 10^3 to 10^4 comparisons from separating, where one mixture tuned for 10^3 is
//! within a few percent of the best a single mixture can do; but a clearly worse rival separates
//! within 30 to 100 comparisons, where that mixture needs 1.7 to 3.8 times what the oracle
//! spends (gaps 0.2 to 0.4, 4 to 16 arms), and where most rivals are clearly worse (a long tail
//! of bad rankers, or a few rankers at a margin of 0.1) those comparisons are most of the
//! decision. So the boundary is the tighter of two normal mixtures: one tuned for
//! [`SCALES`]`[0]` comparisons at error probability alpha w_0, one for [`SCALES`]`[1]` at
//! alpha w_1 (w_0 + w_1 = 1). Crossing the tighter means crossing one of them, so by the union
//! bound the pair crosses with probability at most alpha w_0 + alpha w_1 = alpha, each mixture
//! being valid on its own as above. Both are fixed before any data, so validity does not depend
//! on them. What the split costs where the 10^3 mixture rules is ln(1 / w_1) = 0.22 nats on the
//! log term, 2 to 5% more comparisons; what it gains at a gap of 0.4 is 1.5 to 1.75 times fewer
//! (4 to 64 arms; 16 arms: 1.81x the oracle's comparisons against 2.97x). Chosen on seed 1 matrices against a
//! single mixture and the pairs (150, 15,000) and (80, 2,000) by the largest median decision
//! step over the oracle cost (docs/decisions.md).

/// The two scales of the boundary: comparisons of one pair at which each normal mixture is
/// tightest, and its share of the error probability (see the module docs for why these).
pub const SCALES: [(f64, f64); 2] = [(60.0, 0.2), (1_000.0, 0.8)];

/// The share of delta given to the Condorcet decision (the rest goes to the Copeland one); why
/// this much: the module docs.
pub const CONDORCET_SHARE: f64 = 0.9;

/// ln of the error probability of each of `sequences` confidence sequences when `share` of
/// `delta` is split over them. In logarithms: the share can be below the smallest `f64` (a
/// `delta` of 5e-324 times 0.1 is 0), its logarithm cannot.
fn split_ln(delta: f64, share: f64, sequences: usize) -> f64 {
    delta.ln() + share.ln() - (sequences.max(1) as f64).ln()
}

/// One normal mixture: margin sqrt((V + rho) (log_term + ln((V + rho) / rho))), V = n / 4.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mixture {
    /// 2 ln(1 / alpha) for the two-sided mixture, its one-sided counterpart otherwise.
    log_term: f64,
    rho: f64,
}

impl Mixture {
    /// The mixture with this log term, tightest at `tuned` comparisons.
    fn tuned(log_term: f64, tuned: f64) -> Self {
        // Solve x - ln(1 + x) = log_term by Newton's method (convex, increasing for x > 0).
        let mut x = log_term + (1.0 + log_term).ln();
        for _ in 0..50 {
            let f = x - (1.0 + x).ln() - log_term;
            let step = f * (1.0 + x) / x;
            x -= step;
            if step.abs() < 1e-12 * x {
                break;
            }
        }
        Mixture {
            log_term,
            rho: tuned / 4.0 / x,
        }
    }

    /// The two-sided log term 2 ln(1 / alpha), from ln(alpha).
    fn two_sided_term(ln_alpha: f64) -> f64 {
        -2.0 * ln_alpha
    }

    /// The one-sided log term at ln(alpha) (see the module docs): 2 ln(1 / (2 alpha Phi_0)).
    /// Above alpha 1/4 (no decision asks for it) the two-sided term, valid for each side too.
    fn one_sided_term(ln_alpha: f64) -> f64 {
        if ln_alpha >= 0.25f64.ln() {
            return Mixture::two_sided_term(ln_alpha);
        }
        let ln_two_alpha = std::f64::consts::LN_2 + ln_alpha;
        let x0 = (-2.0 * ln_two_alpha).sqrt();
        // 2 alpha may be 0 as an f64 here: phi0 is then 1, as it tends to.
        let phi0 = 1.0 - ln_two_alpha.exp() / (x0 * (2.0 * std::f64::consts::PI).sqrt());
        -2.0 * (ln_two_alpha + phi0.ln())
    }

    /// The margin itself (the boundary takes the square root once, of the smaller square).
    #[cfg(test)]
    fn margin(&self, n: f64) -> f64 {
        self.margin_squared(n).sqrt()
    }

    #[inline]
    fn margin_squared(&self, n: f64) -> f64 {
        let v = n / 4.0 + self.rho;
        v * (self.log_term + (v / self.rho).ln())
    }
}

/// The two-scale normal-mixture boundary at one error probability (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Boundary {
    scales: [Mixture; 2],
}

impl Boundary {
    /// The boundary at error probability `alpha` (two-sided).
    pub fn new(alpha: f64) -> Self {
        Boundary::new_ln(alpha.ln())
    }

    /// [`Boundary::new`] from `ln(alpha)` (see [`split_ln`]).
    fn new_ln(ln_alpha: f64) -> Self {
        Boundary::split(ln_alpha, Mixture::two_sided_term)
    }

    /// The boundary of one side at error probability `alpha` (see the module docs): crossed
    /// upwards by S - n p, or downwards, each with probability at most `alpha`.
    pub fn one_sided(alpha: f64) -> Self {
        Boundary::one_sided_ln(alpha.ln())
    }

    /// [`Boundary::one_sided`] from `ln(alpha)` (see [`split_ln`]).
    fn one_sided_ln(ln_alpha: f64) -> Self {
        Boundary::split(ln_alpha, Mixture::one_sided_term)
    }

    /// The mixtures of [`SCALES`], each at its share of alpha, with `term` giving the log term
    /// from ln(alpha w).
    fn split(ln_alpha: f64, term: fn(f64) -> f64) -> Self {
        Boundary {
            scales: SCALES.map(|(tuned, share)| Mixture::tuned(term(ln_alpha + share.ln()), tuned)),
        }
    }

    /// The boundary of the Condorcet decision, the possible-best set and the champion report:
    /// [`CONDORCET_SHARE`] of delta split over `k` one-sided sequences.
    pub fn condorcet(delta: f64, k: usize) -> Self {
        Boundary::one_sided_ln(split_ln(delta, CONDORCET_SHARE, k))
    }

    /// The boundary of the Copeland decision: the rest of delta split over the pairs of `k`
    /// arms.
    pub fn all_pairs(delta: f64, k: usize) -> Self {
        Boundary::new_ln(split_ln(
            delta,
            1.0 - CONDORCET_SHARE,
            k * k.saturating_sub(1) / 2,
        ))
    }

    /// `n` times the radius: the margin |score - n p| must exceed (0 with no comparisons); the
    /// tighter of the two scales' margins.
    #[inline]
    pub fn margin(&self, n: f64) -> f64 {
        if n <= 0.0 {
            return 0.0;
        }
        // One square root for both: it is monotone, so the smaller square gives the smaller root.
        let [a, b] = &self.scales;
        a.margin_squared(n).min(b.margin_squared(n)).sqrt()
    }

    /// Half-width of the confidence interval for the preference after `n` comparisons (infinite
    /// with none).
    #[inline]
    pub fn radius(&self, n: f64) -> f64 {
        if n <= 0.0 {
            return f64::INFINITY;
        }
        self.margin(n) / n
    }

    /// Lower bound on P(i beats j) from `score` (wins, plus half the ties when they count) over
    /// `n` comparisons; `-inf` with none.
    #[inline]
    pub fn lower(&self, score: f64, n: f64) -> f64 {
        if n <= 0.0 {
            return f64::NEG_INFINITY;
        }
        score / n - self.radius(n)
    }

    /// Fewest comparisons at which the radius is at most `radius` (the radius decreases with n);
    /// `None` when `radius` is not positive or beyond 10^12 comparisons.
    pub fn comparisons_for(&self, radius: f64) -> Option<f64> {
        const MAX: f64 = 1e12;
        if radius.is_nan() || radius <= 0.0 || self.radius(MAX) > radius {
            return None;
        }
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        while self.radius(hi) > radius {
            lo = hi;
            hi *= 2.0;
        }
        while hi - lo > 1.0 {
            let mid = ((lo + hi) / 2.0).floor();
            if self.radius(mid) > radius {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    use crate::bandit::BanditRng;

    #[test]
    fn each_scale_is_tightest_at_its_time_and_the_radius_shrinks() {
        let b = Boundary::new(0.05 / 9180.0);
        for (m, (tuned, _)) in b.scales.iter().zip(SCALES) {
            let x = tuned / 4.0 / m.rho;
            assert!((x - (1.0 + x).ln() - m.log_term).abs() < 1e-9);
            // The tuned rho minimises the margin at the tuned time among nearby choices.
            let at = |rho: f64| Mixture { rho, ..*m }.margin(tuned);
            assert!(at(m.rho) <= at(m.rho * 1.2) && at(m.rho) <= at(m.rho / 1.2));
        }
        let mut last = f64::INFINITY;
        for n in [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6, 1e9] {
            let r = b.radius(n);
            assert!(r < last, "radius grows at {n}");
            last = r;
        }
    }

    #[test]
    fn the_margin_is_the_tighter_scale_and_each_rules_where_it_was_tuned() {
        let b = Boundary::condorcet(0.05, 16);
        let [small, large] = b.scales;
        for n in [1.0, 30.0, 150.0, 1e3, 15e3, 1e6] {
            assert_eq!(b.margin(n), small.margin(n).min(large.margin(n)));
        }
        assert!(small.margin(SCALES[0].0) < large.margin(SCALES[0].0));
        assert!(large.margin(SCALES[1].0) < small.margin(SCALES[1].0));
    }

    /// The trade the module docs state, against one mixture tuned for 10^3 at the whole alpha:
    /// 1.5 to 1.75 times fewer comparisons to separate at a gap of 0.4, at most 5% more at the
    /// gaps most of a decision's comparisons are spent on (0.05 to 0.005).
    #[test]
    fn two_scales_trade_a_few_percent_in_the_middle_for_much_at_small_counts() {
        for k in [4, 16, 64] {
            let ln_alpha = split_ln(0.05, CONDORCET_SHARE, k);
            let single = Mixture::tuned(Mixture::one_sided_term(ln_alpha), 1_000.0);
            let single_needs = |gap: f64| {
                (1u64..)
                    .map(|n| n as f64)
                    .find(|&n| single.margin(n) / n <= gap)
            };
            let two = Boundary::condorcet(0.05, k);
            let needs = |gap: f64| two.comparisons_for(gap).unwrap();
            let gain = single_needs(0.4).unwrap() / needs(0.4);
            assert!((1.45..=1.8).contains(&gain), "k {k}: gain {gain} at 0.4");
            for gap in [0.05, 0.02, 0.01, 0.005] {
                let cost = needs(gap) / single_needs(gap).unwrap();
                assert!((1.0..=1.05).contains(&cost), "k {k}: cost {cost} at {gap}");
            }
        }
    }

    #[test]
    fn comparisons_for_inverts_the_radius() {
        let b = Boundary::condorcet(0.05, 136);
        for r in [0.3, 0.05, 0.01, 0.002] {
            let n = b.comparisons_for(r).unwrap();
            assert!(b.radius(n) <= r && b.radius(n - 1.0) > r, "{r}: {n}");
        }
        assert_eq!(b.comparisons_for(0.0), None);
        assert_eq!(b.comparisons_for(1e-9), None);
    }

    /// Fair coins watched after every comparison up to `n_max`: the fraction of sequences whose
    /// interval ever excludes 1/2 (continuous monitoring, stopping at the first crossing). Ville's
    /// inequality bounds it by alpha; with N sequences the observed rate may exceed alpha by
    /// sampling error only, 3 standard errors of a binomial at alpha.
    fn crossing_rate(alpha: f64, n_max: u32, sequences: u32, seed: u64, half: bool) -> f64 {
        let b = Boundary::new(alpha);
        let mut rng = BanditRng::seed_from_u64(seed);
        let mut crossed = 0;
        for _ in 0..sequences {
            let mut s = 0.0;
            for n in 1..=n_max {
                // With half-win ties a third of the comparisons are ties worth 1/2.
                let u: f64 = rng.random();
                s += if half && u < 1.0 / 3.0 {
                    0.5
                } else if rng.random::<bool>() {
                    1.0
                } else {
                    0.0
                };
                let n = n as f64;
                if (s / n - 0.5).abs() >= b.radius(n) {
                    crossed += 1;
                    break;
                }
            }
        }
        crossed as f64 / sequences as f64
    }

    /// Phi(x) by Simpson's rule on the density from 0 (accurate to about 1e-12 for x <= 12).
    fn normal_cdf(x: f64) -> f64 {
        let steps = 20_000;
        let h = x / steps as f64;
        let f = |t: f64| (-t * t / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
        let mut sum = f(0.0) + f(x);
        for i in 1..steps {
            sum += f(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
        }
        0.5 + sum * h / 3.0
    }

    #[test]
    fn the_one_sided_margin_is_where_the_half_normal_mixture_has_crossed() {
        // At the margin, the one-sided mixture 2 sqrt(rho / (V + rho)) exp(S^2 / (2 (V + rho)))
        // Phi(S / sqrt(V + rho)) is at least 1 / alpha: every path above the margin has crossed,
        // so Ville's inequality bounds crossing the margin by alpha. And it is the tighter side.
        for alpha in [0.2, 0.05, 1e-3, 0.05 / 2.0 / 136.0, 1e-7] {
            let b = Boundary::one_sided(alpha);
            // Each scale's margin at its share of alpha: the union of the two is then alpha.
            for (m, (_, share)) in b.scales.iter().zip(SCALES) {
                for n in [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e7] {
                    let s = m.margin(n);
                    let v = n / 4.0 + m.rho;
                    let log_m = 2f64.ln()
                        + 0.5 * (m.rho / v).ln()
                        + s * s / (2.0 * v)
                        + normal_cdf(s / v.sqrt()).ln();
                    assert!(
                        log_m >= (1.0 / (alpha * share)).ln() - 1e-9,
                        "alpha {alpha}, share {share}, n {n}: ln M {log_m} below {}",
                        (1.0 / (alpha * share)).ln()
                    );
                }
            }
            for n in [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e7] {
                assert!(b.radius(n) < Boundary::new(alpha).radius(n));
            }
        }
    }

    /// Like `crossing_rate`, the fraction of fair sequences whose lower bound ever exceeds 1/2
    /// (one side only).
    fn upward_crossing_rate(alpha: f64, n_max: u32, sequences: u32, seed: u64) -> f64 {
        let b = Boundary::one_sided(alpha);
        let mut rng = BanditRng::seed_from_u64(seed);
        let mut crossed = 0;
        for _ in 0..sequences {
            let mut s = 0.0;
            for n in 1..=n_max {
                s += if rng.random::<bool>() { 1.0 } else { 0.0 };
                if b.lower(s, n as f64) > 0.5 {
                    crossed += 1;
                    break;
                }
            }
        }
        crossed as f64 / sequences as f64
    }

    #[test]
    fn the_split_boundaries_are_those_of_the_split_error_probabilities() {
        for (delta, k) in [(0.05, 2), (0.05, 136), (0.5, 7), (1e-9, 1_000)] {
            let pairs = (k * (k - 1) / 2) as f64;
            let (c, a) = (
                Boundary::condorcet(delta, k),
                Boundary::one_sided(delta * CONDORCET_SHARE / k as f64),
            );
            let (p, q) = (
                Boundary::all_pairs(delta, k),
                Boundary::new(delta * (1.0 - CONDORCET_SHARE) / pairs),
            );
            for n in [1.0, 100.0, 1e5] {
                assert!((c.radius(n) - a.radius(n)).abs() <= 1e-9 * a.radius(n));
                assert!((p.radius(n) - q.radius(n)).abs() <= 1e-9 * q.radius(n));
            }
        }
    }

    #[test]
    fn a_delta_whose_share_underflows_still_gives_finite_wider_bounds() {
        // 5e-324 times a share is 0 as an f64: the boundary is computed from logarithms.
        let (tiny, small) = (5e-324, 1e-300);
        for k in [2, 136, 10_000] {
            for (b, wider_than) in [
                (Boundary::condorcet(tiny, k), Boundary::condorcet(small, k)),
                (Boundary::all_pairs(tiny, k), Boundary::all_pairs(small, k)),
            ] {
                for n in [1.0, 1e3, 1e6] {
                    let r = b.radius(n);
                    assert!(
                        r.is_finite() && r > wider_than.radius(n),
                        "k {k} n {n}: {r}"
                    );
                    let lower = b.lower(n / 2.0, n);
                    assert!(lower.is_finite(), "k {k} n {n}: lower {lower}");
                }
                assert!(b.comparisons_for(0.1).is_some_and(f64::is_finite));
            }
        }
    }

    #[test]
    fn fair_coins_cross_one_side_at_most_alpha_under_continuous_monitoring() {
        let (alpha, sequences) = (0.2, 2_000);
        let se = (alpha * (1.0 - alpha) / sequences as f64).sqrt();
        let rate = upward_crossing_rate(alpha, 4_000, sequences, 3);
        assert!(rate <= alpha + 3.0 * se, "rate {rate}");
        assert!(rate > 0.0);
    }

    #[test]
    fn fair_coins_cross_at_most_alpha_under_continuous_monitoring() {
        // alpha = 0.2 so that crossings are frequent enough to measure with few sequences.
        let (alpha, sequences) = (0.2, 2_000);
        let se = (alpha * (1.0 - alpha) / sequences as f64).sqrt();
        for (seed, half) in [(1, false), (2, true)] {
            let rate = crossing_rate(alpha, 4_000, sequences, seed, half);
            assert!(rate <= alpha + 3.0 * se, "rate {rate} (half-win {half})");
            // Not vacuous: the sequence does cross fair coins at a visible rate.
            assert!(rate > 0.0);
        }
    }
}
