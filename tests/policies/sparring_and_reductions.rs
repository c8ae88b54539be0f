//! The reductions of Ailon, Karnin and Joachims (2014) and Self-Sparring: Sparring with UCB,
//! Thompson and EXP3 boxes, Self-Sparring, Doubler and MultiSBM. Statistical tests of finding the
//! winner with immediate and with delayed, batched, shuffled feedback; property tests of the
//! policy contract.

use crate::helpers::policy_run;
use crate::helpers::policy_run::{DELAYED, Feedback, IMMEDIATE};
use joust::bandit::{AnyPolicy, BanditRng, BanditState, Outcome, Policy, PolicySpec, TieRule};
use joust::sim::{PrefMatrix, scenarios};
use proptest::prelude::*;
use rand::SeedableRng;

const POLICIES: [&str; 7] = [
    "sparring_ucb",
    "sparring_ts",
    "sparring_exp3",
    "self_sparring",
    "doubler",
    "multi_sbm",
    "auto",
];

/// Step budget for a matrix whose winner is found by single-armed boxes.
///
/// Derivation. Once the other side plays the winner x*, a box sees rewards 1/2 for x* and
/// 1/2 - D_x for arm x, with D_x = P(x* beats x) - 1/2 (in the utility scenarios x* is the best
/// reply to any opponent, and with the linear link the gap is exactly this whatever the
/// opponent). UCB with Algorithm 1's width sqrt((alpha + 2) ln t / (2 n)) stops proposing x once
/// the width falls below D_x, i.e. after n_x = c ln T / D_x^2 pulls with c = (alpha + 2) / 2
/// (Auer et al. 2002; ailon-2014 Lemma 2.2 bounds the probability of exceeding 4 alpha ln T / D_x^2
/// by (2 / alpha) (s / 2)^-alpha). The policies' belief is the arm they played most, which is x*
/// once x* has more than half of the plays: T >= 2 sum_x n_x. Thompson sampling's pulls of x
/// grow as ln T / KL(1/2 - D_x, 1/2) ~ ln T / (2 D_x^2) (Kaufmann et al. 2012); we budget twice
/// that, c = 1. EXP3 (gamma = 0.1, K = 6) moves its log-weight gap by gamma D_x / K a step
/// against a noise of about sqrt(t K / gamma) gamma / K, so it ranks x* first after about
/// K / (gamma D_x^2) = 60 / D_x^2 steps, below 2 sum_x 2 ln T / D_x^2 with ln T ~ 10: we give it
/// UCB1's c = 2. `factor` multiplies the whole budget (Doubler, see its test).
///
/// With late feedback the policy's state lags the selections by up to `delay + batch` steps, and
/// a box (UCB is deterministic between updates) can repeat one proposal for that whole lag:
/// each of the K arms may be over-played by one lag in each of the two boxes, so we add
/// 2 K (delay + batch) steps (batched bandits' extra regret is of this order).
fn budget(m: &PrefMatrix, c: f64, factor: f64, feedback: Feedback) -> usize {
    let best = m
        .condorcet_winner()
        .expect("scenario has a Condorcet winner");
    let inverse_gaps: f64 = (0..m.k())
        .filter(|&x| x != best)
        .map(|x| 1.0 / (m.p(best, x) - 0.5).powi(2))
        .sum();
    // T = 2 c ln(T) S has a fixed point reached in a few iterations from T = 1000.
    let mut t = 1000.0_f64;
    for _ in 0..30 {
        t = 2.0 * c * t.ln() * inverse_gaps;
    }
    let lag = 2 * m.k() * (feedback.delay + feedback.batch);
    (factor * t).ceil() as usize + lag
}

/// The 15 utility scenarios of ailon-2014 section 7 and the arXiv 6-arm matrix (its
/// preferences are not utility-based but follow a total order, ailon-2014's "YJ" setting, in
/// which the paper runs the same algorithms).
fn utility_and_arxiv6() -> Vec<(String, PrefMatrix)> {
    let mut all = scenarios::all_utility();
    all.push(("arxiv6".to_string(), scenarios::arxiv6()));
    all
}

const SEEDS_PER_CASE: u64 = 6;

/// Runs `policy` on every scenario with both feedback modes and checks the success counts.
///
/// Thresholds. Each run succeeds with probability p, which the budget derivation puts close to
/// 1; we assume only p >= 0.98. Per feedback mode there are 16 scenarios x 6 seeds = 96 runs:
/// requiring at least 90 successes fails by chance with probability
/// P(Bin(96, 0.02) >= 7) ~ 0.003; requiring at least 4 of 6 in every scenario fails by chance
/// with probability at most 16 * P(Bin(6, 0.02) >= 3) ~ 16 * 1.6e-4 = 0.003.
fn check_finds_winners(policy: &str, c: f64, factor: f64) {
    let spec = PolicySpec::parse_cli(policy).unwrap();
    for (mode, feedback, first_seed) in [("immediate", IMMEDIATE, 0), ("delayed", DELAYED, 1000)] {
        let mut total = 0;
        let mut report = Vec::new();
        for (name, m) in utility_and_arxiv6() {
            let steps = budget(&m, c, factor, feedback);
            let seeds = first_seed..first_seed + SEEDS_PER_CASE;
            let rate = policy_run::success_rate(&spec, &m, steps, seeds, feedback);
            let hits = (rate * SEEDS_PER_CASE as f64).round() as u64;
            total += hits;
            report.push(format!("{name} T={steps} {hits}/{SEEDS_PER_CASE}"));
            assert!(
                hits >= 4,
                "{policy} ({mode}) found the winner of {name} in {hits}/{SEEDS_PER_CASE} runs of {steps} steps"
            );
        }
        assert!(
            total >= 90,
            "{policy} ({mode}): {total}/96 successes: {}",
            report.join(", ")
        );
    }
}

#[test]
fn sparring_ucb_finds_the_winner() {
    check_finds_winners("sparring_ucb", 2.0, 1.0);
}

#[test]
fn sparring_ts_finds_the_winner() {
    check_finds_winners("sparring_ts", 1.0, 1.0);
}

#[test]
fn sparring_exp3_finds_the_winner() {
    check_finds_winners("sparring_exp3", 2.0, 1.0);
}

#[test]
fn self_sparring_finds_the_winner() {
    check_finds_winners("self_sparring", 1.0, 1.0);
}

/// `auto` version 2 is Self-Sparring until an arm is confidently beaten, and an elimination
/// removes the Condorcet winner with probability at most e^-3 ln(T) / K^2 (its module docs; under
/// 0.5% for these budgets and K >= 3), so Self-Sparring's budget applies. (Version 3 is DTS and
/// MergeDTS: `auto_version_3_is_dts_up_to_copeland_max_arms_and_tuned_merge_dts_above` below.)
#[test]
fn auto_version_2_finds_the_winner() {
    check_finds_winners("auto:version=2", 1.0, 1.0);
}

#[test]
fn auto_version_3_is_dts_up_to_copeland_max_arms_and_tuned_merge_dts_above() {
    // The same seed gives the same duels, the same win matrix and the same champion as DTS
    // (20 arms, at most 256), and as merge_dts with alpha 0.8^6 and batches of 16 when
    // copeland_max_arms is below the 20 arms, with immediate and delayed feedback.
    let m = scenarios::cycle();
    let merge = PolicySpec::parse_cli("merge_dts:alpha=0.262144,batch_size=16").unwrap();
    for (auto, same) in [
        (
            PolicySpec::parse_cli("auto:version=3").unwrap(),
            PolicySpec::new("dts"),
        ),
        (
            PolicySpec::parse_cli("auto:version=3,copeland_max_arms=19").unwrap(),
            merge,
        ),
    ] {
        for (feedback, seed) in [(IMMEDIATE, 3u64), (DELAYED, 4)] {
            let (a, _) = policy_run::run(&auto, &m, 20_000, seed, feedback);
            let (b, _) = policy_run::run(&same, &m, 20_000, seed, feedback);
            assert_eq!(a.view().wins, b.view().wins, "{} seed {seed}", same.name);
            assert_eq!(a.policy.belief(&a.view()), b.policy.belief(&b.view()));
            assert_eq!(
                a.policy.contenders(&a.view()),
                b.policy.contenders(&b.view())
            );
            let back: BanditState =
                serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
            assert_eq!(back, a);
        }
    }
}

#[test]
fn auto_version_3_moves_from_dts_to_merge_dts_when_rankers_are_added_past_its_limit() {
    // copeland_max_arms 6: DTS chooses for up to 6 active arms; a seventh makes MergeDTS take
    // over from the win matrix, with the retired arm left out, and the state still round-trips.
    let spec = PolicySpec::parse_cli("auto:version=3,copeland_max_arms=6").unwrap();
    let mut rng = BanditRng::seed_from_u64(9);
    let mut state = BanditState::new(&spec, 6, TieRule::Ignore, &mut rng).unwrap();
    for _ in 0..500 {
        let pair = state.select(&mut rng);
        state.record(pair, Outcome::FirstWins, &mut rng).ok();
    }
    assert_eq!(
        state.policy.contenders(&state.view()),
        None,
        "DTS names no contenders"
    );
    // Retired, then one added: 6 active arms, still DTS; a second one makes 7.
    state.retire_arm(2).unwrap();
    state.add_arm();
    assert_eq!(state.policy.contenders(&state.view()), None);
    state.add_arm();
    let contenders = state.policy.contenders(&state.view());
    assert!(
        contenders
            .as_ref()
            .is_some_and(|c| !c.contains(&2) && c.contains(&6) && c.contains(&7)),
        "MergeDTS's survivors: {contenders:?}"
    );
    for _ in 0..2_000 {
        let pair = state.select(&mut rng);
        assert!(pair.first != 2 && pair.second != 2);
        state.record(pair, Outcome::FirstWins, &mut rng).ok();
    }
    let back: BanditState = serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
    assert_eq!(back, state);
}

#[test]
fn multi_sbm_finds_the_winner() {
    // alpha = 3: c = (3 + 2) / 2. The best arm's box dominates the plays (Theorem 4.2).
    check_finds_winners("multi_sbm", 2.5, 1.0);
}

#[test]
fn doubler_finds_the_winner() {
    // Doubler's belief is the previous epoch's right arms. At step T the last completed epoch
    // holds at least a quarter of the T outcomes, and its box learnt from scratch: the budget
    // is four times Sparring's.
    check_finds_winners("doubler", 2.0, 4.0);
}

/// Mean cumulative regret over `runs` seeds at steps `steps / 2` and `steps`, immediate
/// feedback, arms shuffled per seed.
fn regret_at_half_and_end(policy: &str, m: &PrefMatrix, steps: usize, runs: u64) -> (f64, f64) {
    let spec = PolicySpec::parse_cli(policy).unwrap();
    let (mut half, mut end) = (0.0, 0.0);
    for seed in 0..runs {
        let at = policy_run::cumulative_regret(&spec, m, seed, &[steps / 2, steps]);
        half += at[0];
        end += at[1];
    }
    (half / runs as f64, end / runs as f64)
}

/// Policies whose boxes have logarithmic regret stop accumulating it: on 1good:linear (gaps
/// 0.3), the regret of the second half of a run is well below that of the first.
///
/// Derivation. With regret a + b ln t (a, b >= 0; Auer et al. 2002 for UCB, Kaufmann et al. 2012
/// for Thompson sampling, ailon-2014 Theorem 4.2 for MultiSBM), the second half adds b ln 2,
/// at most ln 2 / ln(T / 2) = 0.07 of the first half's at T = 2 * 10^4. We require at most
/// one half, which also absorbs the mean of 20 runs being noisy. A policy that keeps playing
/// suboptimal duels has linear regret and a ratio near 1: Sparring with UCB boxes had 0.88
/// (816, then +717) while its two boxes credited a self-duel with 1/2 each and so kept exploring
/// in lockstep.
/// Doubler is left out: its boxes restart every epoch, so its curve is a staircase whose steps
/// do not fall at T / 2 and T. EXP3 boxes explore at the constant rate gamma: linear by design.
#[test]
fn regret_flattens_for_logarithmic_boxes() {
    let m = scenarios::utility("1good", "linear").unwrap();
    let mut report = Vec::new();
    let mut worst: f64 = 0.0;
    for policy in ["sparring_ucb", "sparring_ts", "self_sparring", "multi_sbm"] {
        let (half, end) = regret_at_half_and_end(policy, &m, 20_000, 20);
        worst = worst.max((end - half) / half);
        report.push(format!("{policy}: {half:.0} then +{:.0}", end - half));
    }
    assert!(worst <= 0.5, "{}", report.join(", "));
}

/// Cycle (K = 20): arm 0 beats every arm with 0.51, the others beat each other in a cycle with
/// certainty. No utility explains it, so ailon-2014's bounds (utility-based) do not cover any of
/// these policies here; finding arm 0 with confidence would take on the order of
/// 2 * 19 * ln T / 0.01^2 ~ 4e6 steps even if they did. What is tested instead is what still
/// holds.
const CYCLE_STEPS: usize = 20_000;

#[test]
fn on_the_cycle_ucb_boxes_keep_trying_every_arm() {
    // UCB proposes any arm with no pulls first and an arm's index grows without bound while it
    // is not pulled, so in sparring_ucb, doubler and multi_sbm every arm takes part in duels.
    // With 20 arms and 20,000 steps, each must appear in at least one decided duel.
    let m = scenarios::cycle();
    for policy in ["sparring_ucb", "doubler", "multi_sbm"] {
        let spec = PolicySpec::new(policy);
        for (feedback, seed) in [(IMMEDIATE, 1), (DELAYED, 2)] {
            let (state, _) = policy_run::run(&spec, &m, CYCLE_STEPS, seed, feedback);
            for a in 0..20 {
                let duels: u32 = (0..20).map(|b| state.wins.decided(a, b)).sum();
                assert!(duels > 0, "{policy}: arm {a} never dueled");
            }
        }
    }
}

#[test]
fn on_the_cycle_exp3_boxes_are_not_exploited() {
    // EXP3's guarantee holds against any opponent (ailon-2014 section 6, Auer et al. 2002):
    // a box's average reward is at least that of the best fixed arm minus
    // (e - 1) gamma + K ln K / (gamma T). Arm 0 wins at least 0.49 of its duels against
    // anything (0.51 against cycle arms, 1/2 against itself), so with gamma = 0.1, K = 20,
    // T = 20,000: each box averages at least 0.49 - 0.172 - 0.030 = 0.288 in expectation. The
    // two boxes' rewards add up to one per duel, so each stays within [0.288, 0.712]; we allow
    // 0.04 for the randomness of one run (the reward average of 20,000 duels has a standard
    // deviation below 0.004) and for joust's departure from EXP3's protocol (late feedback: the
    // importance weight uses the probability at update time), which the bound does not model:
    // the test shows it does not break it.
    let m = scenarios::cycle();
    let spec = PolicySpec::new("sparring_exp3");
    for (feedback, seed) in [(IMMEDIATE, 3), (DELAYED, 4)] {
        let (state, _) = policy_run::run(&spec, &m, CYCLE_STEPS, seed, feedback);
        let AnyPolicy::SparringExp3(s) = &state.policy else {
            panic!("not sparring_exp3");
        };
        for b in [&s.left, &s.right] {
            let reward: f64 = (0..20).map(|a| b.mean(a).unwrap_or(0.0) * b.pulls(a)).sum();
            let average = reward / b.total_pulls();
            assert!(
                (0.248..=0.752).contains(&average),
                "a box averaged {average}"
            );
        }
    }
}

#[test]
fn auto_version_2_drops_cycle_members_but_never_the_condorcet_winner() {
    // li-2020's Cycle: arm 0 beats the 19 others with p = 0.51; they beat their 9 left
    // neighbours with p = 1. A cycle member that keeps losing to a neighbour leaves contention
    // after about (2 ln t + 2 ln K + slack) / ln 2 decided duels; the winner, whose true
    // preference over every arm is above 1/2, is dropped at step t with probability at most
    // e^-slack / (K^2 t) (Chernoff's bound, and a union over the t sample sizes its pair can
    // have), so over 20,000 steps with slack 6 at most e^-6 (ln 20,000 + 0.58) / 400 = 6.5e-5
    // per run, 0.13% over these 20 runs.
    let m = scenarios::cycle();
    let spec = PolicySpec::parse_cli("auto:version=2,slack=6").unwrap();
    let mut dropped = 0;
    for (feedback, first) in [(IMMEDIATE, 0u64), (DELAYED, 100)] {
        for seed in first..first + 10 {
            let (state, perm) = policy_run::run(&spec, &m, 20_000, seed, feedback);
            let contenders = state.policy.contenders(&state.view()).unwrap();
            assert!(
                contenders.iter().any(|&a| perm[a] == 0),
                "seed {seed}: the winner left contention"
            );
            dropped += 20 - contenders.len();
            if contenders.len() == 1 {
                assert_eq!(policy_run::champion_in_matrix(&state, &perm), Some(0));
            }
        }
    }
    // Eliminations happened (the point of the design); how many is reported, not asserted.
    println!("cycle members dropped in 20 runs of 20,000 steps: {dropped} of 380");
    assert!(dropped > 0);
}

/// Five arms without a Condorcet winner, every preference 0.9 or 0.1: arm 0 beats 1, 2 and 4
/// but loses to 3, so it is the unique Copeland winner (3 wins; arms 1, 2 and 3 have 2, arm 4
/// has 1).
fn copeland_five() -> PrefMatrix {
    let beats = [
        (0, 1),
        (0, 2),
        (0, 4),
        (3, 0),
        (1, 3),
        (1, 4),
        (2, 1),
        (2, 3),
        (4, 2),
        (3, 4),
    ];
    let mut rows = vec![vec![0.5; 5]; 5];
    for (w, l) in beats {
        rows[w][l] = 0.9;
        rows[l][w] = 0.1;
    }
    PrefMatrix::from_rows(rows, None).unwrap()
}

#[test]
fn auto_version_2_hands_a_matrix_without_condorcet_winner_to_dts() {
    // Every arm is beaten by some arm with p = 0.9, so every arm can be confidently beaten:
    // n KL(0.1, 1/2) = 0.368 n passes 2 ln t + 2 ln K + 3 = 26.0 at t = 20,000 after about 71
    // decided duels of the pair. The last arm in contention is then challenged by the eliminated
    // arm that beats it (a Thompson draw of Beta(s + 1, f + 1) from such a pair's duels is above
    // 1/2 with probability near 1 after a few of them), and DTS takes over. No bound on when is
    // proven; 20,000 steps is over 25 times the about 10 pairs x 71 duels the eliminations need,
    // and in 200 seeds measured (100 immediate, 100 delayed) every run had handed over. DTS then names the Copeland winner
    // (every relation is decided with 0.9, so its lower bounds separate all pairs well within
    // this budget). A run that has handed over also round-trips through JSON.
    let m = copeland_five();
    assert_eq!(m.condorcet_winner(), None);
    let spec = PolicySpec::parse_cli("auto:version=2").unwrap();
    for (feedback, first) in [(IMMEDIATE, 0u64), (DELAYED, 100)] {
        for seed in first..first + 10 {
            let (state, perm) = policy_run::run(&spec, &m, 20_000, seed, feedback);
            assert_eq!(
                state.policy.contenders(&state.view()),
                None,
                "seed {seed}: no hand-over to DTS"
            );
            assert_eq!(
                policy_run::champion_in_matrix(&state, &perm),
                Some(0),
                "seed {seed}"
            );
            let back: BanditState =
                serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
            assert_eq!(back, state);
        }
    }
}

#[test]
fn auto_version_1_never_hands_over() {
    // The first design is kept for stored experiments: on the matrix and seeds where version 2
    // hands over (the test above), it keeps eliminating, down to one arm at most.
    let m = copeland_five();
    let spec = PolicySpec::parse_cli("auto:version=1").unwrap();
    for seed in 0..5 {
        let (state, _) = policy_run::run(&spec, &m, 20_000, seed, IMMEDIATE);
        let contenders = state.policy.contenders(&state.view());
        assert!(
            contenders.as_ref().is_some_and(|c| !c.is_empty()),
            "seed {seed}: {contenders:?}"
        );
    }
}

// Sparring with Thompson boxes and Self-Sparring on the cycle: no guarantee of either kind (no
// utility, no adversarial bound, and an untried arm is only likely, not certain, to be drawn),
// so the cycle is left to the property tests' contract checks.

#[test]
fn lost_feedback_still_finds_the_winner() {
    // A third of the outcomes never arrive: every policy learns from the rest, which are an
    // unbiased sample of the duels it chose, so the budget grows by 3/2. One scenario, 2good
    // with the linear link (gaps 0.05 and 0.3), with the thresholds of `check_finds_winners`
    // for one scenario (at least 4 of 6).
    let lossy = Feedback {
        delay: 20,
        batch: 10,
        lost: 1.0 / 3.0,
    };
    let m = scenarios::utility("2good", "linear").unwrap();
    for (policy, c, factor) in [
        ("sparring_ucb", 2.0, 1.5),
        ("sparring_ts", 1.0, 1.5),
        ("sparring_exp3", 2.0, 1.5),
        ("self_sparring", 1.0, 1.5),
        ("auto:version=2", 1.0, 1.5),
        ("doubler", 2.0, 6.0),
        ("multi_sbm", 2.5, 1.5),
    ] {
        let spec = PolicySpec::parse_cli(policy).unwrap();
        let steps = budget(&m, c, factor, lossy);
        let rate = policy_run::success_rate(&spec, &m, steps, 0..6, lossy);
        assert!(rate >= 4.0 / 6.0, "{policy}: {rate} in {steps} steps");
    }
}

#[test]
fn every_policy_state_round_trips_through_json() {
    let m = scenarios::arxiv6();
    for policy in POLICIES {
        let spec = PolicySpec::new(policy);
        let (state, _) = policy_run::run(&spec, &m, 3000, 7, DELAYED);
        let json = serde_json::to_string(&state).unwrap();
        let back: BanditState = serde_json::from_str(&json).unwrap();
        assert_eq!(back, state, "{policy}");
        assert_eq!(back.policy.name(), policy);
    }
}

#[test]
fn parameters_have_the_papers_defaults_and_are_validated() {
    let mut rng = BanditRng::seed_from_u64(1);
    for policy in POLICIES {
        assert!(AnyPolicy::build(&PolicySpec::new(policy), 6, &mut rng).is_ok());
        let unknown = PolicySpec::parse_cli(&format!("{policy}:nonsense=1")).unwrap();
        assert!(AnyPolicy::build(&unknown, 6, &mut rng).is_err(), "{policy}");
    }
    for bad in [
        "sparring_ucb:alpha=0",
        "sparring_exp3:gamma=0",
        "sparring_exp3:gamma=1.5",
        "doubler:alpha=-1",
        "multi_sbm:window=0",
        "multi_sbm:alpha=0",
        "auto:slack=-1",
        "auto:version=9",
        "auto:challenge_draws=65",
    ] {
        let spec = PolicySpec::parse_cli(bad).unwrap();
        let err = AnyPolicy::build(&spec, 6, &mut rng).unwrap_err();
        let name = bad.split([':', '=']).nth(1).unwrap();
        assert!(err.to_string().contains(name), "{bad}: {err}");
    }
    let ok = PolicySpec::parse_cli("multi_sbm:alpha=4,window=1").unwrap();
    assert!(AnyPolicy::build(&ok, 6, &mut rng).is_ok());
}

/// One step of a random experiment: select, then the outcome (or its loss), or a change of arms.
#[derive(Debug, Clone)]
enum Op {
    /// Select a duel; the outcome is `outcome` % 4: first wins, second wins, tie, lost.
    Duel {
        outcome: u8,
    },
    AddArm,
    /// Retire the active arm at this position (mod the number of active arms).
    Retire(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => any::<u8>().prop_map(|outcome| Op::Duel { outcome }),
        1 => Just(Op::AddArm),
        1 => any::<usize>().prop_map(Op::Retire),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn contract_holds_under_random_feedback_and_arm_changes(
        policy in prop::sample::select(POLICIES.to_vec()),
        k in 2usize..8,
        seed in any::<u64>(),
        ops in prop::collection::vec(op(), 1..300),
    ) {
        let mut rng = BanditRng::seed_from_u64(seed);
        let mut state =
            BanditState::new(&PolicySpec::new(policy), k, TieRule::HalfWin, &mut rng).unwrap();
        let mut decided = 0u64;
        // Outcomes are applied late: each duel's outcome waits in a queue applied every 5 duels.
        let mut pending = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            match op {
                Op::Duel { outcome } => {
                    let pair = state.select(&mut rng);
                    prop_assert!(state.active[pair.first] && state.active[pair.second],
                        "{policy} selected a retired arm: {pair:?} {:?}", state.active);
                    pending.push((pair, outcome % 4));
                }
                Op::AddArm => {
                    let arm = state.add_arm();
                    prop_assert_eq!(arm, state.k() - 1);
                }
                Op::Retire(n) => {
                    let active: Vec<usize> = (0..state.k()).filter(|&a| state.active[a]).collect();
                    if active.len() > 2 {
                        state.retire_arm(active[n % active.len()]).unwrap();
                    }
                }
            }
            if i % 5 == 4 {
                for (pair, outcome) in pending.drain(..).rev() {
                    match outcome {
                        _ if pair.first == pair.second && outcome < 3 => {
                            state.record(pair, Outcome::Tie, &mut rng).unwrap();
                        }
                        0 => { state.record(pair, Outcome::FirstWins, &mut rng).unwrap(); decided += 1; }
                        1 => { state.record(pair, Outcome::SecondWins, &mut rng).unwrap(); decided += 1; }
                        2 => state.record(pair, Outcome::Tie, &mut rng).unwrap(),
                        _ => {}
                    }
                }
            }
        }
        prop_assert_eq!(state.wins.total_wins(), decided);
        let json = serde_json::to_string(&state).unwrap();
        let back: BanditState = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(&back, &state);
        // The restored state selects exactly as the original would.
        let mut r1 = BanditRng::seed_from_u64(seed ^ 1);
        let mut r2 = BanditRng::seed_from_u64(seed ^ 1);
        prop_assert_eq!(back.select(&mut r1), state.select(&mut r2));
        if let Some(c) = state.policy.belief(&state.view()) {
            prop_assert!(state.active[c]);
        }
    }
}
