//! `auto` version 4 (Copeland sparring, `src/bandit/policies/copeland_sparring.rs`): replay, the
//! incremental bookkeeping against a recomputation from the win matrix, its linear state, and
//! finding the Condorcet and Copeland winners; version 5 (its Thompson pairing) for replay and
//! the winners.

use crate::helpers::policy_run;
use crate::helpers::policy_run::{DELAYED, IMMEDIATE};
use joust::bandit::{AnyPolicy, BanditRng, BanditState, Outcome, PolicySpec, TieRule};
use joust::sim::scenarios;
use rand::{Rng, SeedableRng};

fn v4() -> PolicySpec {
    PolicySpec::parse_cli("auto:version=4").unwrap()
}

fn v5() -> PolicySpec {
    PolicySpec::parse_cli("auto:version=5").unwrap()
}

/// The cache's confirmed losses, and the same recomputed from the win matrix.
fn losses(state: &BanditState) -> (Option<Vec<u32>>, Vec<u32>) {
    let AnyPolicy::Auto(auto) = &state.policy else {
        panic!("not auto");
    };
    let linear = auto
        .linear
        .as_ref()
        .expect("version 4 runs Copeland sparring");
    let view = state.view();
    (
        linear.cached_losses(&view),
        linear.losses_from_scratch(&view),
    )
}

#[test]
fn the_default_is_version_4() {
    let recorded = PolicySpec::recorded(None, 2);
    assert_eq!(recorded.params["version"], serde_json::json!(4));
    let mut rng = BanditRng::seed_from_u64(1);
    let state = BanditState::new(&recorded, 5, TieRule::Ignore, &mut rng).unwrap();
    assert!(matches!(&state.policy, AnyPolicy::Auto(a) if a.linear.is_some()));
}

#[test]
fn a_seed_replays_exactly_and_a_stored_state_chooses_as_the_live_one() {
    replays(&v4());
}

#[test]
fn version_5_replays_exactly_and_a_stored_state_chooses_as_the_live_one() {
    replays(&v5());
}

fn replays(spec: &PolicySpec) {
    let m = scenarios::random_copeland(12, 3).unwrap();
    for feedback in [IMMEDIATE, DELAYED] {
        let (a, _) = policy_run::run(spec, &m, 20_000, 7, feedback);
        let (b, _) = policy_run::run(spec, &m, 20_000, 7, feedback);
        assert_eq!(a.view().wins, b.view().wins);
        assert_eq!(a, b);
    }
    // Mid-run, the state goes through JSON: unwarmed and warmed copies make the live state's
    // choices from the same random numbers, and keep doing so as outcomes arrive.
    let m = scenarios::random_condorcet(16, 2).unwrap();
    let (mut live, _) = policy_run::run(spec, &m, 5_000, 11, IMMEDIATE);
    let json = serde_json::to_string(&live).unwrap();
    let mut cold: BanditState = serde_json::from_str(&json).unwrap();
    let mut warm: BanditState = serde_json::from_str(&json).unwrap();
    warm.warm();
    assert_eq!(cold, live);
    let mut outcomes = BanditRng::seed_from_u64(5);
    for step in 0..3_000u64 {
        let pairs: Vec<_> = [&live, &cold, &warm]
            .iter()
            .map(|s| s.select(&mut BanditRng::seed_from_u64(step)))
            .collect();
        assert!(
            pairs.iter().all(|p| *p == pairs[0]),
            "step {step}: {pairs:?}"
        );
        let outcome = policy_run::draw_outcome(&m, pairs[0], &mut outcomes);
        for s in [&mut live, &mut cold, &mut warm] {
            s.record(pairs[0], outcome, &mut BanditRng::seed_from_u64(step))
                .unwrap();
        }
    }
    assert_eq!(live, cold);
}

#[test]
fn the_incremental_bookkeeping_equals_a_recomputation() {
    // Random outcomes (ties counted as half a win, self-duels, arms added and retired): after
    // every outcome the cache's confirmed losses are those recomputed from the win matrix.
    let mut rng = BanditRng::seed_from_u64(3);
    let mut state = BanditState::new(&v4(), 8, TieRule::HalfWin, &mut rng).unwrap();
    let mut checked = 0;
    for step in 0..30_000 {
        if step == 10_000 {
            state.add_arm();
        }
        if step == 20_000 {
            state.retire_arm(3).unwrap();
        }
        let pair = state.select(&mut rng);
        // A skewed matrix: arm i beats arm j with probability 0.5 + (j - i) / 40.
        let p = 0.5 + (pair.second as f64 - pair.first as f64) / 40.0;
        let outcome = match rng.random::<f64>() {
            _ if pair.first == pair.second => Outcome::Tie,
            x if x < 0.05 => Outcome::Tie,
            x if x < p => Outcome::FirstWins,
            _ => Outcome::SecondWins,
        };
        state.record(pair, outcome, &mut rng).unwrap();
        if step % 7 == 0 {
            let (cached, scratch) = losses(&state);
            assert_eq!(cached.as_ref(), Some(&scratch), "step {step}");
            checked += 1;
        }
    }
    assert!(checked > 4_000);
}

#[test]
fn its_state_grows_linearly_with_the_rankers() {
    // The persisted policy state (what the duel path deserialises beside the win matrix) is a
    // few numbers per ranker: 4x the rankers give at most 4.5x the bytes, not the 16x of a table
    // per pair.
    let size = |spec: &PolicySpec, k: usize| {
        let mut rng = BanditRng::seed_from_u64(1);
        let mut state = BanditState::new(spec, k, TieRule::Ignore, &mut rng).unwrap();
        for _ in 0..2_000 {
            let pair = state.select(&mut rng);
            let outcome = if pair.first < pair.second {
                Outcome::FirstWins
            } else {
                Outcome::SecondWins
            };
            state.record(pair, outcome, &mut rng).unwrap();
        }
        serde_json::to_string(&state.policy).unwrap().len() as f64
    };
    let ratio = size(&v4(), 160) / size(&v4(), 40);
    assert!(ratio < 4.5, "version 4: {ratio}");
}

/// Runs that name the matrix's winner after `steps`, over `seeds`.
fn hits(
    spec: &PolicySpec,
    m: &joust::sim::PrefMatrix,
    steps: usize,
    seeds: std::ops::Range<u64>,
) -> usize {
    let winners = m.copeland_winners();
    seeds
        .filter(|&s| {
            let (state, perm) = policy_run::run(spec, m, steps, s, IMMEDIATE);
            policy_run::champion_in_matrix(&state, &perm).is_some_and(|c| winners.contains(&c))
        })
        .count()
}

/// The budget: with the bounds of the module docs, a pair (i, j) with gap g = |p_ij - 1/2| is
/// compared at most about 4 alpha ln(T̄) / g^2 times before it is resolved (Hoeffding; RUCB's
/// Lemma 1), T̄ <= 2T. The winner is named once every arm that could pass for it is out of the
/// candidates; we budget the sum of those counts over every pair, T = 4 alpha ln(2T) sum 1/g^2
/// (a fixed point), which also covers the self-duels that make the winner the most played; and
/// twice that, as the decision layer may take half of the steps for its own duels.
fn budget(m: &joust::sim::PrefMatrix) -> usize {
    let mut inverse = 0.0;
    for i in 0..m.k() {
        for j in i + 1..m.k() {
            let g = (m.p(i, j) - 0.5).abs().max(0.01);
            inverse += 1.0 / (g * g);
        }
    }
    let mut t = 1000.0_f64;
    for _ in 0..30 {
        t = 4.0 * 0.51 * (2.0 * t).ln() * inverse;
    }
    (2.0 * t).ceil() as usize
}

#[test]
fn it_finds_the_condorcet_and_copeland_winners() {
    finds_the_winners(&v4());
}

#[test]
fn version_5_finds_the_condorcet_and_copeland_winners() {
    finds_the_winners(&v5());
}

fn finds_the_winners(spec: &PolicySpec) {
    // Thresholds: at the budget each run names the winner with probability p close to 1; we
    // assume only p >= 0.98. 8 runs per matrix: requiring 6 fails by chance with probability
    // P(Bin(8, 0.02) >= 3) < 5e-4 per matrix, 0.003 over the 6; requiring 44 of the 48 runs,
    // P(Bin(48, 0.02) >= 5) < 0.004.
    let matrices = [
        ("arxiv6", scenarios::arxiv6()),
        (
            "utility:2good:linear",
            scenarios::utility("2good", "linear").unwrap(),
        ),
        (
            "random-condorcet:8:1",
            scenarios::random_condorcet(8, 1).unwrap(),
        ),
        (
            "random-condorcet:16:2",
            scenarios::random_condorcet(16, 2).unwrap(),
        ),
        (
            "random-copeland:8:1",
            scenarios::random_copeland(8, 1).unwrap(),
        ),
        (
            "random-copeland:12:3",
            scenarios::random_copeland(12, 3).unwrap(),
        ),
    ];
    let mut total = 0;
    let mut report = Vec::new();
    for (name, m) in &matrices {
        let steps = budget(m);
        let h = hits(spec, m, steps, 0..8);
        report.push(format!("{name} T={steps} {h}/8"));
        assert!(h >= 6, "{name}: {h}/8 runs of {steps} steps named a winner");
        total += h;
    }
    assert!(total >= 44, "{total}/48: {}", report.join(", "));
}
