//! Many runs of several policies, in parallel, aggregated into a [`Summary`].

use rand::SeedableRng;
use rayon::prelude::*;

use super::checkpoints::log_spaced;
use super::decision_limit::DecisionLimit;
use super::decision_options::split_decision;
use super::duel_run::run_once;
use super::environment::{Environment, MatrixEnvironment};
use super::feedback_timing::FeedbackTiming;
use super::multileave_run::run_once_multi;
use super::regret::Regret;
use super::regret_limit::regret_rate;
use super::run_record::{RunRecord, SimError};
use super::seeds::run_seed;
use crate::bandit::{AnyPolicy, BanditRng, PolicySpec, list_names, multi_ranker_policies};
use crate::interleave::METHODS;
use crate::sim::letor::{ClickEnvironment, LetorPlan};
use crate::sim::matrix::MatrixPlan;
use crate::sim::report::{PolicySummary, Summary, Timing};

/// What answers the duels: a preference matrix, or clicks on interleaved LETOR rankings.
#[derive(Debug, Clone)]
pub enum DuelSource {
    Matrix {
        /// How `--matrix` was given, for the report.
        name: String,
        plan: MatrixPlan,
    },
    Letor(LetorPlan),
}

impl DuelSource {
    /// Arms per run.
    pub fn k(&self) -> usize {
        match self {
            DuelSource::Matrix { plan, .. } => plan.k(),
            DuelSource::Letor(plan) => plan.k(),
        }
    }
}

/// Everything that determines a simulation's numbers (the thread count does not).
#[derive(Debug, Clone)]
pub struct Simulation {
    pub source: DuelSource,
    /// Each policy with the text it was given as (the report names policies by it).
    pub policies: Vec<(String, PolicySpec)>,
    pub steps: u64,
    pub runs: u64,
    pub seed: u64,
    pub feedback: FeedbackTiming,
    pub checkpoints_per_decade: u32,
    /// Rankers compared per query: 2 (duels), or more through one multileaved list (`--letor`
    /// only).
    pub rankers_per_query: usize,
}

impl Simulation {
    /// Refuses invalid policy specs before any run starts, with the policy's own error.
    pub fn validate(&self) -> Result<(), SimError> {
        if self.steps == 0 || self.runs == 0 {
            return Err(SimError::Invalid(
                "--steps and --runs must be at least 1".into(),
            ));
        }
        if self.policies.is_empty() {
            return Err(SimError::Invalid("give at least one --policy".into()));
        }
        let m = self.rankers_per_query;
        if m > 2 {
            self.validate_multi()?;
        }
        let mut rng = BanditRng::seed_from_u64(0);
        for (text, spec) in &self.policies {
            let (spec, _) = split_decision(spec)
                .map_err(|e| SimError::Invalid(format!("--policy `{text}`: {e}")))?;
            let policy = AnyPolicy::build(&spec, self.source.k(), &mut rng)?;
            if policy.max_rankers_per_query() < m {
                return Err(SimError::Invalid(format!(
                    "--policy `{text}` compares at most {} rankers per query; \
                     --rankers-per-query {m} needs {}",
                    policy.max_rankers_per_query(),
                    list_names(multi_ranker_policies(), "or")
                )));
            }
        }
        Ok(())
    }

    /// What m > 2 rankers per query needs: clicks on LETOR data, a multileaving method that
    /// takes m lists, and immediate feedback.
    fn validate_multi(&self) -> Result<(), SimError> {
        let m = self.rankers_per_query;
        let DuelSource::Letor(plan) = &self.source else {
            return Err(SimError::Invalid(
                "--rankers-per-query above 2 needs --letor (a preference matrix answers duels)"
                    .into(),
            ));
        };
        let method = &plan.data.method;
        if !method.is_multileave() || method.max_rankers() < m {
            let fitting: Vec<&str> = METHODS
                .iter()
                .filter(|info| info.multileave && info.max_rankers >= m)
                .map(|info| info.name)
                .collect();
            return Err(SimError::Invalid(format!(
                "--rankers-per-query {m}: --method {} cannot merge {m} lists; use {}",
                method.name(),
                fitting.join(", ")
            )));
        }
        if !self.feedback.is_immediate() {
            return Err(SimError::Invalid(
                "--delay and --batch work with duels only (--rankers-per-query 2)".into(),
            ));
        }
        Ok(())
    }

    pub fn checkpoints(&self) -> Vec<u64> {
        log_spaced(self.steps, self.checkpoints_per_decade)
    }

    /// One run: run `run` of every policy starts from the same seed, so it sees the same matrix
    /// (or the same arms of the LETOR data; the query and click draws then follow the policy's).
    pub fn run_one(&self, policy: usize, run: u64) -> Result<RunRecord, SimError> {
        let mut rng = BanditRng::seed_from_u64(run_seed(self.seed, run));
        let spec = &self.policies[policy].1;
        match &self.source {
            DuelSource::Matrix { plan, .. } => {
                let matrix = plan.draw(&mut rng).map_err(SimError::Invalid)?;
                let regret = Regret::of(&matrix);
                let k = matrix.k();
                let delta = split_decision(spec).map_err(SimError::Invalid)?.1.delta;
                let limit = DecisionLimit::of(&matrix, delta);
                let rate = regret_rate(&matrix, &regret);
                let mut environment = MatrixEnvironment::new(matrix);
                let mut record = self.duel_run(spec, k, &mut environment, &regret, &mut rng)?;
                record.limit = limit;
                record.regret_rate = Some(rate);
                Ok(record)
            }
            DuelSource::Letor(plan) => {
                let arms = plan.draw(&mut rng);
                let regret = plan.regret(&arms);
                let k = arms.len();
                let mut environment = ClickEnvironment::new(&plan.data, arms);
                let m = self.rankers_per_query;
                if m <= 2 {
                    return self.duel_run(spec, k, &mut environment, &regret, &mut rng);
                }
                let checkpoints = self.checkpoints();
                run_once_multi(
                    spec,
                    k,
                    m,
                    &mut environment,
                    &regret,
                    &checkpoints,
                    &mut rng,
                )
            }
        }
    }

    /// A run of duels of `spec` on `k` arms against `environment`, scored by `regret`.
    fn duel_run<E: Environment>(
        &self,
        spec: &PolicySpec,
        k: usize,
        environment: &mut E,
        regret: &Regret,
        rng: &mut BanditRng,
    ) -> Result<RunRecord, SimError> {
        let checkpoints = self.checkpoints();
        run_once(
            spec,
            k,
            environment,
            regret,
            &checkpoints,
            self.feedback,
            rng,
        )
    }

    /// Runs every policy `runs` times over `threads` worker threads, calling `on_run_done` after
    /// each run (for a progress bar). The result does not depend on `threads` except for timing.
    pub fn run(
        &self,
        threads: usize,
        on_run_done: &(dyn Fn() + Sync),
    ) -> Result<Summary, SimError> {
        self.validate()?;
        let started = std::time::Instant::now();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build()
            .map_err(|e| SimError::Threads {
                threads,
                message: e.to_string(),
            })?;
        let jobs: Vec<(usize, u64)> = (0..self.policies.len())
            .flat_map(|p| (0..self.runs).map(move |r| (p, r)))
            .collect();
        let records: Vec<RunRecord> = pool.install(|| {
            jobs.par_iter()
                .map(|&(p, r)| {
                    let record = self.run_one(p, r);
                    on_run_done();
                    record
                })
                .collect::<Result<Vec<_>, _>>()
        })?;
        let checkpoints = self.checkpoints();
        let policies = self
            .policies
            .iter()
            .zip(records.chunks(self.runs as usize))
            .map(|((label, _), runs)| PolicySummary::aggregate(label, &checkpoints, runs))
            .collect();
        let (matrix, letor, subset, winners) = match &self.source {
            DuelSource::Matrix { name, plan } => match plan {
                MatrixPlan::Whole(m) => (
                    Some(name.clone()),
                    None,
                    None,
                    Some(
                        Regret::of(m)
                            .winners()
                            .iter()
                            .map(|&w| m.names()[w].clone())
                            .collect(),
                    ),
                ),
                MatrixPlan::CondorcetSubsets { k, .. } => {
                    (Some(name.clone()), None, Some(*k), None)
                }
            },
            DuelSource::Letor(plan) => (
                None,
                Some(plan.summary(self.rankers_per_query)),
                plan.subset,
                plan.subset.is_none().then(|| plan.winners()),
            ),
        };
        Ok(Summary {
            matrix,
            letor,
            k: self.source.k(),
            subset,
            winners,
            steps: self.steps,
            runs: self.runs,
            seed: self.seed,
            delay: self.feedback.delay,
            batch: self.feedback.batch,
            policies,
            timing: Timing {
                threads,
                wall_seconds: started.elapsed().as_secs_f64(),
            },
        })
    }
}
