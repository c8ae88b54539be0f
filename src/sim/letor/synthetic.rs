//! Seeded synthetic learning-to-rank data: small LETOR data sets for tests and demos, built so
//! that the feature rankers differ clearly in quality.
//!
//! Each document gets a relevance grade 0..=4 (skewed towards 0, as in web search data). Feature
//! f's value is `strength_f * grade + noise`, with standard normal noise; the strengths halve from
//! one feature to the next (2, 1, 0.5, ...), and the last feature is pure noise (strength 0), so
//! one feature ranker is clearly best by NDCG@10 and the others follow in order. Which feature id
//! gets which strength is shuffled by the seed, so nothing can rely on feature 1 being best.

use super::letor_data::{LetorData, Query};
use crate::bandit::BanditRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use std::str::FromStr;

/// P(grade = g) for g = 0..=4.
const GRADE_PROBABILITIES: [f64; 5] = [0.45, 0.25, 0.15, 0.10, 0.05];
/// Signal strength of the most informative feature.
const TOP_STRENGTH: f64 = 2.0;

/// The size of a synthetic data set; written `QUERIES:DOCS:FEATURES` (e.g. `200:30:8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyntheticSpec {
    pub queries: usize,
    pub docs_per_query: usize,
    pub features: usize,
}

impl FromStr for SyntheticSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.split(':').collect();
        let numbers: Option<Vec<usize>> = parts.iter().map(|p| p.parse().ok()).collect();
        match numbers.as_deref() {
            Some(&[queries, docs_per_query, features])
                if queries > 0 && docs_per_query > 0 && features >= 2 =>
            {
                Ok(SyntheticSpec {
                    queries,
                    docs_per_query,
                    features,
                })
            }
            _ => Err(format!(
                "'{s}' is not QUERIES:DOCS:FEATURES with positive numbers and at least 2 features"
            )),
        }
    }
}

/// The informativeness of each feature id (index 0 = feature 1): the strengths 2, 1, 0.5, ...
/// with the last one 0, shuffled.
fn strengths_with(spec: &SyntheticSpec, rng: &mut BanditRng) -> Vec<f64> {
    let mut s: Vec<f64> = (0..spec.features)
        .map(|i| TOP_STRENGTH * 0.5f64.powi(i as i32))
        .collect();
    s[spec.features - 1] = 0.0;
    s.shuffle(rng);
    s
}

/// Generates a data set; the same spec and seed always give the same data.
pub fn synthetic_letor(spec: &SyntheticSpec, seed: u64) -> LetorData {
    let mut rng = BanditRng::seed_from_u64(seed);
    let strength = strengths_with(spec, &mut rng);
    let queries = (0..spec.queries)
        .map(|q| {
            let relevance: Vec<u8> = (0..spec.docs_per_query).map(|_| grade(&mut rng)).collect();
            let mut features = Vec::with_capacity(spec.docs_per_query * spec.features);
            for &g in &relevance {
                for &s in &strength {
                    let noise: f64 = rng.sample(StandardNormal);
                    // Rounded to 4 decimals so the data survives a trip through LETOR text.
                    let v = ((s * g as f64 + noise) * 1e4).round() / 1e4;
                    features.push(v as f32);
                }
            }
            Query {
                qid: (q + 1).to_string(),
                relevance,
                features,
            }
        })
        .collect();
    LetorData {
        feature_ids: (1..=spec.features as u32).collect(),
        stride: spec.features,
        queries,
    }
}

fn grade(rng: &mut BanditRng) -> u8 {
    let mut r: f64 = rng.random();
    for (g, &p) in GRADE_PROBABILITIES.iter().enumerate() {
        if r < p {
            return g as u8;
        }
        r -= p;
    }
    GRADE_PROBABILITIES.len() as u8 - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The strengths `synthetic_letor` gives the features for this seed.
    fn strengths(spec: &SyntheticSpec, seed: u64) -> Vec<f64> {
        strengths_with(spec, &mut BanditRng::seed_from_u64(seed))
    }

    #[test]
    fn spec_parses_and_rejects_nonsense() {
        let s: SyntheticSpec = "20:15:4".parse().unwrap();
        assert_eq!((s.queries, s.docs_per_query, s.features), (20, 15, 4));
        for bad in ["20:15", "0:15:4", "20:15:1", "a:b:c", "1:2:3:4"] {
            assert!(bad.parse::<SyntheticSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn seeded_and_reproducible_and_survives_letor_text() {
        let spec: SyntheticSpec = "30:12:5".parse().unwrap();
        let a = synthetic_letor(&spec, 9);
        assert_eq!(a, synthetic_letor(&spec, 9));
        assert_ne!(a, synthetic_letor(&spec, 10));
        assert_eq!(LetorData::parse(&a.to_letor_text()).unwrap(), a);
    }

    #[test]
    fn strongest_feature_has_the_best_ndcg_and_noise_the_worst() {
        // With 200 queries the mean NDCG@10 of each ranker has a standard error of about 0.01,
        // while neighbouring strengths (2 vs 1, and 0.25 vs 0) give NDCGs that differ by far more than that.
        let spec: SyntheticSpec = "200:30:5".parse().unwrap();
        for seed in 0..3 {
            let data = synthetic_letor(&spec, seed);
            let s = strengths(&spec, seed);
            let ndcg: Vec<f64> = data
                .feature_ids
                .iter()
                .map(|&f| data.feature_ndcg(f, 10))
                .collect();
            let best_ndcg = (0..5).max_by(|&a, &b| ndcg[a].total_cmp(&ndcg[b])).unwrap();
            let worst_ndcg = (0..5).min_by(|&a, &b| ndcg[a].total_cmp(&ndcg[b])).unwrap();
            assert_eq!(s[best_ndcg], TOP_STRENGTH, "seed {seed}: {ndcg:?} {s:?}");
            assert_eq!(s[worst_ndcg], 0.0, "seed {seed}: {ndcg:?} {s:?}");
        }
    }
}
