//! Multi-dueling: policies asked for sets of m rankers per query and fed every pairwise
//! preference of the shown list at once (`select_set` / `record_set`). m = 2 through the set
//! methods against `select` / `record` for every policy; state round trips; late, batched and
//! shuffled feedback; arms added and retired; and the multi-dueling policies naming the
//! Condorcet winner of a 16-arm matrix with m = 4 and m = 8 over many seeds.

use crate::helpers::policy_run::{
    DELAYED, IMMEDIATE, MERGE_DTS_TUNED, check_set, condorcet16, draw_set_outcome, run_sets,
};
use joust::bandit::{
    Arm, BanditRng, BanditState, Outcome, PolicySpec, SetError, SetOutcome, StateError, TieRule,
};
use joust::bandit::{POLICY_NAMES, multi_ranker_policies, pair_set};
use joust::sim::scenarios;
use rand::{Rng, SeedableRng};

/// The policies that take more than two rankers per query, as the registry says.
fn multi() -> Vec<&'static str> {
    multi_ranker_policies().collect()
}

fn spec(text: &str) -> PolicySpec {
    PolicySpec::parse_cli(text).unwrap()
}

// ---------------------------------------------------------------------------------------------
// m = 2 is today's path

/// For every policy and both tie rules, on a fixed seed: `select_set(2)` returns `select`'s
/// pair (one arm for a self-duel) and `record_set` leaves the state exactly as `record` does,
/// with ties (10% of the distinct duels) reported as explicit ties.
#[test]
fn two_rankers_through_the_set_methods_make_the_same_choices_for_every_policy() {
    let matrix = scenarios::arxiv6();
    for &name in POLICY_NAMES {
        for ties in [TieRule::Ignore, TieRule::HalfWin] {
            let mut rng_a = BanditRng::seed_from_u64(11);
            let mut rng_b = BanditRng::seed_from_u64(11);
            let mut a = BanditState::new(&PolicySpec::new(name), 6, ties, &mut rng_a).unwrap();
            let mut b = BanditState::new(&PolicySpec::new(name), 6, ties, &mut rng_b).unwrap();
            let mut outcomes = BanditRng::seed_from_u64(12);
            for step in 0..3_000 {
                let pair = a.select(&mut rng_a);
                let set = b.select_set(2, &mut rng_b).unwrap();
                assert_eq!(set, pair_set(pair), "{name} {ties:?} step {step}");
                let (outcome, set_outcome) = if pair.first == pair.second {
                    (Outcome::Tie, SetOutcome::default())
                } else if outcomes.random::<f64>() < 0.1 {
                    let o = SetOutcome {
                        wins: vec![],
                        ties: vec![(pair.second, pair.first)],
                    };
                    (Outcome::Tie, o)
                } else if matrix.duel(pair.first, pair.second, &mut outcomes) {
                    let o = SetOutcome {
                        wins: vec![(pair.first, pair.second)],
                        ties: vec![],
                    };
                    (Outcome::FirstWins, o)
                } else {
                    let o = SetOutcome {
                        wins: vec![(pair.second, pair.first)],
                        ties: vec![],
                    };
                    (Outcome::SecondWins, o)
                };
                a.record(pair, outcome, &mut rng_a).unwrap();
                b.record_set(&set, &set_outcome, &mut rng_b).unwrap();
            }
            assert_eq!(a, b, "{name} {ties:?}: states differ");
            assert_eq!(rng_a, rng_b, "{name} {ties:?}: random streams differ");
        }
    }
}

/// Pairwise policies say so: m = 3 is refused with their limit, m = 1 always.
#[test]
fn set_sizes_are_validated_and_the_limit_is_named() {
    let mut rng = BanditRng::seed_from_u64(1);
    for &name in POLICY_NAMES {
        let state = BanditState::new(&PolicySpec::new(name), 6, TieRule::Ignore, &mut rng).unwrap();
        let max = state.policy.max_rankers_per_query();
        assert_eq!(
            state.select_set(1, &mut rng).unwrap_err(),
            SetError::TooFew(1)
        );
        if multi().contains(&name) {
            assert_eq!(max, usize::MAX, "{name}");
            let set = state.select_set(5, &mut rng).unwrap();
            check_set(&state, &set, 5);
        } else {
            assert_eq!(max, 2, "{name}");
            let err = state.select_set(3, &mut rng).unwrap_err();
            assert_eq!(err, SetError::TooMany { m: 3, max: 2 }, "{name}");
            assert!(err.to_string().contains("at most 2"), "{err}");
        }
    }
}

#[test]
fn malformed_set_outcomes_are_refused_and_change_nothing() {
    let mut rng = BanditRng::seed_from_u64(2);
    let mut state = BanditState::new(&spec("mdb"), 5, TieRule::Ignore, &mut rng).unwrap();
    let before = state.clone();
    let win = |a, b| SetOutcome {
        wins: vec![(a, b)],
        ties: vec![],
    };
    let cases: Vec<(Vec<Arm>, SetOutcome, StateError)> = vec![
        (vec![], SetOutcome::default(), StateError::EmptySet),
        (vec![0, 1, 0], win(0, 1), StateError::RepeatedArm(0)),
        (vec![0, 7], win(0, 7), StateError::UnknownArm(7)),
        (vec![0, 1, 2], win(0, 3), StateError::NotShown(3)),
        (vec![0, 1], win(1, 1), StateError::SelfPreference(1)),
        (
            vec![0, 1, 2],
            SetOutcome {
                wins: vec![(2, 0), (1, 2)],
                ties: vec![(0, 2)],
            },
            StateError::RepeatedPair(0, 2),
        ),
    ];
    for (set, outcome, err) in cases {
        assert_eq!(state.record_set(&set, &outcome, &mut rng), Err(err));
        assert_eq!(state, before);
    }
    // A pairwise policy takes at most two arms.
    let mut rucb = BanditState::new(&spec("rucb"), 5, TieRule::Ignore, &mut rng).unwrap();
    assert_eq!(
        rucb.record_set(&[0, 1, 2], &win(0, 1), &mut rng),
        Err(StateError::SetTooLarge { size: 3, max: 2 })
    );
}

/// Results of a query reach the policy in canonical order whatever order they were listed in,
/// every one counts in the win matrix, and a query counts once in the policy's clock.
#[test]
fn one_query_counts_every_result_once_in_canonical_order() {
    let mut rng = BanditRng::seed_from_u64(3);
    let mut a = BanditState::new(&spec("merge_dts"), 8, TieRule::HalfWin, &mut rng).unwrap();
    let mut b = a.clone();
    let set = [5, 2, 7, 0];
    let outcome = SetOutcome {
        wins: vec![(2, 5), (7, 0), (0, 2), (5, 7)],
        ties: vec![(0, 5), (7, 2)],
    };
    let mut reordered = outcome.clone();
    reordered.wins.reverse();
    reordered.ties = vec![(2, 7), (5, 0)];
    let (mut ra, mut rb) = (BanditRng::seed_from_u64(4), BanditRng::seed_from_u64(4));
    a.record_set(&set, &outcome, &mut ra).unwrap();
    b.record_set(&set, &reordered, &mut rb).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.wins.total_wins(), 4);
    assert_eq!(a.wins.total_ties(), 2);
    assert_eq!(a.wins.wins(2, 5), 1);
    assert_eq!(a.wins.ties(5, 0), 1);
    // No preference at all: nothing changes.
    let before = a.clone();
    a.record_set(&set, &SetOutcome::default(), &mut ra).unwrap();
    assert_eq!(a, before);
}

// ---------------------------------------------------------------------------------------------
// State, feedback and arms

/// Serialising a state mid-run and reading it back (then warming its caches) changes no later
/// choice: the restored state and the original select the same sets from the same seed.
#[test]
fn states_round_trip_mid_run_with_the_same_choices_after() {
    let matrix = scenarios::random_condorcet(12, 5).unwrap();
    for name in multi() {
        let mut rng = BanditRng::seed_from_u64(21);
        let mut state =
            BanditState::new(&PolicySpec::new(name), 12, TieRule::HalfWin, &mut rng).unwrap();
        for _ in 0..400 {
            let set = state.select_set(4, &mut rng).unwrap();
            let outcome = draw_set_outcome(&matrix, &set, &mut rng);
            state.record_set(&set, &outcome, &mut rng).unwrap();
        }
        let json = serde_json::to_string(&state).unwrap();
        let mut restored: BanditState = serde_json::from_str(&json).unwrap();
        restored.check_version().unwrap();
        assert_eq!(restored, state, "{name}");
        restored.warm();
        let mut rng_restored = rng.clone();
        for step in 0..400 {
            let set = state.select_set(4, &mut rng).unwrap();
            let again = restored.select_set(4, &mut rng_restored).unwrap();
            assert_eq!(set, again, "{name}: step {step} after the round trip");
            let outcome = draw_set_outcome(&matrix, &set, &mut rng);
            let _ = draw_set_outcome(&matrix, &set, &mut rng_restored);
            state.record_set(&set, &outcome, &mut rng).unwrap();
            restored
                .record_set(&set, &outcome, &mut rng_restored)
                .unwrap();
        }
        assert_eq!(restored, state, "{name}");
    }
}

/// Feedback applied late, in shuffled groups, and from queries selected on stale states ends in
/// the same win matrix as the same queries' feedback applied in order, and the policies keep
/// selecting valid sets throughout.
#[test]
fn late_and_out_of_order_feedback_counts_the_same() {
    let matrix = scenarios::random_condorcet(10, 9).unwrap();
    for name in multi() {
        let mut rng = BanditRng::seed_from_u64(31);
        let fresh =
            BanditState::new(&PolicySpec::new(name), 10, TieRule::Ignore, &mut rng).unwrap();
        // 300 queries selected from a state that hears nothing until the end (the longest
        // delay), then applied in order to one copy and reversed to another.
        let stale = fresh.clone();
        let mut queries = Vec::new();
        for _ in 0..300 {
            let set = stale.select_set(5, &mut rng).unwrap();
            check_set(&stale, &set, 5);
            let outcome = draw_set_outcome(&matrix, &set, &mut rng);
            queries.push((set, outcome));
        }
        let mut in_order = fresh.clone();
        let mut reversed = fresh.clone();
        for (set, outcome) in &queries {
            in_order.record_set(set, outcome, &mut rng).unwrap();
        }
        for (set, outcome) in queries.iter().rev() {
            reversed.record_set(set, outcome, &mut rng).unwrap();
        }
        assert_eq!(in_order.wins, reversed.wins, "{name}");
        for state in [&in_order, &reversed] {
            for _ in 0..50 {
                let set = state.select_set(5, &mut rng).unwrap();
                check_set(state, &set, 5);
            }
        }
    }
}

/// A ranker retired while its query is in flight: its results still count in the win matrix,
/// the policy learns the rest, and it is never selected again. A ranker added later is shown.
#[test]
fn retired_arms_count_but_are_never_shown_and_added_arms_are() {
    // Nine arms: the state starts with the first eight; the ninth joins later.
    let matrix = scenarios::random_condorcet(9, 4).unwrap();
    for name in multi() {
        let mut rng = BanditRng::seed_from_u64(41);
        let mut state =
            BanditState::new(&PolicySpec::new(name), 8, TieRule::Ignore, &mut rng).unwrap();
        let set = state.select_set(8, &mut rng).unwrap();
        let outcome = draw_set_outcome(&matrix, &set, &mut rng);
        let gone = set[0];
        state.retire_arm(gone).unwrap();
        let before = state.wins.total_wins();
        state.record_set(&set, &outcome, &mut rng).unwrap();
        assert_eq!(
            state.wins.total_wins(),
            before + outcome.wins.len() as u64,
            "{name}"
        );
        let new = state.add_arm();
        let mut shown_new = false;
        for _ in 0..2_000 {
            let set = state.select_set(4, &mut rng).unwrap();
            check_set(&state, &set, 4);
            assert!(!set.contains(&gone), "{name} showed a retired arm");
            shown_new |= set.contains(&new);
            let outcome = draw_set_outcome(&matrix, &set, &mut rng);
            state.record_set(&set, &outcome, &mut rng).unwrap();
        }
        assert!(shown_new, "{name} never showed the added arm");
    }
}

// ---------------------------------------------------------------------------------------------
// Finding the Condorcet winner

/// Queries for m rankers per query.
///
/// Derivation. The champion report names the winner w once it beats every other arm
/// empirically (or the policy's belief is w). By Hoeffding, after n comparisons with an arm it
/// beats by D >= 0.1, w's empirical preference is above 1/2 with probability at least
/// 1 - exp(-2 n D^2); n = 366 makes all 15 right with probability 0.99 (ln(100 * 15) / 0.02).
/// The policies stop comparing an arm j once a bound says it is beaten: u_jw < 1/2 needs
/// n > alpha L / D^2 comparisons with w, L the log term: for `mdb` and `ucb_candidates`
/// (alpha 0.51, L = ln t <= ln 15,000 = 9.6) n = 490; for `merge_dts` at li-2020's tuned
/// alpha = 0.8^6 (L = ln(t + 4e6) = 15.2) n = 398; Thompson sampling spends about
/// ln T / (2 D^2) = 480 comparisons per suboptimal arm. So about n* = 490 comparisons of w with
/// each of the 15 others, 7,350 in all, suffice. A query shows w with probability at least m / 16
/// (the UCB policies draw the shown candidates uniformly, w being one; Thompson sampling and
/// MergeDTS's first arm favour w more) and then compares it with m - 1 arms, so a query yields
/// at least m (m - 1) / 16 comparisons of w: 7,350 * 16 / (m (m - 1)) queries, 9,800 for m = 4
/// and 2,100 for m = 8. This is a worst case (most arms are beaten early by arms far better than
/// them, and w's share grows as they leave); we give 1.5 times that, plus two lags of delayed
/// feedback (each lag, up to delay + batch = 200 queries, can repeat stale choices).
fn queries(m: usize) -> usize {
    let comparisons = 15.0 * 490.0;
    (1.5 * comparisons * 16.0 / (m * (m - 1)) as f64) as usize + 2 * 200
}

/// Seeds per feedback mode, and how many must name the winner. If a policy meets the budget with
/// probability at least 0.95 per seed, fewer than 8 successes in 10 seeds has probability
/// P(Bin(10, 0.95) < 8) = 0.0115; a policy right in at most half of the runs passes one mode
/// with probability P(Bin(10, 0.5) >= 8) = 0.055, and both modes of one m with 0.003. Seeds
/// are fixed, so runs replay exactly.
const SEEDS: u64 = 10;
const MIN_SUCCESSES: usize = 8;

fn assert_names_the_winner(policy: &str, m: usize) {
    let matrix = condorcet16();
    let winner = matrix.condorcet_winner().unwrap();
    let spec = spec(policy);
    // The two feedback modes run on two threads (the runs are independent and seeded).
    let failures: Vec<String> = std::thread::scope(|scope| {
        let modes = [("immediate", IMMEDIATE), ("delayed", DELAYED)].map(|(mode, feedback)| {
            let (spec, matrix) = (&spec, &matrix);
            scope.spawn(move || {
                let hits = (0..SEEDS)
                    .filter(|&seed| {
                        let (state, perm) = run_sets(spec, matrix, m, queries(m), seed, feedback);
                        state.champion().ranker.map(|a| perm[a]) == Some(winner)
                    })
                    .count();
                (hits < MIN_SUCCESSES).then(|| format!("{mode}: {hits} of {SEEDS}"))
            })
        });
        modes
            .into_iter()
            .filter_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{policy} with m = {m} missed the winner: {failures:?}"
    );
}

#[test]
fn mdb_names_the_condorcet_winner_with_4_rankers_per_query() {
    assert_names_the_winner("mdb", 4);
}

#[test]
fn mdb_names_the_condorcet_winner_with_8_rankers_per_query() {
    assert_names_the_winner("mdb", 8);
}

#[test]
fn ucb_candidates_names_the_condorcet_winner_with_4_rankers_per_query() {
    assert_names_the_winner("ucb_candidates", 4);
}

#[test]
fn ucb_candidates_names_the_condorcet_winner_with_8_rankers_per_query() {
    assert_names_the_winner("ucb_candidates", 8);
}

#[test]
fn self_sparring_names_the_condorcet_winner_with_4_rankers_per_query() {
    assert_names_the_winner("self_sparring", 4);
}

#[test]
fn self_sparring_names_the_condorcet_winner_with_8_rankers_per_query() {
    assert_names_the_winner("self_sparring", 8);
}

#[test]
fn merge_dts_names_the_condorcet_winner_with_4_rankers_per_query() {
    assert_names_the_winner(MERGE_DTS_TUNED, 4);
}

#[test]
fn merge_dts_names_the_condorcet_winner_with_8_rankers_per_query() {
    assert_names_the_winner(MERGE_DTS_TUNED, 8);
}
