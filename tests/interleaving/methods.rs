//! Interleaving methods: fidelity under random clicks, hand-worked examples, edge cases, serde.
//!
//! Statistical checks use a z-test: over n independent draws of a bounded statistic X, the sample
//! mean has standard error se = s / sqrt(n) (s the sample standard deviation), and a method with
//! E[X] = 0 lands within 5 se of zero except with probability below 6e-7 (normal tail), small
//! enough for the few dozen such checks here. The seeds are fixed, so a run is reproducible; the
//! bound is not tuned to them.

use joust::bandit::BanditRng;
use joust::interleave::{
    Exhausted, InterleaveError, Interleaving, Method, Outcome, SharedPrefix, SoftOutcome, Team,
    TeamDraftOptions, dedup, interleave, optimized_distribution,
};
use joust::sim::ClickModel;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use std::collections::HashSet;

fn td(shared_prefix: SharedPrefix, exhausted: Exhausted) -> Method {
    Method::TeamDraft(TeamDraftOptions {
        shared_prefix,
        exhausted,
    })
}

fn all_methods() -> Vec<Method> {
    vec![
        td(SharedPrefix::Draft, Exhausted::Stop),
        td(SharedPrefix::NoCredit, Exhausted::Continue),
        Method::Balanced,
        Method::Probabilistic { tau: 3.0 },
        Method::Optimized,
        Method::TeamDraftMultileave,
    ]
}

fn build<D: joust::interleave::Doc>(
    m: &Method,
    a: &[D],
    b: &[D],
    cap: usize,
    seed: u64,
) -> Interleaving<D> {
    interleave(m, &[a, b], cap, &mut BanditRng::seed_from_u64(seed)).unwrap()
}

/// Mean and standard error of the samples.
fn mean_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// Draws `n` interleavings of (a, b) with `m`, clicks each shown document independently with
/// probability 1/2 (the `random` click model), and returns per draw the statistic the method
/// promises to keep unbiased: the expected outcome P(A wins) - P(B wins) (Team-Draft,
/// Probabilistic, Multileave, Balanced), or, for Optimized, A's credit minus B's credit.
fn random_click_statistic(
    m: &Method,
    a: &[u32],
    b: &[u32],
    cap: usize,
    n: usize,
    seed: u64,
) -> Vec<f64> {
    let mut rng = BanditRng::seed_from_u64(seed);
    let mut clicks = Vec::new();
    (0..n)
        .map(|_| {
            let il = interleave(m, &[a, b], cap, &mut rng).unwrap();
            ClickModel::Random.simulate(il.shown().iter().map(|_| 0), &mut rng, &mut clicks);
            match m {
                Method::Optimized => {
                    let c = il.ranker_credit(&clicks);
                    c[0] - c[1]
                }
                _ => il.soft_outcome(&clicks).expected(),
            }
        })
        .collect()
}

/// Fixed, deliberately asymmetric list pairs (a fair method must be fair on each one, not just on
/// average over swapped pairs): rotated, reversed, partly overlapping, lists that hold different
/// documents, with even and odd caps no longer than either list.
fn fidelity_pairs() -> Vec<(Vec<u32>, Vec<u32>, usize)> {
    vec![
        (vec![0, 1, 2], vec![1, 2, 0], 3),
        ((0..10).collect(), (0..10).rev().collect(), 10),
        ((0..10).collect(), (5..15).collect(), 10),
        ((0..10).collect(), vec![3, 0, 20, 1, 21, 9, 4, 22, 8, 7], 7),
    ]
}

#[test]
fn fair_methods_show_no_preference_under_random_clicks() {
    // Team-Draft gives both teams the same number of picks, or one more decided by a fair coin;
    // Probabilistic and Multileave are fair for any lists; Optimized makes the expected credit
    // zero by construction. (tests/interleaving/fidelity.rs computes the win probabilities
    // exactly, for unequal lengths and every option too.)
    let methods = [
        (td(SharedPrefix::Draft, Exhausted::Stop), 20_000),
        (td(SharedPrefix::NoCredit, Exhausted::Continue), 20_000),
        (Method::Probabilistic { tau: 3.0 }, 20_000),
        (Method::TeamDraftMultileave, 20_000),
        (Method::Optimized, 1_500),
    ];
    for (m, n) in &methods {
        for (p, (a, b, cap)) in fidelity_pairs().iter().enumerate() {
            let (mean, se) = mean_se(&random_click_statistic(m, a, b, *cap, *n, 11 + p as u64));
            assert!(
                mean.abs() <= 5.0 * se,
                "{m:?} on pair {p}: mean {mean}, se {se}"
            );
        }
    }
}

#[test]
fn probabilistic_is_fair_even_for_lists_of_different_documents_and_lengths() {
    // Showing at most as many documents as the shorter list has keeps every slot's coin fair
    // (both rankers can always produce it), so no preference whatever the lists; same 5-se
    // bound as above.
    let m = Method::Probabilistic { tau: 3.0 };
    for (a, b) in [
        (vec![0, 1, 2, 3, 4], vec![9]),
        (vec![], vec![0, 1, 2]),
        (vec![0, 1, 2, 3], vec![3, 7]),
    ] {
        let (mean, se) = mean_se(&random_click_statistic(&m, &a, &b, 10, 20_000, 5));
        assert!(
            mean.abs() <= 5.0 * se,
            "{a:?} vs {b:?}: mean {mean}, se {se}"
        );
    }
}

#[test]
fn the_fidelity_check_detects_known_biases() {
    // The check above can fail. On A = (a, b, c), B = (b, c, a) Balanced under independent random
    // clicks has E[outcome] = -1/4 (for either shown list, the 8 equally likely click sets give
    // A 1, B 3, ties 4).
    let (mean, se) = mean_se(&random_click_statistic(
        &Method::Balanced,
        &[0, 1, 2],
        &[1, 2, 0],
        3,
        20_000,
        3,
    ));
    assert!(
        mean < -5.0 * se && (mean + 0.25).abs() < 5.0 * se,
        "balanced: {mean} ({se})"
    );
}

#[test]
fn balanced_favours_b_two_times_in_three_with_one_random_click() {
    // A = (a, b, c), B = (b, c, a), one click on a uniformly random shown position: B wins with
    // probability 2/3 (Joachims' known bias). n = 30,000 draws: se = sqrt(2/9 / n) = 0.0027,
    // bound 5 se = 0.0136.
    let mut rng = BanditRng::seed_from_u64(8);
    let n = 30_000;
    let mut b_wins = 0;
    for _ in 0..n {
        let il = interleave(
            &Method::Balanced,
            &[&['a', 'b', 'c'][..], &['b', 'c', 'a'][..]],
            10,
            &mut rng,
        )
        .unwrap();
        let click = rng.random_range(0..il.shown().len());
        b_wins += (il.credit(&[click]) == Outcome::B) as usize;
    }
    let rate = b_wins as f64 / n as f64;
    assert!(
        (rate - 2.0 / 3.0).abs() < 5.0 * (2.0 / 9.0 / n as f64).sqrt(),
        "B won {rate}"
    );
}

#[test]
fn balanced_hand_worked() {
    let (a, b) = (['a', 'b', 'c'], ['b', 'c', 'a']);
    let mut seen = HashSet::new();
    for seed in 0..64 {
        let il = build(&Method::Balanced, &a, &b, 10, seed);
        let Interleaving::Balanced(ref inner) = il else {
            panic!()
        };
        // A leads: a (A1), b (B1), then A2 = b and B2 = c... gives (a, b, c); B leads: (b, a, c).
        let want: &[char] = if inner.a_first {
            &['a', 'b', 'c']
        } else {
            &['b', 'a', 'c']
        };
        assert_eq!(il.shown(), want);
        seen.insert(inner.a_first);
        let pos = |d: char| il.shown().iter().position(|&x| x == d).unwrap();
        // One click: a -> k = 1, A's top 1 = {a}: A. b -> B. c -> k = min(3, 2) = 2: only B's
        // top 2 = {b, c} holds c: B.
        assert_eq!(il.credit(&[pos('a')]), Outcome::A);
        assert_eq!(il.credit(&[pos('b')]), Outcome::B);
        assert_eq!(il.credit(&[pos('c')]), Outcome::B);
        // Clicks on a and c: lowest is c, k = 2; A's top 2 {a, b} has 1 click, B's {b, c} has 1.
        assert_eq!(il.credit(&[pos('a'), pos('c')]), Outcome::Tie);
        assert_eq!(il.ranker_credit(&[pos('b'), pos('c')]), [1.0, 2.0]);
        assert_eq!(il.credit(&[]), Outcome::Tie);
    }
    assert_eq!(seen.len(), 2, "both coin sides occur");
}

#[test]
fn team_draft_hand_worked() {
    // A = (a, b), B = (c, d), cap 3. Round 1: the coin's winner picks first, then the other
    // (a and c). Round 2: the coin's winner picks its second document, and the cap ends the list.
    // The shown list is acb, acd, cab or cad, each with probability 1/4.
    let m = td(SharedPrefix::Draft, Exhausted::Stop);
    let mut seen = HashSet::new();
    for seed in 0..100 {
        let il = build(&m, &['a', 'b'], &['c', 'd'], 3, seed);
        let shown: String = il.shown().iter().collect();
        assert!(
            ["acb", "acd", "cab", "cad"].contains(&shown.as_str()),
            "{shown}"
        );
        let Interleaving::TeamDraft(ref inner) = il else {
            panic!()
        };
        for (d, t) in il.shown().iter().zip(&inner.teams) {
            assert_eq!(*t, if *d < 'c' { Team::A } else { Team::B });
        }
        let pos = |d: char| il.shown().iter().position(|&x| x == d).unwrap();
        assert_eq!(il.credit(&[pos('a')]), Outcome::A);
        assert_eq!(il.credit(&[pos('a'), pos('c')]), Outcome::Tie);
        assert_eq!(
            il.credit(&[0, 1, 2]),
            if shown.contains('b') {
                Outcome::A
            } else {
                Outcome::B
            }
        );
        seen.insert(shown);
    }
    assert_eq!(seen.len(), 4);
    // Without the cap round 2 completes (acbd, acdb, cabd or cadb) and nothing is left over, so
    // both options show the same.
    for ex in [Exhausted::Stop, Exhausted::Continue] {
        for seed in 0..20 {
            let shown: String = build(
                &td(SharedPrefix::Draft, ex),
                &['a', 'b'],
                &['c', 'd'],
                10,
                seed,
            )
            .shown()
            .iter()
            .collect();
            assert!(
                ["acbd", "acdb", "cabd", "cadb"].contains(&shown.as_str()),
                "{shown}"
            );
        }
    }
}

#[test]
fn team_draft_shared_prefix_option() {
    let (a, b) = (['x', 'y', 'a', 'b'], ['x', 'y', 'c', 'd']);
    for seed in 0..20 {
        let no_credit = build(
            &td(SharedPrefix::NoCredit, Exhausted::Stop),
            &a,
            &b,
            10,
            seed,
        );
        let Interleaving::TeamDraft(ref inner) = no_credit else {
            panic!()
        };
        assert_eq!(&no_credit.shown()[..2], ['x', 'y']);
        assert_eq!(&inner.teams[..2], [Team::Nobody, Team::Nobody]);
        assert_eq!(
            no_credit.credit(&[0, 1]),
            Outcome::Tie,
            "shared documents credit nobody"
        );
        // Then two complete rounds: a and c, b and d (each in either order).
        assert_eq!(no_credit.shown().len(), 6);
        // Drafting normally, x goes to whichever team picks first.
        let draft = build(&td(SharedPrefix::Draft, Exhausted::Stop), &a, &b, 10, seed);
        assert_ne!(draft.credit(&[0]), Outcome::Tie);
    }
}

#[test]
fn team_draft_exhausted_option() {
    let (a, b) = (['a', 'b', 'c', 'd'], ['e', 'a']);
    let mut seen = HashSet::new();
    for seed in 0..40 {
        // One complete round, a and e in either order; then B has nothing new and drafting
        // stops. (The paper's rule could show b too: a second coin could give A its next pick
        // before B was found to have nothing left.)
        let stop = build(&td(SharedPrefix::Draft, Exhausted::Stop), &a, &b, 10, seed);
        assert!(
            stop.shown() == ['a', 'e'] || stop.shown() == ['e', 'a'],
            "{:?}",
            stop.shown()
        );
        seen.insert(stop.shown().to_vec());
        // `continue` shows the same two rounds' documents, then the rest of A credited to nobody.
        let go_on = build(
            &td(SharedPrefix::Draft, Exhausted::Continue),
            &a,
            &b,
            10,
            seed,
        );
        let Interleaving::TeamDraft(ref inner) = go_on else {
            panic!()
        };
        assert_eq!(&go_on.shown()[..2], stop.shown());
        assert_eq!(&go_on.shown()[2..], ['b', 'c', 'd'], "A's rest is shown");
        assert_eq!(&inner.teams[2..], [Team::Nobody; 3], "and credits nobody");
        assert_eq!(go_on.credit(&[2, 3, 4]), Outcome::Tie);
    }
    assert_eq!(seen.len(), 2);
}

#[test]
fn multileave_hand_worked() {
    // Three rankers with disjoint lists: every round each picks once in a random order, so the
    // top 3 are {a, c, e} and the next 3 {b, d, f}.
    let lists = [&['a', 'b'][..], &['c', 'd'][..], &['e', 'f'][..]];
    let mut rng = BanditRng::seed_from_u64(2);
    for _ in 0..50 {
        let il = interleave(&Method::TeamDraftMultileave, &lists, 10, &mut rng).unwrap();
        let mut top: Vec<char> = il.shown()[..3].to_vec();
        top.sort();
        assert_eq!(top, ['a', 'c', 'e']);
        let pos = |d: char| il.shown().iter().position(|&x| x == d).unwrap();
        let clicks = [pos('a'), pos('d'), pos('b')];
        assert_eq!(il.ranker_credit(&clicks), [2.0, 1.0, 0.0]);
        assert_eq!(il.pairwise(&clicks, 0, 1), SoftOutcome::A);
        assert_eq!(il.pairwise(&clicks, 2, 1), SoftOutcome::B);
        assert_eq!(il.pairwise(&clicks, 2, 2), SoftOutcome::TIE);
    }
}

#[test]
fn probabilistic_hand_worked() {
    // tau = 1, A = (a, b), B = (b, a). Shown (a, b): slot 1 P_A(a) = 1 / 1.5 = 2/3 and
    // P_B(a) = 0.5 / 1.5 = 1/3, so P(slot 1 from A) = 2/3; slot 2 has only b left: 1/2.
    // Click on slot 1: A 2/3, B 1/3. Clicks on both: two A-clicks 2/3 * 1/2 = 1/3, none 1/6,
    // one each (tie) 1/2.
    let m = Method::Probabilistic { tau: 1.0 };
    let il = (0..100)
        .map(|seed| build(&m, &['a', 'b'], &['b', 'a'], 10, seed))
        .find(|il| il.shown() == ['a', 'b'])
        .expect("(a, b) is shown about half the time");
    let close = |x: SoftOutcome, a: f64, b: f64, tie: f64| {
        assert!(
            (x.a - a).abs() < 1e-12 && (x.b - b).abs() < 1e-12 && (x.tie - tie).abs() < 1e-12,
            "{x:?}"
        );
    };
    close(il.soft_outcome(&[0]), 2.0 / 3.0, 1.0 / 3.0, 0.0);
    close(il.soft_outcome(&[0, 1]), 1.0 / 3.0, 1.0 / 6.0, 0.5);
    close(il.soft_outcome(&[]), 0.0, 0.0, 1.0);
    assert_eq!(il.credit(&[0]), Outcome::A);
    assert_eq!(il.credit(&[1]), Outcome::Tie);
    let c = il.ranker_credit(&[0, 1]);
    assert!((c[0] - 7.0 / 6.0).abs() < 1e-12 && (c[1] - 5.0 / 6.0).abs() < 1e-12);
}

#[test]
fn optimized_hand_worked_and_exactly_unbiased() {
    // A = (a), B = (b), two slots: allowed lists (a, b) and (b, a). delta(a) = 1 - 0,
    // delta(b) = 0 - 1, so depth 1 forces probability 1/2 each.
    let d = optimized_distribution(&['a'], &['b'], 10).unwrap();
    assert_eq!(d.unbiased_depth, 2);
    for (list, p) in d.lists.iter().zip(&d.probabilities) {
        assert!(list == &['a', 'b'] || list == &['b', 'a']);
        assert!((p - 0.5).abs() < 1e-12);
    }
    // For every fidelity pair the distribution satisfies each depth's constraint exactly.
    for (a, b, cap) in fidelity_pairs() {
        let d = optimized_distribution(&a, &b, cap).unwrap();
        assert_eq!(d.unbiased_depth, cap.min(d.lists[0].len()));
        assert!((d.probabilities.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(d.probabilities.iter().all(|&p| p >= 0.0));
        let inv_rank = |l: &[u32], x: u32| {
            l.iter()
                .position(|&y| y == x)
                .map_or(0.0, |p| 1.0 / (p + 1) as f64)
        };
        for k in 1..=d.unbiased_depth {
            let bias: f64 = d
                .lists
                .iter()
                .zip(&d.probabilities)
                .map(|(l, p)| {
                    p * l[..k]
                        .iter()
                        .map(|&x| inv_rank(&a, x) - inv_rank(&b, x))
                        .sum::<f64>()
                })
                .sum();
            assert!(bias.abs() < 1e-9, "depth {k}: {bias}");
        }
        // Every list is allowed: each prefix is a union of a prefix of A and a prefix of B.
        for l in &d.lists {
            for k in 1..=l.len() {
                let prefix: HashSet<u32> = l[..k].iter().copied().collect();
                let ok = (0..=a.len()).any(|i| {
                    (0..=b.len()).any(|j| prefix == a[..i].iter().chain(&b[..j]).copied().collect())
                });
                assert!(ok, "{l:?} is not allowed at depth {k}");
            }
        }
    }
    // Credit is inverse rank: a click on b (rank 2 in A, 1 in B) credits A 1/2 and B 1; on c
    // (only in B, rank 3) A 0 and B 1/3.
    let il = build(
        &Method::Optimized,
        &['a', 'b', 'd'],
        &['b', 'a', 'c'],
        10,
        0,
    );
    let pos = |d: char| il.shown().iter().position(|&x| x == d).unwrap();
    assert_eq!(il.ranker_credit(&[pos('b')]), [0.5, 1.0]);
    assert_eq!(il.ranker_credit(&[pos('c')]), [0.0, 1.0 / 3.0]);
    assert_eq!(il.credit(&[pos('b')]), Outcome::B);
    assert_eq!(il.credit(&[pos('a'), pos('b')]), Outcome::Tie);
}

/// The generative model of Probabilistic interleaving, written out independently: the joint
/// probability of the shown list and one assignment of slots to rankers.
fn joint_probability(a: &[u8], b: &[u8], tau: f64, shown: &[u8], from_a: &[bool]) -> f64 {
    let union: Vec<u8> = a
        .iter()
        .chain(b.iter().filter(|d| !a.contains(d)))
        .copied()
        .collect();
    // A document the list does not hold has no weight in its softmax.
    let weight = |l: &[u8], d: u8| {
        l.iter()
            .position(|&x| x == d)
            .map_or(0.0, |r| ((r + 1) as f64).powf(-tau))
    };
    let mut p = 1.0;
    for (i, (&d, &by_a)) in shown.iter().zip(from_a).enumerate() {
        let list = if by_a { a } else { b };
        let rest: f64 = union
            .iter()
            .filter(|u| !shown[..i].contains(u))
            .map(|&u| weight(list, u))
            .sum();
        p *= 0.5 * weight(list, d) / rest;
    }
    p
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn probabilistic_marginal_equals_brute_force_enumeration(
        a in proptest::collection::vec(0u8..9, 0..7),
        b in proptest::collection::vec(0u8..9, 0..7),
        tau in 0.0f64..5.0,
        cap in 0usize..8,
        clicks in proptest::collection::vec(0usize..8, 0..6),
        seed in 0u64..1000,
    ) {
        let il = build(&Method::Probabilistic { tau }, &a, &b, cap, seed);
        let (a, b) = (dedup(&a), dedup(&b));
        let shown = il.shown().to_vec();
        let n = shown.len();
        let clicked: HashSet<usize> = clicks.iter().copied().filter(|&c| c < n).collect();
        let (mut total, mut pa, mut pb) = (0.0, 0.0, 0.0);
        for mask in 0..1u32 << n {
            let from_a: Vec<bool> = (0..n).map(|i| mask >> i & 1 == 1).collect();
            let p = joint_probability(&a, &b, tau, &shown, &from_a);
            let to_a = clicked.iter().filter(|&&c| from_a[c]).count();
            let to_b = clicked.len() - to_a;
            total += p;
            if to_a > to_b { pa += p } else if to_b > to_a { pb += p }
        }
        let got = il.soft_outcome(&clicks);
        prop_assert!((got.a - pa / total).abs() < 1e-9, "{got:?} vs {}", pa / total);
        prop_assert!((got.b - pb / total).abs() < 1e-9, "{got:?} vs {}", pb / total);
        prop_assert!((got.a + got.b + got.tie - 1.0).abs() < 1e-9);
    }

    #[test]
    fn every_method_respects_the_list_invariants(
        a in proptest::collection::vec(0u8..12, 0..10),
        b in proptest::collection::vec(0u8..12, 0..10),
        cap in 0usize..12,
        seed in 0u64..1000,
    ) {
        let union: HashSet<u8> = a.iter().chain(&b).copied().collect();
        for m in all_methods() {
            let il = build(&m, &a, &b, cap, seed);
            let shown = il.shown();
            prop_assert!(shown.len() <= cap, "{m:?} exceeds the cap");
            let distinct: HashSet<u8> = shown.iter().copied().collect();
            prop_assert_eq!(distinct.len(), shown.len(), "{:?} shows a duplicate", m);
            prop_assert!(distinct.is_subset(&union), "{m:?} invents a document");
            // How much each method shows: as much as the cap allows of both lists (Team-Draft
            // with `continue`), of both lists cut to the shorter one's length (Balanced,
            // Optimized), or as many as the shorter list has (Probabilistic). Team-Draft with
            // `stop` and Multileave draft only complete rounds (checked in tests/interleaving/multileave.rs).
            let (da, db) = (dedup(&a), dedup(&b));
            let n = da.len().min(db.len());
            let cut: HashSet<u8> = da[..n].iter().chain(&db[..n]).copied().collect();
            match m {
                Method::TeamDraft(TeamDraftOptions { exhausted: Exhausted::Stop, .. })
                | Method::TeamDraftMultileave => {}
                Method::Balanced | Method::Optimized => {
                    prop_assert_eq!(shown.len(), cap.min(cut.len()), "{:?}", m)
                }
                Method::Probabilistic { .. } => prop_assert_eq!(shown.len(), cap.min(n)),
                _ => prop_assert_eq!(shown.len(), cap.min(union.len()), "{:?} stops early", m),
            }
            // Crediting: no clicks is a tie, and out-of-range clicks are ignored.
            prop_assert_eq!(il.credit(&[]), Outcome::Tie);
            let all: Vec<usize> = (0..shown.len()).collect();
            let mut noisy = all.clone();
            noisy.extend([shown.len(), shown.len() + 5]);
            prop_assert_eq!(il.soft_outcome(&noisy), il.soft_outcome(&all));
        }
    }
}

#[test]
fn duplicates_inside_a_list_count_once() {
    assert_eq!(dedup(&['a', 'a', 'b', 'a', 'c', 'b']), ['a', 'b', 'c']);
    for m in all_methods() {
        let il = build(&m, &['a', 'a', 'b'], &['b', 'b', 'c'], 10, 1);
        let mut shown = il.shown().to_vec();
        shown.sort();
        // A = (a, b), B = (b, c): Team-Draft with `stop` and Multileave end after the first
        // round, which uses A up; Probabilistic shows as many as the shorter list has (two).
        if let Method::Probabilistic { .. } = m {
            assert_eq!(shown.len(), 2);
            continue;
        }
        let stops = matches!(
            m,
            Method::TeamDraft(TeamDraftOptions {
                exhausted: Exhausted::Stop,
                ..
            }) | Method::TeamDraftMultileave
        );
        assert_eq!(
            shown,
            if stops {
                &['a', 'b'][..]
            } else {
                &['a', 'b', 'c'][..]
            },
            "{m:?}"
        );
    }
}

#[test]
fn empty_and_one_sided_lists() {
    let none: [char; 0] = [];
    for m in all_methods() {
        let il = build(&m, &none, &none, 10, 1);
        assert!(il.shown().is_empty(), "{m:?}");
        assert_eq!(il.credit(&[0, 1]), Outcome::Tie);
    }
    // Only B has documents. A comparison with a ranker that has nothing to show cannot be fair
    // and say something: the methods that compare equal lengths show nothing (Team-Draft with
    // `stop`, Balanced, Probabilistic, Optimized), Team-Draft with `continue` shows B's documents
    // credited to nobody, and only Multileave (where a ranker with an empty list has no team)
    // credits B.
    for m in all_methods() {
        for seed in 0..10 {
            let il = build(&m, &none, &['x', 'y'], 10, seed);
            match m {
                Method::TeamDraft(TeamDraftOptions {
                    exhausted: Exhausted::Continue,
                    ..
                }) => {
                    assert_eq!(il.shown().len(), 2);
                    assert_eq!(il.credit(&[0, 1]), Outcome::Tie);
                }
                Method::TeamDraftMultileave => {
                    let x = il.shown().iter().position(|&d| d == 'x').unwrap();
                    assert_eq!(il.credit(&[x]), Outcome::B);
                }
                _ => assert!(il.shown().is_empty(), "{m:?}"),
            }
        }
    }
}

#[test]
fn length_cap_and_bad_input() {
    let long: Vec<u32> = (0..40).collect();
    let rev: Vec<u32> = (0..40).rev().collect();
    for m in all_methods() {
        assert!(build(&m, &long, &rev, 0, 1).shown().is_empty());
        if m != Method::Optimized {
            assert_eq!(build(&m, &long, &rev, 25, 1).shown().len(), 25, "{m:?}");
        }
    }
    let mut rng = BanditRng::seed_from_u64(1);
    let err = interleave(&Method::Optimized, &[&long[..], &rev[..]], 25, &mut rng).unwrap_err();
    assert_eq!(
        err,
        InterleaveError::TooLongForOptimized { max: 12, asked: 25 }
    );
    let three = [&long[..], &rev[..], &long[..]];
    assert!(matches!(
        interleave(&Method::Balanced, &three, 10, &mut rng),
        Err(InterleaveError::NeedsTwoLists { got: 3, .. })
    ));
    assert!(interleave(&Method::TeamDraftMultileave, &three, 10, &mut rng).is_ok());
    assert_eq!(
        interleave(&Method::TeamDraftMultileave, &three[..1], 10, &mut rng).unwrap_err(),
        InterleaveError::TooFewLists { got: 1 }
    );
    let bad_tau = Method::Probabilistic { tau: f64::NAN };
    assert!(matches!(
        interleave(&bad_tau, &three[..2], 10, &mut rng),
        Err(InterleaveError::BadTau(_))
    ));
    let il = build(&Method::Balanced, &long, &rev, 5, 1);
    assert!(il.check_clicks(&[0, 4]).is_ok());
    assert!(
        il.check_clicks(&[5])
            .unwrap_err()
            .contains("only 5 documents")
    );
}

#[test]
fn serde_names_and_round_trips() {
    for (m, name) in all_methods().iter().zip([
        "team_draft",
        "team_draft",
        "balanced",
        "probabilistic",
        "optimized",
        "team_draft_multileave",
    ]) {
        let json = serde_json::to_value(m).unwrap();
        assert_eq!(json["method"], name);
        assert_eq!(&serde_json::from_value::<Method>(json).unwrap(), m);
        assert_eq!(m.name(), name);
        let docs: Vec<String> = ["p", "q", "r", "s"].iter().map(|s| s.to_string()).collect();
        let other: Vec<String> = docs.iter().rev().cloned().collect();
        let il = build(m, &docs, &other, 10, 3);
        let text = serde_json::to_string(&il).unwrap();
        let back: Interleaving<String> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, il, "{text}");
        assert_eq!(back.soft_outcome(&[0, 2]), il.soft_outcome(&[0, 2]));
    }
    // Defaults fill in options that configuration leaves out.
    let m: Method = serde_json::from_str(r#"{"method": "probabilistic"}"#).unwrap();
    assert_eq!(m, Method::Probabilistic { tau: 3.0 });
    let m: Method =
        serde_json::from_str(r#"{"method": "team_draft", "exhausted": "continue"}"#).unwrap();
    assert_eq!(m, td(SharedPrefix::Draft, Exhausted::Continue));
    let m: Method = serde_json::from_str(r#"{"method": "team_draft"}"#).unwrap();
    assert_eq!(m, Method::from_name("team_draft").unwrap());
    assert_eq!(serde_json::to_string(&Outcome::Tie).unwrap(), r#""tie""#);
}

#[test]
fn module_docs_name_only_files_the_project_has() {
    // The interleaving docs must stand on their own: any `.md` file they point at must exist.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for entry in std::fs::read_dir(root.join("src/interleave")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for word in text.split(|c: char| !(c.is_alphanumeric() || "._/-".contains(c))) {
            if let Some(stem) = word.strip_suffix(".md").filter(|s| !s.is_empty()) {
                let file = format!("{stem}.md");
                assert!(
                    root.join(&file).exists() || root.join("docs").join(&file).exists(),
                    "{} points at {file}, which the project does not have",
                    path.display()
                );
            }
        }
    }
}
