//! A policy run against a preference matrix, as the policy tests (and the multi-dueling figures)
//! make it: arms shuffled by the seed, one duel (or one multileaved query) per step, and its
//! feedback immediate or late, batched, shuffled and partly lost. The delay and the batches are
//! the simulator's own queue; the losses and the shuffling within a batch are added here.

use joust::bandit::{Arm, BanditRng, BanditState, Outcome, Pair, PolicySpec, SetOutcome, TieRule};
use joust::sim::FeedbackQueue;
use joust::sim::{PrefMatrix, Regret, scenarios};
use rand::{Rng, SeedableRng};

/// How feedback reaches the policy.
#[derive(Debug, Clone, Copy)]
pub struct Feedback {
    /// Outcomes become available this many steps after their duel was selected.
    pub delay: usize,
    /// Available outcomes are applied in groups of this size (1 = as soon as available).
    pub batch: usize,
    /// Fraction of duels that never get an outcome.
    pub lost: f64,
}

pub const IMMEDIATE: Feedback = Feedback {
    delay: 0,
    batch: 1,
    lost: 0.0,
};
pub const DELAYED: Feedback = Feedback {
    delay: 100,
    batch: 100,
    lost: 0.0,
};

/// The outcome of `duel` drawn from `m`: a ranker against itself ties (and draws nothing).
pub fn draw_outcome(m: &PrefMatrix, duel: Pair, rng: &mut BanditRng) -> Outcome {
    let first_wins = duel.first != duel.second && m.duel(duel.first, duel.second, rng);
    duel_outcome(duel, first_wins)
}

/// Feedback on its way to the policy: each item becomes available `delay` steps after its duel
/// (or query) and is applied, in a shuffled batch, once `batch` are available; a fraction `lost`
/// never arrives.
pub struct InFlight<T> {
    lost: f64,
    queue: FeedbackQueue<T>,
    batch: Vec<T>,
}

impl<T> InFlight<T> {
    pub fn new(feedback: Feedback) -> Self {
        InFlight {
            lost: feedback.lost,
            queue: FeedbackQueue::new(joust::sim::FeedbackTiming {
                delay: feedback.delay as u64,
                batch: feedback.batch,
            }),
            batch: Vec::new(),
        }
    }

    /// Sends the feedback of the duel selected at step `t`, unless it is lost, then hands what is
    /// due at `t` to `apply`, in a shuffled batch (outcomes arrive out of order).
    pub fn step<F: FnMut(T, &mut BanditRng)>(
        &mut self,
        t: usize,
        item: T,
        rng: &mut BanditRng,
        mut apply: F,
    ) {
        if rng.random::<f64>() >= self.lost {
            self.queue.send(t as u64, item);
        }
        self.queue.deliver(t as u64, |item| self.batch.push(item));
        for i in (1..self.batch.len()).rev() {
            self.batch.swap(i, rng.random_range(0..=i));
        }
        for item in self.batch.drain(..) {
            apply(item, rng);
        }
    }
}

/// The duel's outcome as the policy learns it: a ranker against itself ties.
fn duel_outcome(duel: Pair, first_wins: bool) -> Outcome {
    if duel.first == duel.second {
        Outcome::Tie
    } else if first_wins {
        Outcome::FirstWins
    } else {
        Outcome::SecondWins
    }
}

/// Records a delivered outcome.
fn record(state: &mut BanditState, (duel, outcome): (Pair, Outcome), rng: &mut BanditRng) {
    state.record(duel, outcome, rng).unwrap();
}

/// The state's next duel, checked to be between active arms.
fn select_active(state: &mut BanditState, rng: &mut BanditRng) -> Pair {
    let pair = state.select(rng);
    assert!(
        state.active[pair.first] && state.active[pair.second],
        "selected a retired arm"
    );
    pair
}

/// `0..k` shuffled by `rng`, as the papers shuffle the arms.
fn shuffled(k: usize, rng: &mut BanditRng) -> Vec<Arm> {
    let mut perm: Vec<Arm> = (0..k).collect();
    for i in (1..k).rev() {
        perm.swap(i, rng.random_range(0..=i));
    }
    perm
}

/// Runs `spec` on `matrix` for `steps` selections, arms shuffled by `seed` as the papers do.
/// Returns the final state and the permutation (state arm `a` is matrix arm `perm[a]`).
pub fn run(
    spec: &PolicySpec,
    matrix: &PrefMatrix,
    steps: usize,
    seed: u64,
    feedback: Feedback,
) -> (BanditState, Vec<Arm>) {
    let mut rng = BanditRng::seed_from_u64(seed);
    let k = matrix.k();
    let perm = shuffled(k, &mut rng);
    let m = matrix.permuted(&perm);
    let mut state = BanditState::new(spec, k, TieRule::Ignore, &mut rng).expect("valid spec");
    let mut in_flight = InFlight::new(feedback);
    for t in 0..steps {
        let pair = select_active(&mut state, &mut rng);
        let first_wins = m.duel(pair.first, pair.second, &mut rng);
        let outcome = duel_outcome(pair, first_wins);
        in_flight.step(t, (pair, outcome), &mut rng, |item, rng| {
            record(&mut state, item, rng)
        });
    }
    (state, perm)
}

/// Cumulative regret of `spec` on `matrix` (arms shuffled by `seed`, immediate feedback) after
/// each of `marks` steps, in increasing order; the run lasts until the last mark.
pub fn cumulative_regret(
    spec: &PolicySpec,
    matrix: &PrefMatrix,
    seed: u64,
    marks: &[usize],
) -> Vec<f64> {
    let mut rng = BanditRng::seed_from_u64(seed);
    let m = matrix.permuted(&shuffled(matrix.k(), &mut rng));
    let regret = Regret::of(&m);
    let mut state = BanditState::new(spec, m.k(), TieRule::Ignore, &mut rng).expect("valid spec");
    let (mut total, mut at) = (0.0, Vec::with_capacity(marks.len()));
    for t in 1..=marks.last().copied().unwrap_or(0) {
        let pair = state.select(&mut rng);
        total += regret.of_pair(pair.first, pair.second);
        let outcome = draw_outcome(&m, pair, &mut rng);
        state.record(pair, outcome, &mut rng).unwrap();
        if marks.contains(&t) {
            at.push(total);
        }
    }
    at
}

/// The matrix arm the state's champion report names, if any.
pub fn champion_in_matrix(state: &BanditState, perm: &[Arm]) -> Option<Arm> {
    state.champion().ranker.map(|a| perm[a])
}

/// Fraction of `seeds` in which the champion after `steps` is the matrix's Condorcet winner.
pub fn success_rate(
    spec: &PolicySpec,
    matrix: &PrefMatrix,
    steps: usize,
    seeds: std::ops::Range<u64>,
    feedback: Feedback,
) -> f64 {
    let winner = matrix
        .condorcet_winner()
        .expect("matrix has a Condorcet winner");
    let n = seeds.end - seeds.start;
    let hits = seeds
        .filter(|&s| {
            let (state, perm) = run(spec, matrix, steps, s, feedback);
            champion_in_matrix(&state, &perm) == Some(winner)
        })
        .count();
    hits as f64 / n as f64
}

/// Like [`run`] with immediate feedback, but ties count as half a win and a duel of two distinct
/// arms ends in a tie with probability `tie_prob` (otherwise it is drawn from the matrix).
pub fn run_with_ties(
    spec: &PolicySpec,
    matrix: &PrefMatrix,
    steps: usize,
    seed: u64,
    tie_prob: f64,
) -> (BanditState, Vec<Arm>) {
    let mut rng = BanditRng::seed_from_u64(seed);
    let k = matrix.k();
    let perm = shuffled(k, &mut rng);
    let m = matrix.permuted(&perm);
    let mut state = BanditState::new(spec, k, TieRule::HalfWin, &mut rng).expect("valid spec");
    for _ in 0..steps {
        let pair = select_active(&mut state, &mut rng);
        let outcome = if pair.first != pair.second && rng.random::<f64>() < tie_prob {
            Outcome::Tie
        } else {
            draw_outcome(&m, pair, &mut rng)
        };
        state.record(pair, outcome, &mut rng).unwrap();
    }
    (state, perm)
}

/// Like [`run`], but matrix arm `late_arm` joins the experiment only after `add_at` steps (the
/// others start shuffled by `seed`). Returns the final state and `perm` (state arm `a` is matrix
/// arm `perm[a]`; the late arm is the last index).
pub fn run_with_late_arm(
    spec: &PolicySpec,
    matrix: &PrefMatrix,
    late_arm: Arm,
    add_at: usize,
    steps: usize,
    seed: u64,
    feedback: Feedback,
) -> (BanditState, Vec<Arm>) {
    let mut rng = BanditRng::seed_from_u64(seed);
    let mut perm: Vec<Arm> = (0..matrix.k()).filter(|&a| a != late_arm).collect();
    for i in (1..perm.len()).rev() {
        perm.swap(i, rng.random_range(0..=i));
    }
    let mut state =
        BanditState::new(spec, perm.len(), TieRule::Ignore, &mut rng).expect("valid spec");
    let mut in_flight = InFlight::new(feedback);
    for t in 0..steps {
        if t == add_at {
            let arm = state.add_arm();
            assert_eq!(arm, perm.len());
            perm.push(late_arm);
        }
        let pair = select_active(&mut state, &mut rng);
        let first_wins = matrix.duel(perm[pair.first], perm[pair.second], &mut rng);
        let outcome = duel_outcome(pair, first_wins);
        in_flight.step(t, (pair, outcome), &mut rng, |item, rng| {
            record(&mut state, item, rng)
        });
    }
    (state, perm)
}

// ---------------------------------------------------------------------------------------------
// Multi-dueling: m rankers per query, every pair of the shown set compared

/// li-2020's tuned MergeDTS parameters (section 5.6), as the pairwise tests use them.
pub const MERGE_DTS_TUNED: &str = "merge_dts:alpha=0.262144,batch_size=16,c=4000000";

/// A 16-arm matrix with a Condorcet winner that beats every other arm with probability at least
/// 0.6 (gap D >= 0.1): `random-condorcet:16:3` with the winner's row raised to 0.6 where it was
/// lower. The other pairs are uniform in [0.05, 0.95], some of them close to 1/2.
pub fn condorcet16() -> PrefMatrix {
    let base = scenarios::random_condorcet(16, 3).unwrap();
    let w = base.condorcet_winner().unwrap();
    let rows = (0..16)
        .map(|i| {
            (0..16)
                .map(|j| match (i == w, j == w) {
                    (true, false) => base.p(i, j).max(0.6),
                    (false, true) => base.p(i, j).min(0.4),
                    _ => base.p(i, j),
                })
                .collect()
        })
        .collect();
    PrefMatrix::from_rows(rows, None).unwrap()
}

/// Every pair of `set` compared once, drawn from `m` (no ties).
pub fn draw_set_outcome(m: &PrefMatrix, set: &[Arm], rng: &mut BanditRng) -> SetOutcome {
    let mut outcome = SetOutcome::default();
    for (x, &i) in set.iter().enumerate() {
        for &j in &set[x + 1..] {
            outcome
                .wins
                .push(if m.duel(i, j, rng) { (i, j) } else { (j, i) });
        }
    }
    outcome
}

/// Checks a selected set: 1 to m distinct active arms.
pub fn check_set(state: &BanditState, set: &[Arm], m: usize) {
    assert!(!set.is_empty() && set.len() <= m, "{set:?} for m = {m}");
    for (x, &a) in set.iter().enumerate() {
        assert!(state.active[a], "selected retired arm {a} in {set:?}");
        assert!(!set[..x].contains(&a), "repeated arm in {set:?}");
    }
}

/// Runs `spec` with `m` rankers per query on `matrix` for `queries` queries, arms shuffled by
/// `seed`. Returns the final state and the permutation (state arm `a` is matrix arm `perm[a]`).
pub fn run_sets(
    spec: &PolicySpec,
    matrix: &PrefMatrix,
    m: usize,
    queries: usize,
    seed: u64,
    feedback: Feedback,
) -> (BanditState, Vec<Arm>) {
    let (state, perm, _) = run_sets_with_regret(spec, matrix, m, queries, seed, feedback);
    (state, perm)
}

/// [`run_sets`], also returning the cumulative regret: per query, the mean over the shown arms a
/// of p_wa - 1/2 (w the Condorcet winner), which for m = 2 is the Condorcet regret of a duel.
pub fn run_sets_with_regret(
    spec: &PolicySpec,
    matrix: &PrefMatrix,
    m: usize,
    queries: usize,
    seed: u64,
    feedback: Feedback,
) -> (BanditState, Vec<Arm>, f64) {
    let mut rng = BanditRng::seed_from_u64(seed);
    let k = matrix.k();
    let perm = shuffled(k, &mut rng);
    let pm = matrix.permuted(&perm);
    let mut state = BanditState::new(spec, k, TieRule::Ignore, &mut rng).expect("valid spec");
    let mut in_flight = InFlight::new(feedback);
    let winner = pm.condorcet_winner();
    let mut regret = 0.0;
    for t in 0..queries {
        let set = state.select_set(m, &mut rng).unwrap();
        check_set(&state, &set, m);
        if let Some(w) = winner {
            regret += set.iter().map(|&a| pm.p(w, a) - 0.5).sum::<f64>() / set.len() as f64;
        }
        let outcome = draw_set_outcome(&pm, &set, &mut rng);
        in_flight.step(t, (set, outcome), &mut rng, |(set, outcome), rng| {
            state.record_set(&set, &outcome, rng).unwrap();
        });
    }
    (state, perm, regret)
}
