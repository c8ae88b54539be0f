//! Fidelity of every interleaving method: when the clicks do not depend on the documents, neither
//! ranker may win more often. Checked for each method at its defaults and at every documented
//! option, on list pairs of equal and unequal lengths whose documents are identical, overlapping
//! or disjoint, under two click models: one click on a uniformly random shown position, and each
//! shown position clicked independently with probability 1/2.
//!
//! The win probabilities are computed exactly, not estimated: every way a method can build its
//! shown list is enumerated through the library itself, driven by a scripted random source (each
//! coin, and each draw among documents or candidate lists, is set in turn to every value it can
//! take, with its probability), and every click set is enumerated too. A fair method gives
//! P(A wins) = P(B wins) up to rounding (1e-9).
//!
//! Over HTTP (a server on a fresh database), each setting interleaves each list pair: the shown
//! list and its teams must be one the enumeration gives positive probability, and the recorded
//! winner and credits must be the library's for the posted clicks. So the service runs exactly
//! the enumerated, fair procedure; each request is one draw, which keeps this part quick.

use crate::helpers::http_server::{
    TestApp, distinct_duel, ranker_lists, shown_documents, spawn_app,
};
use joust::bandit::BanditRng;
use joust::interleave::{
    DEFAULT_TAU, Exhausted, Interleaving, Method, SharedPrefix, SoftOutcome, TeamDraftOptions,
    interleave, optimized_distribution,
};
use rand::{Rng, RngCore, SeedableRng};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Rounding allowed between two probabilities that are equal in exact arithmetic.
const EXACT: f64 = 1e-9;

/// A random source that plays back fixed values: each `next_u32` or `next_u64` consumes one,
/// and past the end it returns 0 (counting how many were asked for, so that an enumeration
/// knows the procedure wanted another draw). `rand` turns a `u32` into a coin by its top bit and
/// a `u64` into a float in [0, 1) by its top 53 bits, which is how the values are built.
struct Script {
    values: Vec<u64>,
    used: usize,
}

impl Script {
    fn new(values: &[u64]) -> Self {
        Script {
            values: values.to_vec(),
            used: 0,
        }
    }

    fn coin(heads: bool) -> u64 {
        u64::from(heads) << 63
    }

    /// The value `rng.random::<f64>()` reads as `u` (to 2^-53).
    fn uniform(u: f64) -> u64 {
        ((u * (1u64 << 53) as f64) as u64) << 11
    }

    fn next(&mut self) -> u64 {
        let v = self.values.get(self.used).copied().unwrap_or(0);
        self.used += 1;
        v
    }
}

impl RngCore for Script {
    fn next_u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.next()
    }
    fn fill_bytes(&mut self, _: &mut [u8]) {
        unreachable!("interleaving draws coins and floats only")
    }
}

/// Every interleaving `method` can build from (a, b) with at most `cap` shown, with its
/// probability (the same shown list may appear on several lines; the probabilities sum to 1).
fn support(method: &Method, a: &[u32], b: &[u32], cap: usize) -> Vec<(Interleaving<u32>, f64)> {
    let mut out = Vec::new();
    match method {
        Method::Probabilistic { tau } => {
            probabilistic_paths(a, b, *tau, cap, &mut vec![], 1.0, &mut out)
        }
        Method::Optimized => {
            let d = optimized_distribution(a, b, cap).unwrap();
            let total: f64 = d.probabilities.iter().sum();
            let mut below = 0.0;
            for (list, &p) in d.lists.iter().zip(&d.probabilities) {
                // The middle of this list's share of [0, total) draws it.
                let mut script = Script::new(&[Script::uniform((below + p / 2.0) / total)]);
                below += p;
                let il = interleave(method, &[a, b], cap, &mut script).unwrap();
                assert_eq!(il.shown(), &list[..]);
                out.push((il, p / total));
            }
        }
        _ => coin_paths(method, a, b, cap, &mut vec![], &mut out),
    }
    let total: f64 = out.iter().map(|(_, p)| p).sum();
    assert!((total - 1.0).abs() < EXACT, "{method:?}: mass {total}");
    out
}

/// Methods whose only randomness is fair coins (Team-Draft, Balanced): every sequence of coins
/// the procedure asks for, each with probability 2^-coins.
fn coin_paths(
    method: &Method,
    a: &[u32],
    b: &[u32],
    cap: usize,
    coins: &mut Vec<u64>,
    out: &mut Vec<(Interleaving<u32>, f64)>,
) {
    let mut script = Script::new(coins);
    let il = interleave(method, &[a, b], cap, &mut script).unwrap();
    if script.used <= coins.len() {
        out.push((il, 0.5f64.powi(coins.len() as i32)));
        return;
    }
    for heads in [false, true] {
        coins.push(Script::coin(heads));
        coin_paths(method, a, b, cap, coins, out);
        coins.pop();
    }
}

/// Probabilistic: per slot a coin picks a ranker and a float picks a document from its softmax
/// over the documents not shown yet (weight rank^-tau; a document the ranker did not list has
/// none). Every (coin, document) choice is enumerated with probability 1/2 * its softmax share,
/// and the float that selects the document is handed to the library, which must show it.
fn probabilistic_paths(
    a: &[u32],
    b: &[u32],
    tau: f64,
    cap: usize,
    chosen: &mut Vec<(bool, u32)>,
    p: f64,
    out: &mut Vec<(Interleaving<u32>, f64)>,
) {
    let method = Method::Probabilistic { tau };
    let shown: Vec<u32> = chosen.iter().map(|&(_, d)| d).collect();
    let mut union: Vec<u32> = a.to_vec();
    union.extend(b.iter().filter(|d| !a.contains(d)));
    let unplaced: Vec<u32> = union.into_iter().filter(|d| !shown.contains(d)).collect();
    let weights = |list: &[u32]| -> Vec<f64> {
        unplaced
            .iter()
            .map(|d| {
                list.iter()
                    .position(|x| x == d)
                    .map_or(0.0, |r| ((r + 1) as f64).powf(-tau))
            })
            .collect()
    };
    let script_for = |chosen: &[(bool, u32)]| -> Vec<u64> {
        let mut values = Vec::new();
        let mut placed: Vec<u32> = Vec::new();
        for &(from_a, d) in chosen {
            let mut union: Vec<u32> = a.to_vec();
            union.extend(b.iter().filter(|x| !a.contains(x)));
            let left: Vec<u32> = union.into_iter().filter(|x| !placed.contains(x)).collect();
            let list = if from_a { a } else { b };
            let w: Vec<f64> = left
                .iter()
                .map(|x| {
                    list.iter()
                        .position(|y| y == x)
                        .map_or(0.0, |r| ((r + 1) as f64).powf(-tau))
                })
                .collect();
            let i = left.iter().position(|&x| x == d).unwrap();
            let total: f64 = w.iter().sum();
            let below: f64 = w[..i].iter().sum();
            values.push(Script::coin(from_a));
            values.push(Script::uniform((below + w[i] / 2.0) / total));
            placed.push(d);
        }
        values
    };
    let mut script = Script::new(&script_for(chosen));
    let il = interleave(&method, &[a, b], cap, &mut script).unwrap();
    if script.used <= 2 * chosen.len() {
        assert_eq!(
            il.shown(),
            &shown[..],
            "the library shows the chosen documents"
        );
        out.push((il, p));
        return;
    }
    for from_a in [true, false] {
        let w = weights(if from_a { a } else { b });
        let total: f64 = w.iter().sum();
        assert!(
            total > 0.0,
            "a slot was asked of a ranker with nothing left"
        );
        for (i, &d) in unplaced.iter().enumerate() {
            if w[i] > 0.0 {
                chosen.push((from_a, d));
                probabilistic_paths(a, b, tau, cap, chosen, p * 0.5 * w[i] / total, out);
                chosen.pop();
            }
        }
    }
}

/// (P(A wins), P(B wins)) under one click on a uniformly random shown position (no click when
/// nothing is shown) and under independent clicks with probability 1/2 per position.
fn win_probabilities(support: &[(Interleaving<u32>, f64)]) -> [(f64, f64); 2] {
    let (mut one, mut each) = ((0.0, 0.0), (0.0, 0.0));
    for (il, p) in support {
        let n = il.shown().len();
        let add = |to: &mut (f64, f64), weight: f64, soft: SoftOutcome| {
            to.0 += weight * soft.a;
            to.1 += weight * soft.b;
        };
        for pos in 0..n {
            add(&mut one, p / n as f64, il.soft_outcome(&[pos]));
        }
        let per_set = p * 0.5f64.powi(n as i32);
        for mask in 0u32..1 << n {
            let clicks: Vec<usize> = (0..n).filter(|i| mask >> i & 1 == 1).collect();
            add(&mut each, per_set, il.soft_outcome(&clicks));
        }
    }
    [one, each]
}

fn td(shared_prefix: SharedPrefix, exhausted: Exhausted) -> Method {
    Method::TeamDraft(TeamDraftOptions {
        shared_prefix,
        exhausted,
    })
}

/// Every method the service offers, at its defaults and at each documented option, with the
/// settings that select it over HTTP.
fn settings() -> Vec<(Method, Value)> {
    let mut out = vec![(
        Method::from_name("team_draft").unwrap(),
        json!({"method": "team_draft"}),
    )];
    for (sp, sp_name) in [
        (SharedPrefix::Draft, "draft"),
        (SharedPrefix::NoCredit, "no_credit"),
    ] {
        for (ex, ex_name) in [(Exhausted::Stop, "stop"), (Exhausted::Continue, "continue")] {
            out.push((
                td(sp, ex),
                json!({"method": "team_draft",
                       "options": {"shared_prefix": sp_name, "exhausted": ex_name}}),
            ));
        }
    }
    out.push((Method::Balanced, json!({"method": "balanced"})));
    out.push((
        Method::Probabilistic { tau: DEFAULT_TAU },
        json!({"method": "probabilistic"}),
    ));
    out.push((
        Method::Probabilistic { tau: 0.5 },
        json!({"method": "probabilistic", "options": {"tau": 0.5}}),
    ));
    out.push((Method::Optimized, json!({"method": "optimized"})));
    out
}

/// List pairs (A, B, length cap): equal and unequal lengths; identical, overlapping and disjoint
/// documents; caps that cut the lists and caps that do not.
fn pairs() -> Vec<(Vec<u32>, Vec<u32>, usize)> {
    vec![
        // Equal lengths: identical documents in the same order, reordered, reversed.
        (vec![1, 2, 3], vec![1, 2, 3], 10),
        (vec![1, 2, 3], vec![2, 3, 1], 10),
        (vec![1, 2, 3, 4], vec![4, 3, 2, 1], 3),
        // Equal lengths: overlapping (a shared top document, shared documents elsewhere).
        (vec![1, 2, 3], vec![1, 4, 5], 10),
        (vec![1, 2, 3, 4], vec![5, 3, 6, 1], 10),
        // Equal lengths: disjoint.
        (vec![1, 2, 3], vec![4, 5, 6], 10),
        (vec![1, 2, 3], vec![4, 5, 6], 3),
        // Unequal lengths: one list's documents all in the other.
        (vec![1], vec![2, 1], 10),
        (vec![1, 2, 3], vec![2, 1], 10),
        // Unequal lengths: overlapping.
        (vec![1, 2], vec![3, 2, 4, 1], 10),
        (vec![1, 2, 3, 4, 5], vec![6, 3, 7], 4),
        // Unequal lengths: disjoint, and one list empty.
        (vec![1, 2], vec![3], 10),
        (vec![1, 2, 3, 4, 5, 6], vec![7, 8, 9], 10),
        (vec![], vec![1, 2], 10),
    ]
}

/// Balanced's bias on shared documents ranked differently is the method's own (Joachims' credit
/// rule; see its module docs), not a matter of list shapes: such pairs are left out for it
/// (`balanced_keeps_its_documented_bias` shows the enumeration sees that bias).
fn balanced_known_bias(a: &[u32], b: &[u32]) -> bool {
    // Balanced compares the top n = min(|A|, |B|) of each list.
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    a.iter()
        .enumerate()
        .any(|(i, d)| b.iter().position(|x| x == d).is_some_and(|j| j != i))
}

#[test]
fn every_method_and_option_is_fair_under_random_clicks_exactly() {
    let mut failures = Vec::new();
    for (method, _) in settings() {
        for (a, b, cap) in pairs() {
            if method == Method::Balanced && balanced_known_bias(&a, &b) {
                continue;
            }
            let s = support(&method, &a, &b, cap);
            for (model, (pa, pb)) in ["one random click", "independent clicks"]
                .iter()
                .zip(win_probabilities(&s))
            {
                if (pa - pb).abs() > EXACT {
                    failures.push(format!(
                        "{method:?} {a:?} vs {b:?} cap {cap}, {model}: A {pa:.6}, B {pb:.6}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "unfair:\n{}", failures.join("\n"));
}

#[test]
fn balanced_keeps_its_documented_bias() {
    // A = (1, 2, 3), B = (2, 3, 1), one random click: B wins 2/3 (module docs of Balanced).
    let [(pa, pb), _] = win_probabilities(&support(&Method::Balanced, &[1, 2, 3], &[2, 3, 1], 10));
    assert!(
        (pa - 1.0 / 3.0).abs() < EXACT && (pb - 2.0 / 3.0).abs() < EXACT,
        "{pa} {pb}"
    );
}

/// Exact win probabilities under one uniformly random click.
fn one_click(method: &Method, a: &[u32], b: &[u32], cap: usize) -> (f64, f64) {
    win_probabilities(&support(method, a, b, cap))[0]
}

#[test]
fn team_draft_default_is_fair_when_the_shorter_list_holds_a_shared_document() {
    // A = (1), B = (2, 1). Stopping the draft in the middle of a round (A first takes 1, and A
    // has nothing left before B picks) showed (1) alone half the time: A won 3/4 of clicks.
    // Rounds are drafted only when both can pick, so (1, 2) and (2, 1): 1/2 each.
    let (pa, pb) = one_click(&Method::from_name("team_draft").unwrap(), &[1], &[2, 1], 10);
    assert!(
        (pa - 0.5).abs() < EXACT && (pb - 0.5).abs() < EXACT,
        "{pa} {pb}"
    );
}

#[test]
fn balanced_does_not_favour_the_longer_list() {
    // A = (1, 2), B = (3): carrying on with A after B was used up showed 2 after (1, 3) or
    // (3, 1), and a click on 2 credited A: A won 2/3 of clicks. Lengths 6 and 3 likewise.
    for (a, b) in [(vec![1, 2], vec![3]), ((1..=6).collect(), vec![7, 8, 9])] {
        let (pa, pb) = one_click(&Method::Balanced, &a, &b, 10);
        assert!((pa - pb).abs() < EXACT, "{a:?} vs {b:?}: {pa} {pb}");
    }
}

#[test]
fn probabilistic_never_credits_a_ranker_for_a_document_it_did_not_list() {
    // A = (1, 2), B = (3): only A lists 2 and only B lists 3, so a click on either must credit
    // its own list with certainty. (Ranking missing documents at len + 1 made B the likelier
    // producer of 2 when shown (3, 2, 1): B won a click on 2 with probability 0.82.)
    let m = Method::Probabilistic { tau: DEFAULT_TAU };
    for (a, b) in [(vec![1, 2], vec![3]), (vec![1, 2, 3], vec![4, 2])] {
        for seed in 0..200 {
            let il = interleave(
                &m,
                &[&a[..], &b[..]],
                3,
                &mut BanditRng::seed_from_u64(seed),
            )
            .unwrap();
            for (pos, d) in il.shown().iter().enumerate() {
                let soft = il.soft_outcome(&[pos]);
                match (a.contains(d), b.contains(d)) {
                    (true, false) => assert_eq!(soft, SoftOutcome::A, "{d} in {:?}", il.shown()),
                    (false, true) => assert_eq!(soft, SoftOutcome::B, "{d} in {:?}", il.shown()),
                    _ => {}
                }
            }
        }
    }
}

#[test]
fn optimized_reads_equal_credits_as_a_tie() {
    // A = (1, 2, 3, 4), B = (4, 3, 2, 1), all four clicked: both credits are 1 + 1/2 + 1/3 + 1/4,
    // summed in different orders (2.0833333333333335 against 2.083333333333333).
    for (il, _) in support(&Method::Optimized, &[1, 2, 3, 4], &[4, 3, 2, 1], 10) {
        assert_eq!(
            il.soft_outcome(&[0, 1, 2, 3]),
            SoftOutcome::TIE,
            "{:?}",
            il.shown()
        );
    }
}

/// The settings' experiment, its duel and the interleaving of (a, b) over HTTP, checked against
/// the enumerated support; returns the support line it matched and the interleaving's body.
async fn interleave_over_http(
    app: &TestApp,
    id: i64,
    method: &Method,
    (a, b, cap): &(Vec<u32>, Vec<u32>, usize),
) -> (Interleaving<u32>, f64, [String; 2], Value) {
    let ids = |l: &[u32]| -> Vec<String> { l.iter().map(|d| format!("d{d}")).collect() };
    let (token, pair) = distinct_duel(app, id).await;
    let (la, lb) = (ids(a), ids(b));
    let il = app.interleave(&token, ranker_lists(&pair, &la, &lb)).await;
    let shown = shown_documents(&il);
    let team_of = |il: &Interleaving<u32>, i: usize| match il {
        Interleaving::TeamDraft(t) => match t.teams[i] {
            joust::interleave::Team::A => Some(pair[0].clone()),
            joust::interleave::Team::B => Some(pair[1].clone()),
            joust::interleave::Team::Nobody => None,
        },
        _ => None,
    };
    let matched = support(method, a, b, *cap).into_iter().find(|(s, _)| {
        s.shown().len() == shown.len()
            && s.shown()
                .iter()
                .enumerate()
                .all(|(i, d)| shown[i] == (format!("d{d}"), team_of(s, i)))
    });
    let (s, p) =
        matched.unwrap_or_else(|| panic!("{method:?}: {il} is not a possible interleaving"));
    (s, p, pair, il)
}

#[tokio::test]
async fn the_service_interleaves_and_credits_as_the_enumerated_methods() {
    let app = spawn_app().await;
    let mut rng = BanditRng::seed_from_u64(13);
    for (method, mut spec) in settings() {
        let mut experiments = std::collections::HashMap::new();
        for pair_case in pairs() {
            let cap = pair_case.2;
            spec["max_length"] = json!(cap);
            if let std::collections::hash_map::Entry::Vacant(e) = experiments.entry(cap) {
                e.insert(experiment(&app, spec.clone()).await);
            }
            let id = experiments[&cap];
            let (s, _, pair, il) = interleave_over_http(&app, id, &method, &pair_case).await;
            let n = s.shown().len();
            let clicks: Vec<usize> = (0..n).filter(|_| rng.random::<bool>()).collect();
            let (status, r) = app.click_positions(&il, &clicks).await;
            assert_eq!(status, StatusCode::OK, "{r}");
            let soft = s.soft_outcome(&clicks);
            let possible = [
                (pair[0].as_str(), soft.a),
                (pair[1].as_str(), soft.b),
                ("tie", soft.tie),
            ];
            let winner = r["winner"].as_str().unwrap();
            assert!(
                possible.iter().any(|&(w, p)| w == winner && p > 0.0),
                "{spec} {pair_case:?} clicks {clicks:?}: {winner} against {soft:?}"
            );
            let credit = s.ranker_credit(&clicks);
            for (name, c) in pair.iter().zip(credit) {
                assert!(
                    (r["credit"][name].as_f64().unwrap() - c).abs() < EXACT,
                    "{r}"
                );
            }
        }
    }
    app.stop().await;
}

async fn experiment(app: &TestApp, interleaving: Value) -> i64 {
    let (s, b) = app
        .post(
            "/v1/experiments",
            json!({"name": "fidelity", "rankers": ["x", "y"], "policy": {"name": "uniform"},
                   "interleaving": interleaving}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    b["id"].as_i64().unwrap()
}

#[tokio::test]
async fn probabilistic_records_outcomes_drawn_from_the_judgement() {
    // tau = 1, A = (1, 2), B = (2, 1), one click on the first shown document: it came from the
    // ranker that ranks it first with probability 2/3 (1 / (1 + 1/2)), so that ranker should win
    // 2/3 of such duels and the other 1/3. Recording the likelier side made the other ranker
    // never win. Over n = 60 duels the other ranker's share has standard error
    // sqrt(2/9 / 60) = 0.061: within 5 se (0.30) of 1/3, which excludes 0.
    let app = spawn_app().await;
    let id = experiment(
        &app,
        json!({"method": "probabilistic", "options": {"tau": 1}}),
    )
    .await;
    let method = Method::Probabilistic { tau: 1.0 };
    let case = (vec![1, 2], vec![2, 1], 10);
    let n = 60;
    let mut less_likely_won = 0;
    for _ in 0..n {
        let (s, _, pair, il) = interleave_over_http(&app, id, &method, &case).await;
        let soft = s.soft_outcome(&[0]);
        let clicks =
            json!({"interleaving_token": il["interleaving_token"], "click_positions": [0]});
        let (status, r) = app.post("/v1/clicks", clicks.clone()).await;
        assert_eq!(status, StatusCode::OK, "{r}");
        let less_likely = if soft.a < soft.b { &pair[0] } else { &pair[1] };
        less_likely_won += usize::from(r["winner"] == less_likely.as_str());
        // The draw is the duel's: the same clicks again are the same outcome, a duplicate.
        let (status, again) = app.post("/v1/clicks", clicks).await;
        assert_eq!(
            (status, again["status"].as_str()),
            (StatusCode::OK, Some("duplicate")),
            "{again}"
        );
    }
    let share = less_likely_won as f64 / n as f64;
    let se = (2.0 / 9.0 / n as f64).sqrt();
    assert!(
        (share - 1.0 / 3.0).abs() < 5.0 * se,
        "less likely side won {share}"
    );
    app.stop().await;
}
