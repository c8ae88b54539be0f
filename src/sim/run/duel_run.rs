//! One run: a policy against an environment for a number of steps, recording cumulative regret
//! and whether the champion is the true winner at each checkpoint.
//!
//! The loop is what `steps_per_second` measures, so it adds as little as possible to the
//! policy's own cost: static dispatch (`AnyPolicy` is an enum), regret as two table lookups, a
//! checkpoint test of one integer compare, and no allocation per step of its own. The
//! environment's cost is counted: a preference-matrix draw is one uniform and one compare; a
//! click duel interleaves, simulates clicks and credits them (self-duels are free). The champion
//! report and the decision (O(K^2)) are computed at checkpoints only and are not counted in the
//! timing; whether a Condorcet winner is decided is checked after every step (O(1), counted).

use super::decision_options::split_decision;
use super::environment::{Environment, Outcome};
use super::feedback_timing::{FeedbackQueue, FeedbackTiming};
use super::regret::Regret;
use super::run_record::{CheckpointTimer, RunRecord, SimError};
use crate::bandit::{BanditRng, BanditState, Pair, PolicySpec, StateError, TieRule};

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
    feedback: FeedbackTiming,
    rng: &mut BanditRng,
) -> Result<RunRecord, SimError> {
    let steps = *checkpoints.last().expect("at least one checkpoint");
    let mut state = new_state(spec, k, rng)?;
    let mut queue = FeedbackQueue::new(feedback);
    let immediate = feedback.is_immediate();
    let mut record = RunRecord::new(regret, steps, checkpoints.len());
    let mut cumulative = 0.0;
    let mut failure: Option<StateError> = None;
    let mut timer = CheckpointTimer::start(checkpoints);
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
        record.watch_decision(step, &state);
        timer.at_step(step, &mut record, cumulative, &state, regret, environment);
    }
    Ok(record)
}

/// A fresh state for the policy of `spec` on `k` arms, with the decision settings `spec` gives
/// ([`split_decision`]). Ties are recorded and otherwise ignored by the policy
/// (`TieRule::Ignore`), the papers' convention for self-duels.
pub fn new_state(
    spec: &PolicySpec,
    k: usize,
    rng: &mut BanditRng,
) -> Result<BanditState, SimError> {
    let (policy, settings) = split_decision(spec).map_err(SimError::Invalid)?;
    let mut state = BanditState::new(&policy, k, TieRule::Ignore, rng)?;
    state.set_decision_settings(settings);
    Ok(state)
}
