//! One run: a policy against an environment for a number of steps, recording cumulative regret
//! and whether the champion is the true winner at each checkpoint.
//!
//! The loop is what `steps_per_second` measures, so it adds as little as possible to the
//! policy's own cost: static dispatch (`AnyPolicy` is an enum), regret as two table lookups, a
//! checkpoint test of one integer compare, and no allocation per step of its own. The
//! environment's cost is counted: a preference-matrix draw is one uniform and one compare; a
//! click duel interleaves, simulates clicks and credits them (self-duels are free). The champion
//! report (O(K^2)) is computed at checkpoints only and is not counted in the timing.

use super::environment::{Environment, Outcome};
use super::feedback::{Feedback, FeedbackQueue};
use super::regret::{Regret, RegretKind};
use super::thread_clock::ThreadClock;
use crate::bandit::{BanditRng, BanditState, Pair, PolicySpec, SpecError, StateError, TieRule};

/// Why a simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("the policy selected an invalid duel: {0}")]
    State(#[from] StateError),
    #[error("{0}")]
    Matrix(String),
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
    /// With simulated users: clicks per query and NDCG@10 of the shown lists over the steps
    /// since the previous checkpoint (empty for a preference matrix).
    pub clicks: Vec<f64>,
    pub shown_ndcg: Vec<f64>,
    pub steps: u64,
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
            clicks: Vec::new(),
            shown_ndcg: Vec::new(),
            steps,
            nanos: 0,
        }
    }

    /// Records one checkpoint: the cumulative regret, whether the champion is a true winner, and
    /// the users' measures when the environment has users.
    pub fn checkpoint<E: Environment>(
        &mut self,
        cumulative: f64,
        state: &BanditState,
        regret: &Regret,
        environment: &mut E,
    ) {
        let champion = state.champion().ranker;
        self.regret.push(cumulative);
        self.correct
            .push(champion.is_some_and(|c| regret.is_winner(c)));
        if let Some((clicks, ndcg)) = environment.take_user_measures() {
            self.clicks.push(clicks);
            self.shown_ndcg.push(ndcg);
        }
    }
}

fn apply<R: rand::Rng + ?Sized>(
    state: &mut BanditState,
    pair: Pair,
    outcome: Outcome,
    rng: &mut R,
) -> Result<(), StateError> {
    state.record(pair, outcome, rng)
}

/// Runs `spec` for `checkpoints.last()` steps on `k` arms against `environment`, scoring duels
/// with `regret`. Ties are recorded and otherwise ignored by the policy (`TieRule::Ignore`), the
/// papers' convention for self-duels.
pub fn run_once<E: Environment>(
    spec: &PolicySpec,
    k: usize,
    environment: &mut E,
    regret: &Regret,
    checkpoints: &[u64],
    feedback: Feedback,
    rng: &mut BanditRng,
) -> Result<RunRecord, SimError> {
    let steps = *checkpoints.last().expect("at least one checkpoint");
    let mut state = BanditState::new(spec, k, TieRule::Ignore, rng)?;
    let mut queue = FeedbackQueue::new(feedback);
    let immediate = feedback.is_immediate();
    let mut record = RunRecord::new(regret, steps, checkpoints.len());
    let mut cumulative = 0.0;
    let mut next = 0;
    let mut next_checkpoint = checkpoints[0];
    let mut failure: Option<StateError> = None;
    let mut started = ThreadClock::now();
    for step in 1..=steps {
        let pair = state.select(rng);
        cumulative += regret.of_pair(pair.first, pair.second);
        let outcome = environment.duel(pair, rng);
        if immediate {
            apply(&mut state, pair, outcome, rng)?;
        } else {
            queue.push(step, pair, outcome, |p, o| {
                if let Err(e) = apply(&mut state, p, o, rng) {
                    failure.get_or_insert(e);
                }
            });
            if let Some(e) = failure.take() {
                return Err(e.into());
            }
        }
        if step == next_checkpoint {
            record.nanos += started.elapsed_nanos();
            record.checkpoint(cumulative, &state, regret, environment);
            next += 1;
            next_checkpoint = checkpoints.get(next).copied().unwrap_or(u64::MAX);
            started = ThreadClock::now();
        }
    }
    Ok(record)
}
