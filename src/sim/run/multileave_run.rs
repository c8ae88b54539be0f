//! One run of a multi-dueling policy on clicks (`joust simulate --letor ... --rankers-per-query
//! m`, m > 2): every step the policy picks up to m rankers (`select_set`), their lists for a
//! random query are multileaved, a simulated user clicks, and the policy learns every pair's
//! result of that query in one `record_set` ([`ClickEnvironment::query`]).
//!
//! Regret of a step is the mean NDCG@10 utility regret of the rankers shown, `ndcg* - mean of
//! ndcg_r over the shown set`, so a set of two is scored as a duel is. Feedback is immediate (the
//! command line refuses `--delay` and `--batch` with m > 2). Timing and checkpoints are as in
//! [`super::duel_run::run_once`].

use super::duel_run::new_state;
use super::regret::Regret;
use super::run_record::{CheckpointTimer, RunRecord, SimError};
use crate::bandit::{BanditRng, PolicySpec};
use crate::sim::letor::ClickEnvironment;

/// Runs `spec` with `m` rankers per query for `checkpoints.last()` steps on `k` arms.
pub fn run_once_multi(
    spec: &PolicySpec,
    k: usize,
    m: usize,
    environment: &mut ClickEnvironment,
    regret: &Regret,
    checkpoints: &[u64],
    rng: &mut BanditRng,
) -> Result<RunRecord, SimError> {
    let steps = *checkpoints.last().expect("at least one checkpoint");
    let mut state = new_state(spec, k, rng)?;
    // A ranker's share of the regret when shown: of_pair(a, a) is ndcg* - ndcg_a.
    let arm_regret: Vec<f64> = (0..k).map(|a| regret.of_pair(a, a)).collect();
    let mut record = RunRecord::new(regret, steps, checkpoints.len());
    let mut cumulative = 0.0;
    let mut timer = CheckpointTimer::start(checkpoints);
    for step in 1..=steps {
        let set = state
            .select_set(m, rng)
            .map_err(|e| SimError::Invalid(e.to_string()))?;
        cumulative += set.iter().map(|&a| arm_regret[a]).sum::<f64>() / set.len() as f64;
        let outcome = environment.query(&set, rng);
        state.record_set(&set, &outcome, rng)?;
        record.watch_decision(step, &state);
        timer.at_step(step, &mut record, cumulative, &state, regret, environment);
    }
    Ok(record)
}
