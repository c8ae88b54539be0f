//! Estimating a preference matrix from learning-to-rank data, the way the papers built theirs:
//! every feature is a ranker (its top 10 per query), and for each pair of rankers many simulated
//! comparisons are run, each on a uniformly random query: interleave the two lists, simulate a
//! user with a click model, credit the clicks. p_ij is ranker i's mean score over the pair's
//! comparisons, a win counting 1 and a tie 1/2 (for Probabilistic interleaving, the marginalised
//! P(i wins) + P(tie)/2, the same expectation with less noise).
//!
//! Pairs run in parallel (rayon). Each pair has its own RNG seeded from the run's seed and the
//! pair, so the matrix depends on the seed only, not on the number of threads.

use super::click_models::ClickModel;
use super::feature_rankers::FeatureRankers;
use crate::bandit::BanditRng;
use crate::interleave::{
    self, Interleaving, Method, OptimizedDistribution, optimized_distribution,
};
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

/// How to estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimation {
    pub method: Method,
    pub click_model: ClickModel,
    /// Comparisons per pair of rankers.
    pub comparisons: usize,
    /// Length of each ranker's list (and cap of the shown list).
    pub list_len: usize,
    pub seed: u64,
}

/// The estimated matrix: `rows[i][j]` = P(ranker i beats ranker j).
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub rows: Vec<Vec<f64>>,
    /// Comparisons run in total.
    pub comparisons: u64,
}

/// Estimates the preference matrix of `rankers`. Fails only if the method rejects the lists
/// (e.g. optimized interleaving asked for more than it supports).
pub fn estimate_matrix(rankers: &FeatureRankers, how: &Estimation) -> Result<Estimate, String> {
    let k = rankers.lists.len();
    if rankers.grades.is_empty() {
        return Err("the data has no query with documents".into());
    }
    let pairs: Vec<(usize, usize)> = (0..k)
        .flat_map(|i| (i + 1..k).map(move |j| (i, j)))
        .collect();
    let scores: Vec<f64> = pairs
        .par_iter()
        .map(|&(i, j)| duel_pair(rankers, how, i, j))
        .collect::<Result<_, _>>()?;
    let mut rows = vec![vec![0.5; k]; k];
    for (&(i, j), &p) in pairs.iter().zip(&scores) {
        rows[i][j] = p;
        rows[j][i] = 1.0 - p;
    }
    Ok(Estimate {
        rows,
        comparisons: (pairs.len() * how.comparisons) as u64,
    })
}

/// Ranker i's mean score against ranker j.
fn duel_pair(
    rankers: &FeatureRankers,
    how: &Estimation,
    i: usize,
    j: usize,
) -> Result<f64, String> {
    if how.comparisons == 0 {
        return Ok(0.5);
    }
    let mut rng = BanditRng::seed_from_u64(pair_seed(how.seed, i, j));
    let mut clicks = Vec::new();
    let mut total = 0.0;
    // Optimized interleaving solves an LP that depends on the two lists only: solve it once per
    // query of this pair and sample it on every later visit.
    let mut optimized: Vec<Option<OptimizedDistribution<u32>>> = match how.method {
        Method::Optimized => vec![None; rankers.grades.len()],
        _ => Vec::new(),
    };
    for _ in 0..how.comparisons {
        let q = rng.random_range(0..rankers.grades.len());
        let lists = [&rankers.lists[i][q][..], &rankers.lists[j][q][..]];
        let shown = if let Some(slot) = optimized.get_mut(q) {
            if slot.is_none() {
                let d = optimized_distribution(lists[0], lists[1], how.list_len);
                *slot = Some(d.map_err(|e| e.to_string())?);
            }
            let distribution = slot.as_ref().expect("filled above");
            Interleaving::Optimized(distribution.sample(&mut rng))
        } else {
            interleave::interleave(&how.method, &lists, how.list_len, &mut rng)
                .map_err(|e| e.to_string())?
        };
        let grades = &rankers.grades[q];
        how.click_model.simulate(
            shown.shown().iter().map(|&d| grades[d as usize]),
            &mut rng,
            &mut clicks,
        );
        total += shown.soft_outcome(&clicks).a_score();
    }
    Ok(total / how.comparisons as f64)
}

/// A seed for pair (i, j) of a run: SplitMix64 finalisation of the run seed and the pair, so
/// neighbouring pairs and seeds get unrelated streams.
fn pair_seed(seed: u64, i: usize, j: usize) -> u64 {
    let mut z =
        seed.wrapping_add(0x9E37_79B9_7F4A_7C15u64.wrapping_mul(((i as u64) << 32 | j as u64) + 1));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
