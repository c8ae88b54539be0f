//! Log-spaced checkpoints: the steps at which a run records its cumulative regret and champion.
//!
//! The papers plot regret on log-log axes, so points evenly spaced in log(step) are what a plot
//! needs, and their number grows with log(steps): memory stays flat however long the runs are.

/// Steps `1 <= s_1 < s_2 < ... < s_n = steps`, about `per_decade` per factor of ten (fewer at
/// the start, where rounding to whole steps merges neighbours), always ending at `steps`.
pub fn log_spaced(steps: u64, per_decade: u32) -> Vec<u64> {
    assert!(steps >= 1, "a simulation needs at least one step");
    assert!(per_decade >= 1, "at least one checkpoint per decade");
    let mut out: Vec<u64> = Vec::new();
    for i in 0u32.. {
        let s = 10f64.powf(f64::from(i) / f64::from(per_decade)).round() as u64;
        if s >= steps {
            break;
        }
        if out.last() != Some(&s) {
            out.push(s);
        }
    }
    out.push(steps);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_are_increasing_and_end_at_steps() {
        for steps in [1, 2, 9, 10, 11, 1000, 123_457, 100_000_000] {
            for per_decade in [1, 5, 10, 20] {
                let c = log_spaced(steps, per_decade);
                assert_eq!(*c.last().unwrap(), steps);
                assert_eq!(c[0], 1);
                assert!(c.windows(2).all(|w| w[0] < w[1]), "{c:?}");
                // Never more than per_decade points per decade, plus the first and last.
                let decades = (steps as f64).log10();
                assert!(c.len() as f64 <= decades * f64::from(per_decade) + 2.0);
            }
        }
    }

    #[test]
    fn checkpoints_are_evenly_spaced_in_log_scale() {
        let c = log_spaced(1_000_000, 10);
        // Past the first decades, consecutive ratios are 10^(1/10) up to rounding.
        let step = 10f64.powf(0.1);
        for w in c.windows(2).filter(|w| w[0] >= 1000) {
            let ratio = w[1] as f64 / w[0] as f64;
            assert!((ratio - step).abs() < 1e-3, "{w:?}");
        }
        assert_eq!(c.iter().filter(|&&s| s >= 100_000).count(), 11);
    }
}
