//! Where a `--letor` simulation's duels come from: the data set loaded and precomputed once, and
//! each run's arms (every feature ranker, or a random subset of them, in a random order).
//!
//! Regret is NDCG@10 utility regret ([`Regret::of_utilities`]): the preference matrix that click
//! feedback follows is unknown, but each ranker's quality on the data is not. It is one step's
//! loss in ranking quality from showing the two compared rankers' lists (interleaving mixes them)
//! instead of the best ranker's, in expectation over the uniformly drawn query. The winner it
//! rewards finding is the best ranker by NDCG@10, which a click model that prefers relevant
//! documents also tends to make the Condorcet winner of the clicks; when it does not (a weak
//! click model, rankers of nearly equal NDCG), accuracy measures agreement with NDCG, not the
//! policy's mistake. Estimating the click preference matrix instead (`joust prefmatrix`) would
//! cost K^2 times many comparisons before the first run.

use std::path::Path;

use rand::Rng;

use super::click_environment::ClickData;
use super::click_models::ClickModel;
use super::feature_rankers::ranker_names;
use super::letor_data::{LIST_LEN, LetorData};
use crate::bandit::BanditRng;
use crate::interleave::Method;
use crate::sim::report::{LetorSummary, RankerNdcg};
use crate::sim::run::Regret;

/// The LETOR data every run plays on, with the choices that make duels out of it.
#[derive(Debug, Clone)]
pub struct LetorPlan {
    /// The file as given, for the report.
    pub file: String,
    pub data: ClickData,
    /// Ranker r ranks by feature `feature_ids[r]` (ascending).
    pub feature_ids: Vec<u32>,
    /// Each run plays on a random subset of this many rankers.
    pub subset: Option<usize>,
}

impl LetorPlan {
    /// Loads and checks `path`, and precomputes every feature ranker's top-10 lists and NDCG@10.
    pub fn load(
        path: &Path,
        method: Method,
        click_model: ClickModel,
        subset: Option<usize>,
    ) -> Result<LetorPlan, String> {
        let shown = path.display();
        let file = std::fs::File::open(path).map_err(|e| format!("cannot open {shown}: {e}"))?;
        let parsed = LetorData::from_reader(std::io::BufReader::new(file))
            .map_err(|e| format!("{shown}: {e}"))?;
        let data = ClickData::new(&parsed, method, click_model, LIST_LEN)
            .map_err(|e| format!("{shown}: {e}"))?;
        if let Some(k) = subset.filter(|&k| k < 2 || k > data.rankers()) {
            return Err(format!(
                "--subset {k}: must be between 2 and the data's {} feature rankers",
                data.rankers()
            ));
        }
        Ok(LetorPlan {
            file: shown.to_string(),
            feature_ids: parsed.feature_ids,
            data,
            subset,
        })
    }

    /// Arms per run.
    pub fn k(&self) -> usize {
        self.subset.unwrap_or(self.data.rankers())
    }

    /// One run's arms: `arms[a]` is the ranker playing arm a, a uniformly random ordered
    /// selection of `k()` rankers (all of them in a random order without `--subset`), so that
    /// no policy profits from index-order tie breaking.
    pub fn draw(&self, rng: &mut BanditRng) -> Vec<usize> {
        let n = self.data.rankers();
        let mut rankers: Vec<usize> = (0..n).collect();
        for i in 0..self.k() {
            rankers.swap(i, rng.random_range(i..n));
        }
        rankers.truncate(self.k());
        rankers
    }

    /// NDCG@10 utility regret of a run whose arms are `arms`.
    pub fn regret(&self, arms: &[usize]) -> Regret {
        let utilities: Vec<f64> = arms.iter().map(|&r| self.data.ndcg[r]).collect();
        Regret::of_utilities(&utilities)
    }

    /// Names of the best rankers by NDCG@10 over all features.
    pub fn winners(&self) -> Vec<String> {
        let all: Vec<usize> = (0..self.data.rankers()).collect();
        let names = ranker_names(&self.feature_ids);
        self.regret(&all)
            .winners()
            .iter()
            .map(|&r| names[r].clone())
            .collect()
    }

    /// The data, click model and method, for `summary.json`.
    pub fn summary(&self, rankers_per_query: usize) -> LetorSummary {
        LetorSummary {
            file: self.file.clone(),
            rankers_per_query,
            click_model: self.data.click_model.name().to_string(),
            interleaving: self.data.method.clone(),
            list_len: self.data.list_len,
            queries: self.data.queries(),
            ndcg: ranker_names(&self.feature_ids)
                .into_iter()
                .zip(&self.data.ndcg)
                .map(|(ranker, &ndcg)| RankerNdcg { ranker, ndcg })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::letor::synthetic::{SyntheticSpec, synthetic_letor};
    use rand::SeedableRng;

    fn plan(subset: Option<usize>) -> LetorPlan {
        let spec: SyntheticSpec = "20:15:5".parse().unwrap();
        // Tests run in parallel threads of one process: each call writes its own file.
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("joust-letor-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("data-{call}.txt"));
        std::fs::write(&path, synthetic_letor(&spec, 3).to_letor_text()).unwrap();
        let p = LetorPlan::load(
            &path,
            Method::Balanced,
            "navigational".parse().unwrap(),
            subset,
        );
        let _ = std::fs::remove_file(&path);
        p.unwrap()
    }

    #[test]
    fn draws_are_orderings_of_distinct_rankers() {
        let mut rng = BanditRng::seed_from_u64(1);
        for subset in [None, Some(3)] {
            let p = plan(subset);
            for _ in 0..50 {
                let mut arms = p.draw(&mut rng);
                assert_eq!(arms.len(), p.k());
                arms.sort_unstable();
                arms.dedup();
                assert_eq!(arms.len(), p.k());
                assert!(arms.iter().all(|&r| r < 5));
            }
        }
    }

    #[test]
    fn regret_follows_the_arms_and_winners_are_the_best_ndcg() {
        let p = plan(None);
        let best = (0..5)
            .max_by(|&a, &b| p.data.ndcg[a].total_cmp(&p.data.ndcg[b]))
            .unwrap();
        let arms = vec![4, 3, 2, 1, 0];
        let r = p.regret(&arms);
        assert_eq!(r.winners(), &[4 - best]);
        assert_eq!(p.winners(), vec![format!("f{}", p.feature_ids[best])]);
        assert!(r.of_pair(4 - best, 4 - best).abs() < 1e-12);
        assert!(p.summary(2).ndcg.len() == 5);
    }

    #[test]
    fn bad_subsets_and_files_are_refused() {
        let err = LetorPlan::load(
            Path::new("/nonexistent/letor.txt"),
            Method::Balanced,
            "perfect".parse().unwrap(),
            None,
        )
        .unwrap_err();
        assert!(err.contains("cannot open"), "{err}");
        let spec: SyntheticSpec = "5:5:3".parse().unwrap();
        let path = std::env::temp_dir().join(format!("joust-letor-sub-{}", std::process::id()));
        std::fs::write(&path, synthetic_letor(&spec, 1).to_letor_text()).unwrap();
        let err = LetorPlan::load(&path, Method::Balanced, "perfect".parse().unwrap(), Some(4))
            .unwrap_err();
        let _ = std::fs::remove_file(&path);
        assert!(err.contains("--subset 4"), "{err}");
    }
}
