//! Shared helpers for the policy tests: run a policy against a preference matrix with immediate
//! or delayed, batched feedback.
#![allow(dead_code)]

use joust::bandit::{Arm, BanditRng, BanditState, Outcome, Pair, PolicySpec, TieRule};
use joust::sim::PrefMatrix;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;

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

/// The outcome of `duel` drawn from `m`: a ranker against itself ties.
pub fn draw_outcome(m: &PrefMatrix, duel: Pair, rng: &mut BanditRng) -> Outcome {
    if duel.first == duel.second {
        Outcome::Tie
    } else if m.duel(duel.first, duel.second, rng) {
        Outcome::FirstWins
    } else {
        Outcome::SecondWins
    }
}

/// Outcomes on their way to the policy: each becomes available `delay` steps after its duel and
/// is applied, in a shuffled batch, once `batch` are available.
struct InFlight {
    feedback: Feedback,
    pending: VecDeque<(usize, Pair, Outcome)>,
    ready: Vec<(Pair, Outcome)>,
}

impl InFlight {
    fn new(feedback: Feedback) -> Self {
        InFlight {
            feedback,
            pending: VecDeque::new(),
            ready: Vec::new(),
        }
    }

    /// Sends the outcome of the duel selected at step `t`, unless it is lost.
    fn send(&mut self, t: usize, duel: Pair, first_wins: bool, rng: &mut BanditRng) {
        if rng.random::<f64>() < self.feedback.lost {
            return;
        }
        let outcome = if duel.first == duel.second {
            Outcome::Tie
        } else if first_wins {
            Outcome::FirstWins
        } else {
            Outcome::SecondWins
        };
        self.pending
            .push_back((t + self.feedback.delay, duel, outcome));
    }

    /// Applies what is due at step `t` once a full batch is available.
    fn deliver(&mut self, t: usize, state: &mut BanditState, rng: &mut BanditRng) {
        while self.pending.front().is_some_and(|(due, _, _)| *due <= t) {
            let (_, duel, outcome) = self.pending.pop_front().unwrap();
            self.ready.push((duel, outcome));
        }
        if self.ready.len() >= self.feedback.batch {
            // Shuffle within the batch: outcomes arrive out of order.
            for i in (1..self.ready.len()).rev() {
                self.ready.swap(i, rng.random_range(0..=i));
            }
            for (duel, outcome) in self.ready.drain(..) {
                state.record(duel, outcome, rng).unwrap();
            }
        }
    }
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
    let mut perm: Vec<Arm> = (0..k).collect();
    for i in (1..k).rev() {
        perm.swap(i, rng.random_range(0..=i));
    }
    let m = matrix.permuted(&perm);
    let mut state = BanditState::new(spec, k, TieRule::Ignore, &mut rng).expect("valid spec");
    let mut in_flight = InFlight::new(feedback);
    for t in 0..steps {
        let pair = state.select(&mut rng);
        assert!(
            state.active[pair.first] && state.active[pair.second],
            "selected a retired arm"
        );
        let first_wins = m.duel(pair.first, pair.second, &mut rng);
        in_flight.send(t, pair, first_wins, &mut rng);
        in_flight.deliver(t, &mut state, &mut rng);
    }
    (state, perm)
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
    let mut perm: Vec<Arm> = (0..k).collect();
    for i in (1..k).rev() {
        perm.swap(i, rng.random_range(0..=i));
    }
    let m = matrix.permuted(&perm);
    let mut state = BanditState::new(spec, k, TieRule::HalfWin, &mut rng).expect("valid spec");
    for _ in 0..steps {
        let pair = state.select(&mut rng);
        assert!(
            state.active[pair.first] && state.active[pair.second],
            "selected a retired arm"
        );
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
        let pair = state.select(&mut rng);
        assert!(
            state.active[pair.first] && state.active[pair.second],
            "selected a retired arm"
        );
        let first_wins = matrix.duel(perm[pair.first], perm[pair.second], &mut rng);
        in_flight.send(t, pair, first_wins, &mut rng);
        in_flight.deliver(t, &mut state, &mut rng);
    }
    (state, perm)
}
