//! Seeds of independent runs, derived from the one `--seed` of a simulation.
//!
//! Run `r` gets its own seed from `(seed, r)` only, never from the thread that happens to run it
//! or from the other policies being compared: the same command line gives the same numbers with
//! any `--threads`, and run `r` of every policy sees the same arm permutation (common random
//! numbers, which makes differences between policies less noisy).

/// SplitMix64's output function: a bijection on `u64` that scrambles neighbouring inputs into
/// unrelated outputs (Steele, Lea and Flood 2014), the usual way to seed xoshiro generators.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of run `run` of a simulation seeded with `seed`. Distinct runs get distinct seeds
/// (both steps are bijections for a fixed `seed`).
pub fn run_seed(seed: u64, run: u64) -> u64 {
    splitmix64(splitmix64(seed) ^ run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn run_seeds_are_distinct_and_depend_on_the_seed() {
        let seeds: HashSet<u64> = (0..10_000).map(|r| run_seed(7, r)).collect();
        assert_eq!(seeds.len(), 10_000);
        assert_ne!(run_seed(7, 0), run_seed(8, 0));
        assert_eq!(run_seed(7, 3), run_seed(7, 3));
    }
}
