//! What a run records, and when: the checkpoints a run walks through, timed so that
//! `steps_per_second` counts the steps and not the checkpoints' own work (the champion report is
//! O(K^2)).

use super::decision_limit::DecisionLimit;
use super::environment::Environment;
use super::regret::{Regret, RegretKind};
use super::thread_clock::ThreadClock;
use crate::bandit::{BanditState, SpecError, StateError};

/// Why a simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("the policy selected an invalid duel: {0}")]
    State(#[from] StateError),
    #[error("{0}")]
    Invalid(String),
    #[error("cannot start {threads} worker threads: {message}")]
    Threads { threads: usize, message: String },
}

/// What one run recorded, one entry per checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    pub regret_kind: RegretKind,
    /// Cumulative regret at each checkpoint.
    pub regret: Vec<f64>,
    /// Whether the champion was a true winner at each checkpoint.
    pub correct: Vec<bool>,
    /// Whether the decision was made at each checkpoint, and whether it named an arm that is not
    /// a true winner (the Condorcet winner; without one, a Copeland winner).
    pub decided: Vec<bool>,
    pub decided_wrong: Vec<bool>,
    /// The first step after which the run was decided: checked after every step for a Condorcet
    /// decision, at checkpoints for a Copeland one.
    pub decided_at: Option<u64>,
    /// With simulated users: clicks per query and NDCG@10 of the shown lists over the steps
    /// since the previous checkpoint (empty for a preference matrix).
    pub clicks: Vec<f64>,
    pub shown_ndcg: Vec<f64>,
    pub steps: u64,
    /// The oracle cost and lower bound of the run's matrix at the run's delta (a preference
    /// matrix with a Condorcet winner only).
    pub limit: Option<DecisionLimit>,
    /// C of the regret lower bound liminf R(T) / ln T >= C of the run's matrix (a preference
    /// matrix only; `regret_limit.rs`).
    pub regret_rate: Option<f64>,
    /// Thread CPU time spent in selection, update and environment draws (checkpoints excluded).
    pub nanos: u64,
}

impl RunRecord {
    /// An empty record for a run of `steps` steps scored by `regret`.
    pub fn new(regret: &Regret, steps: u64, checkpoints: usize) -> RunRecord {
        RunRecord {
            regret_kind: regret.kind(),
            regret: Vec::with_capacity(checkpoints),
            correct: Vec::with_capacity(checkpoints),
            decided: Vec::with_capacity(checkpoints),
            decided_wrong: Vec::with_capacity(checkpoints),
            decided_at: None,
            clicks: Vec::new(),
            shown_ndcg: Vec::new(),
            steps,
            limit: None,
            regret_rate: None,
            nanos: 0,
        }
    }

    /// Notes the first step at which a Condorcet winner is decided (O(1) per step).
    #[inline]
    pub fn watch_decision(&mut self, step: u64, state: &BanditState) {
        if self.decided_at.is_none() && state.condorcet_decided() {
            self.decided_at = Some(step);
        }
    }

    /// Records one checkpoint: the cumulative regret, whether the champion is a true winner,
    /// the decision, and the users' measures when the environment has users.
    pub fn checkpoint<E: Environment>(
        &mut self,
        step: u64,
        cumulative: f64,
        state: &BanditState,
        regret: &Regret,
        environment: &mut E,
    ) {
        let champion = state.champion().ranker;
        self.regret.push(cumulative);
        self.correct
            .push(champion.is_some_and(|c| regret.is_winner(c)));
        let decision = state.decision();
        self.decided.push(decision.decided);
        self.decided_wrong
            .push(decision.decided && decision.winners.iter().any(|&a| !regret.is_winner(a)));
        if decision.decided && self.decided_at.is_none() {
            self.decided_at = Some(step);
        }
        if let Some((clicks, ndcg)) = environment.take_user_measures() {
            self.clicks.push(clicks);
            self.shown_ndcg.push(ndcg);
        }
    }
}

/// Walks a run's checkpoints: one integer compare per step, and at a checkpoint the thread CPU
/// time since the previous one is added to the record before the checkpoint's own work.
pub struct CheckpointTimer<'a> {
    at: &'a [u64],
    next: usize,
    next_step: u64,
    started: ThreadClock,
}

impl<'a> CheckpointTimer<'a> {
    /// Starts the clock; `at` is increasing and not empty, its last entry the run's length.
    pub fn start(at: &'a [u64]) -> Self {
        CheckpointTimer {
            at,
            next: 0,
            next_step: at[0],
            started: ThreadClock::now(),
        }
    }

    /// Records a checkpoint into `record` when `step` is one.
    #[inline]
    pub fn at_step<E: Environment>(
        &mut self,
        step: u64,
        record: &mut RunRecord,
        cumulative: f64,
        state: &BanditState,
        regret: &Regret,
        environment: &mut E,
    ) {
        if step != self.next_step {
            return;
        }
        record.nanos += self.started.elapsed_nanos();
        record.checkpoint(step, cumulative, state, regret, environment);
        self.next += 1;
        self.next_step = self.at.get(self.next).copied().unwrap_or(u64::MAX);
        self.started = ThreadClock::now();
    }
}
