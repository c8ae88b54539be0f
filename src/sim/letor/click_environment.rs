//! Users clicking on interleaved result lists: the environment of `joust simulate --letor`.
//!
//! Every feature of a LETOR data set is a ranker (its top-10 list per query, as
//! [`FeatureRankers`] builds them once, before any run). A duel of arms (c, d) is one simulated
//! online comparison, as `joust prefmatrix` runs them: draw a query uniformly at random,
//! interleave c's and d's lists for it with the chosen method (c is list A), let the click model
//! scan the shown list, and credit the clicks. A self-duel ties without a query (both lists are
//! the same list).
//!
//! Team-Draft and Balanced give a certain outcome. Probabilistic interleaving gives the outcome
//! marginalised over the rankers' possible assignments (P(A wins), P(B wins), P(tie)), and
//! Optimized one spread in proportion to the credit difference; the duel draws its result from
//! those probabilities, so a duel's expected outcome is the same as the
//! unmarginalised method's and as the matrix `joust prefmatrix` estimates.
//!
//! A query of m > 2 rankers ([`ClickEnvironment::query`], for `--rankers-per-query`) multileaves
//! their lists with the method, and every pair of them gets the result the method's judgement
//! gives (drawn from it when it is spread): a win, a loss, or a tie when nothing told them apart.
//! Every shown list also feeds the users' measures ([`super::user_measures`]).
//!
//! Optimized interleaving solves an LP per pair of lists; an environment keeps the solution of
//! each (arm pair, query) it has met (up to a cap), so a run pays for each at most once.

use std::collections::HashMap;

use rand::{Rng, SeedableRng};

use super::click_models::ClickModel;
use super::feature_rankers::FeatureRankers;
use super::letor_data::LetorData;
use super::user_measures::UserMeasures;
use crate::bandit::{Arm, BanditRng, Pair, SetOutcome};
use crate::interleave::{self, Interleaving, Method, OptimizedDistribution, SoftOutcome};
use crate::sim::run::{Environment, Outcome};

/// Optimized interleaving's solutions kept per run at most (a few KB each): past it, new pairs of
/// lists are solved per duel. Solving or looking up consumes no randomness, so the cap changes
/// speed only, never outcomes.
const MAX_CACHED_LPS: usize = 1 << 16;

/// Everything a click duel needs that does not change between runs: built once per simulation.
#[derive(Debug, Clone)]
pub struct ClickData {
    /// `rankers.lists[r][q]`: feature ranker r's top-`list_len` list for query q.
    pub rankers: FeatureRankers,
    /// Mean NDCG@`list_len` of each ranker, in the same order.
    pub ndcg: Vec<f64>,
    pub method: Method,
    pub click_model: ClickModel,
    pub list_len: usize,
    /// Per query: the ideal DCG@`list_len` (0 when no document is relevant).
    pub ideal_dcg: Vec<f64>,
    /// Each ranker's expected clicks per query on its own list.
    pub expected_clicks: Vec<f64>,
    /// Share of queries with a relevant document (where NDCG is defined).
    pub defined_share: f64,
}

impl ClickData {
    /// Precomputes every feature ranker's lists and NDCG. Refuses data with fewer than two
    /// features or no query with documents, and a method that cannot interleave two lists of
    /// `list_len` (e.g. optimized beyond its size limit, a negative tau).
    pub fn new(
        data: &LetorData,
        method: Method,
        click_model: ClickModel,
        list_len: usize,
    ) -> Result<ClickData, String> {
        if data.feature_ids.len() < 2 {
            return Err(format!(
                "the data has {} feature(s); a simulation needs at least 2 rankers",
                data.feature_ids.len()
            ));
        }
        let rankers = FeatureRankers::from_letor(data, list_len);
        if rankers.grades.is_empty() {
            return Err("the data has no query with documents".into());
        }
        // Interleaving fails for reasons of method and length only, never of the lists'
        // contents: one trial here means `duel` never meets an error.
        let mut rng = BanditRng::seed_from_u64(0);
        let (a, b) = (&rankers.lists[0][0][..], &rankers.lists[1][0][..]);
        interleave::interleave(&method, &[a, b], list_len, &mut rng)
            .map_err(|e| format!("--method {}: {e}", method.name()))?;
        let ndcg = data
            .feature_ids
            .iter()
            .map(|&f| data.feature_ndcg(f, list_len))
            .collect();
        let ideal_dcg: Vec<f64> = rankers
            .grades
            .iter()
            .map(|grades| {
                let mut ideal = grades.clone();
                ideal.sort_unstable_by(|a, b| b.cmp(a));
                dcg(ideal.iter().copied(), list_len)
            })
            .collect();
        let queries = rankers.grades.len() as f64;
        let expected_clicks = rankers
            .lists
            .iter()
            .map(|lists| {
                lists
                    .iter()
                    .zip(&rankers.grades)
                    .map(|(list, grades)| {
                        click_model.expected_clicks(list.iter().map(|&d| grades[d as usize]))
                    })
                    .sum::<f64>()
                    / queries
            })
            .collect();
        let defined_share = ideal_dcg.iter().filter(|&&d| d > 0.0).count() as f64 / queries;
        Ok(ClickData {
            rankers,
            ndcg,
            method,
            click_model,
            list_len,
            ideal_dcg,
            expected_clicks,
            defined_share,
        })
    }

    /// Number of feature rankers.
    pub fn rankers(&self) -> usize {
        self.rankers.lists.len()
    }

    /// Number of queries duels draw from.
    pub fn queries(&self) -> usize {
        self.rankers.grades.len()
    }
}

/// DCG@k with gain 2^grade - 1 and discount 1 / log2(position + 1), as [`super::letor_data::ndcg`].
fn dcg(grades: impl Iterator<Item = u8>, k: usize) -> f64 {
    grades
        .take(k)
        .enumerate()
        .map(|(i, g)| (2f64.powi(g as i32) - 1.0) / (i as f64 + 2.0).log2())
        .sum()
}

/// One run's environment: arm a is feature ranker `arms[a]` of the shared data.
#[derive(Debug)]
pub struct ClickEnvironment<'a> {
    data: &'a ClickData,
    arms: Vec<usize>,
    /// Reused click buffer: no allocation for clicks per duel.
    clicks: Vec<usize>,
    /// Optimized interleaving's distributions by (ranker A, ranker B, query).
    optimized: HashMap<(usize, usize, usize), OptimizedDistribution<u32>>,
    measures: UserMeasures,
}

impl<'a> ClickEnvironment<'a> {
    /// `arms[a]` is the ranker (index into `data`'s rankers) playing arm a.
    pub fn new(data: &'a ClickData, arms: Vec<usize>) -> Self {
        assert!(
            arms.iter().all(|&r| r < data.rankers()),
            "arm mapped to a missing ranker"
        );
        ClickEnvironment {
            data,
            arms,
            clicks: Vec::with_capacity(data.list_len),
            optimized: HashMap::new(),
            measures: UserMeasures::default(),
        }
    }

    /// A ranker shown alone: its expected measures, no query drawn (see [`super::user_measures`]).
    fn shown_alone(&mut self, arm: Arm) {
        let r = self.arms[arm];
        self.measures.add_expected(
            self.data.expected_clicks[r],
            self.data.ndcg[r],
            self.data.defined_share,
        );
    }

    /// Lets the user of query `q` click on `shown` (into `self.clicks`) and records the measures.
    fn show(&mut self, shown: &[u32], q: usize, rng: &mut (impl Rng + ?Sized)) {
        let grades = &self.data.rankers.grades[q];
        self.data.click_model.simulate(
            shown.iter().map(|&d| grades[d as usize]),
            rng,
            &mut self.clicks,
        );
        let ideal = self.data.ideal_dcg[q];
        let ndcg = (ideal > 0.0).then(|| {
            dcg(
                shown.iter().map(|&d| grades[d as usize]),
                self.data.list_len,
            ) / ideal
        });
        self.measures.add(self.clicks.len(), ndcg);
    }

    /// One query comparing the distinct arms `set` (as `select_set` returns them) through one
    /// multileaved list: every pair's result, a win or a tie (drawn from the method's judgement
    /// when it is spread). One arm is shown alone and compares nothing.
    pub fn query<R: Rng + ?Sized>(&mut self, set: &[Arm], rng: &mut R) -> SetOutcome {
        let mut outcome = SetOutcome::default();
        if let [only] = set {
            self.shown_alone(*only);
            return outcome;
        }
        let q = rng.random_range(0..self.data.queries());
        let lists: Vec<&[u32]> = set
            .iter()
            .map(|&a| &self.data.rankers.lists[self.arms[a]][q][..])
            .collect();
        let shown = interleave::interleave(&self.data.method, &lists, self.data.list_len, rng)
            .expect("checked when the simulation was built");
        self.show(shown.shown(), q, rng);
        for p in shown.preferences(&self.clicks).sample(rng) {
            let (a, b) = (set[p.i], set[p.j]);
            match p.outcome {
                interleave::Outcome::A => outcome.wins.push((a, b)),
                interleave::Outcome::B => outcome.wins.push((b, a)),
                interleave::Outcome::Tie => outcome.ties.push((a, b)),
            }
        }
        outcome
    }

    /// The interleaving of rankers `a` (list A) and `b` for query `q`.
    fn interleaving<R: Rng + ?Sized>(
        &mut self,
        a: usize,
        b: usize,
        q: usize,
        rng: &mut R,
    ) -> Interleaving<u32> {
        let lists = [
            &self.data.rankers.lists[a][q][..],
            &self.data.rankers.lists[b][q][..],
        ];
        let key = (a, b, q);
        if self.data.method == Method::Optimized
            && (self.optimized.len() < MAX_CACHED_LPS || self.optimized.contains_key(&key))
        {
            let len = self.data.list_len;
            let distribution = self.optimized.entry(key).or_insert_with(|| {
                interleave::optimized_distribution(lists[0], lists[1], len)
                    .expect("checked when the data was built")
            });
            return Interleaving::Optimized(distribution.sample(rng));
        }
        interleave::interleave(&self.data.method, &lists, self.data.list_len, rng)
            .expect("checked when the data was built")
    }
}

/// A certain outcome as it is; a spread one (Probabilistic) drawn from its probabilities.
fn draw<R: Rng + ?Sized>(soft: SoftOutcome, rng: &mut R) -> Outcome {
    match soft.sample(rng) {
        interleave::Outcome::A => Outcome::FirstWins,
        interleave::Outcome::B => Outcome::SecondWins,
        interleave::Outcome::Tie => Outcome::Tie,
    }
}

impl Environment for ClickEnvironment<'_> {
    fn duel<R: Rng + ?Sized>(&mut self, pair: Pair, rng: &mut R) -> Outcome {
        if pair.first == pair.second {
            self.shown_alone(pair.first);
            return Outcome::Tie;
        }
        let (a, b) = (self.arms[pair.first], self.arms[pair.second]);
        let q = rng.random_range(0..self.data.queries());
        let shown = self.interleaving(a, b, q, rng);
        self.show(shown.shown(), q, rng);
        draw(shown.soft_outcome(&self.clicks), rng)
    }

    fn take_user_measures(&mut self) -> Option<(f64, f64)> {
        Some(self.measures.take())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 30 queries of 20 documents: 3 relevant (grades 2, 3, 4) and 17 not. Feature 1 is the
    /// grade (a perfect ranking), feature 2 its negation (the relevant documents last), feature 3
    /// the grade again (a copy of feature 1).
    fn data() -> LetorData {
        let mut text = String::new();
        for q in 0..30 {
            for d in 0..20 {
                // The relevant documents sit at different file positions in each query.
                let grade = match (d + q) % 20 {
                    0 => 4,
                    7 => 3,
                    13 => 2,
                    _ => 0,
                };
                text.push_str(&format!(
                    "{grade} qid:{q} 1:{grade} 2:{} 3:{grade}\n",
                    -grade
                ));
            }
        }
        LetorData::parse(&text).unwrap()
    }

    fn click_data(method: Method) -> ClickData {
        let model: ClickModel = "perfect".parse().unwrap();
        ClickData::new(&data(), method, model, 10).unwrap()
    }

    #[test]
    fn perfect_ranker_wins_every_decided_duel_against_the_reversed_one() {
        // Under `perfect` only relevant documents are clicked. The reversed ranker's top 10 are
        // all non-relevant (17 of them), so with Team-Draft every relevant document shown was
        // contributed by the perfect ranker, and with Balanced the reversed list holds no clicked
        // document in any prefix: every click credits the perfect ranker, so it can lose no duel.
        // A duel is decided unless nothing is clicked; the grade-4 document is always shown (it
        // heads the perfect list) and always clicked (P = 1), so every duel is decided.
        for method in [Method::from_name("team_draft").unwrap(), Method::Balanced] {
            let d = click_data(method.clone());
            let mut env = ClickEnvironment::new(&d, vec![1, 0]);
            let mut rng = BanditRng::seed_from_u64(7);
            for _ in 0..2000 {
                assert_eq!(
                    env.duel(Pair::new(1, 0), &mut rng),
                    Outcome::FirstWins,
                    "{method:?}"
                );
                assert_eq!(
                    env.duel(Pair::new(0, 1), &mut rng),
                    Outcome::SecondWins,
                    "{method:?}"
                );
            }
        }
    }

    #[test]
    fn self_duels_tie_and_identical_rankers_split_evenly() {
        let d = click_data(Method::from_name("team_draft").unwrap());
        let mut env = ClickEnvironment::new(&d, vec![0, 1, 2]);
        let mut rng = BanditRng::seed_from_u64(8);
        for _ in 0..500 {
            assert_eq!(env.duel(Pair::new(2, 2), &mut rng), Outcome::Tie);
        }
        // Rankers 0 and 2 give identical lists: Team-Draft's coin decides which team gets each
        // clicked document, so P(first wins) = P(second wins). The per-duel difference
        // (+1 / -1 / 0) has variance at most 1: over 4,000 duels the mean difference has standard
        // error at most 0.016, and 0.08 is 5 of them (false alarm below 1e-6).
        let n = 4000;
        let diff: i64 = (0..n)
            .map(|_| match env.duel(Pair::new(0, 2), &mut rng) {
                Outcome::FirstWins => 1,
                Outcome::SecondWins => -1,
                Outcome::Tie => 0,
            })
            .sum();
        assert!((diff as f64 / n as f64).abs() < 0.08, "{diff}");
    }

    #[test]
    fn probabilistic_duels_have_the_expectation_prefmatrix_estimates() {
        // Probabilistic interleaving spreads the outcome over assignments; a duel draws from that
        // spread, so its mean score (win 1, tie 1/2) must match `prefmatrix::estimate`, which
        // averages the spread itself. Each of the two means is over 4,000 comparisons of a score
        // in [0, 1] (standard error at most 0.5 / sqrt(4000) = 0.0079), so their difference has
        // standard error at most 0.0112, and 0.056 is 5 of them.
        let method = Method::Probabilistic { tau: 3.0 };
        let d = click_data(method.clone());
        let n = 4000;
        let how = super::super::matrix_estimate::Estimation {
            method,
            click_model: d.click_model,
            comparisons: n,
            list_len: 10,
            seed: 5,
        };
        let expected = super::super::matrix_estimate::estimate_matrix(&d.rankers, &how)
            .unwrap()
            .rows[0][1];
        let mut env = ClickEnvironment::new(&d, vec![0, 1]);
        let mut rng = BanditRng::seed_from_u64(9);
        let score: f64 = (0..n)
            .map(|_| match env.duel(Pair::new(0, 1), &mut rng) {
                Outcome::FirstWins => 1.0,
                Outcome::SecondWins => 0.0,
                Outcome::Tie => 0.5,
            })
            .sum::<f64>()
            / n as f64;
        assert!((score - expected).abs() < 0.056, "{score} vs {expected}");
        // The spread is real here (the reversed ranker can be credited with a relevant
        // document), so a certain outcome would not exercise the draw.
        assert!(expected < 1.0, "{expected}");
    }

    #[test]
    fn optimized_reuses_its_distributions() {
        let d = click_data(Method::Optimized);
        let mut env = ClickEnvironment::new(&d, vec![0, 1]);
        let mut rng = BanditRng::seed_from_u64(10);
        for _ in 0..300 {
            env.duel(Pair::new(0, 1), &mut rng);
        }
        // One LP per query for this ordered pair, however many duels.
        assert!(env.optimized.len() <= 30, "{}", env.optimized.len());
    }

    #[test]
    fn ndcg_and_refusals() {
        let d = click_data(Method::Balanced);
        assert_eq!(d.rankers(), 3);
        assert_eq!(d.queries(), 30);
        assert!((d.ndcg[0] - 1.0).abs() < 1e-12);
        assert!(d.ndcg[1] < 0.5);
        let model: ClickModel = "perfect".parse().unwrap();
        let err =
            ClickData::new(&data(), Method::Probabilistic { tau: -1.0 }, model, 10).unwrap_err();
        assert!(err.contains("tau"), "{err}");
        let one = LetorData::parse("1 qid:1 1:0.5\n0 qid:1 1:0.2\n").unwrap();
        let err = ClickData::new(&one, Method::Balanced, model, 10).unwrap_err();
        assert!(err.contains("at least 2"), "{err}");
    }
}
