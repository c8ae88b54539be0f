//! Bernoulli relative entropy: RMED1's divergences and `auto`'s elimination test (against 1/2),
//! and the simulator's lower bounds (`sim/run/decision_limit.rs`, `regret_limit.rs`).

/// kl(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q)), with 0 ln 0 = 0.
pub fn kl_bernoulli(p: f64, q: f64) -> f64 {
    let term = |a: f64, b: f64| if a <= 0.0 { 0.0 } else { a * (a / b).ln() };
    term(p, q) + term(1.0 - p, 1.0 - q)
}

/// kl(p, 1/2), the divergence of an empirical preference from a tie.
pub fn kl_to_half(p: f64) -> f64 {
    kl_bernoulli(p, 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kl_is_the_bernoulli_relative_entropy() {
        assert_eq!(kl_bernoulli(0.5, 0.5), 0.0);
        // kl(0.6, 0.5) = 0.6 ln 1.2 + 0.4 ln 0.8.
        let want = 0.6 * 1.2f64.ln() + 0.4 * 0.8f64.ln();
        assert!((kl_bernoulli(0.6, 0.5) - want).abs() < 1e-15);
        assert_eq!(kl_bernoulli(1.0, 0.5), 2f64.ln());
        // Near 1/2 it is 2 gap^2 to leading order.
        let g = 1e-3;
        assert!((kl_bernoulli(0.5 + g, 0.5) / (2.0 * g * g) - 1.0).abs() < 1e-5);
        // kl(0.1, 0.3) = 0.1 ln(1/3) + 0.9 ln(9/7).
        let want = 0.1 * (1.0f64 / 3.0).ln() + 0.9 * (9.0f64 / 7.0).ln();
        assert!((kl_bernoulli(0.1, 0.3) - want).abs() < 1e-15);
    }

    #[test]
    fn to_a_fair_coin() {
        assert_eq!(kl_to_half(0.5), 0.0);
        assert_eq!(kl_to_half(0.0), 2f64.ln());
        assert_eq!(kl_to_half(1.0), 2f64.ln());
        // KL(0.1 || 0.5) = 0.1 ln 0.2 + 0.9 ln 1.8 = 0.3681.
        assert!((kl_to_half(0.1) - 0.368_064).abs() < 1e-6);
    }

    /// Stored RMED1 and `auto` states replay only if their divergences keep their bits: they
    /// were computed as x ln(2x), and x / 0.5 is exactly 2x.
    #[test]
    fn keeps_the_bits_the_policies_computed_before() {
        let before = |p: f64| {
            let term = |x: f64| if x <= 0.0 { 0.0 } else { x * (2.0 * x).ln() };
            term(p) + term(1.0 - p)
        };
        for i in 0..=10_000 {
            let p = f64::from(i) / 10_000.0;
            assert_eq!(kl_to_half(p).to_bits(), before(p).to_bits(), "{p}");
        }
        for (w, n) in [
            (1.0, 3.0),
            (7.0, 9.0),
            (123.0, 457.0),
            (1e6 + 1.0, 2e6 + 7.0),
        ] {
            let p: f64 = w / n;
            assert_eq!(kl_to_half(p).to_bits(), before(p).to_bits(), "{p}");
        }
    }
}
