//! End to end: a simulated search backend drives a running joust over HTTP, and the champion
//! converges to the Condorcet winner of the users' preferences.

use crate::helpers::http_server;
use joust::sim::PrefMatrix;
use rand::{Rng, SeedableRng};
use reqwest::StatusCode;
use serde_json::json;

/// Four rankers; "best" beats every other with probability at least 0.7.
fn users() -> PrefMatrix {
    let rows = vec![
        vec![0.5, 0.7, 0.75, 0.8],
        vec![0.3, 0.5, 0.6, 0.65],
        vec![0.25, 0.4, 0.5, 0.6],
        vec![0.2, 0.35, 0.4, 0.5],
    ];
    let names = ["best", "good", "fair", "poor"].map(String::from).to_vec();
    PrefMatrix::from_rows(rows, Some(names)).unwrap()
}

/// Creates the experiment with `policy`, or with none (the default policy).
async fn create(app: &http_server::TestApp, policy: Option<&serde_json::Value>) -> i64 {
    let rankers = ["poor", "fair", "best", "good"];
    let Some(policy) = policy else {
        let (s, b) = app
            .post(
                "/v1/experiments",
                json!({"name": "default policy", "rankers": rankers, "seed": 7}),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{b}");
        // The stored spec names the design it runs, so it replays after the default moves on.
        assert_eq!(
            b["policy"],
            json!({"name": "auto", "params": {"version": 8}})
        );
        return b["id"].as_i64().unwrap();
    };
    app.create_experiment(&rankers, policy.clone()).await
}

#[tokio::test]
async fn champion_converges_through_http_for_rucb_merge_dts_and_the_default_policy() {
    let app = http_server::spawn_app().await;
    let m = users();
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
    for policy in [
        Some(json!({"name": "rucb"})),
        Some(json!({"name": "merge_dts", "params": {"c": 400.0}})),
        None,
    ] {
        let id = create(&app, policy.as_ref()).await;
        // 1,500 queries, outcomes posted in batches of 50 as a backend would after a delay.
        let mut pending = Vec::new();
        for _ in 0..1500 {
            let (token, pair) = app.duel(id).await;
            let i = m.names().iter().position(|n| *n == pair[0]).unwrap();
            let j = m.names().iter().position(|n| *n == pair[1]).unwrap();
            let winner = if i == j {
                "tie".to_string()
            } else if rng.random::<f64>() < m.p(i, j) {
                pair[0].clone()
            } else {
                pair[1].clone()
            };
            pending.push(json!({"duel_token": token, "winner": winner}));
            if pending.len() == 50 {
                let (s, b) = app
                    .post("/v1/outcomes/batch", json!({"outcomes": pending}))
                    .await;
                assert_eq!(s, StatusCode::OK, "{b}");
                assert_eq!(b["rejected"], 0, "{b}");
                pending = Vec::new();
            }
        }
        let e = app.experiment(id).await;
        // With gaps of at least 0.2 against "best", 1,500 comparisons give RUCB's and MergeDTS's
        // confidence bounds (radius ~ sqrt(alpha ln t / n)) ample room to separate, and auto's
        // Thompson draws concentrate on "best" (its eliminations need about 250 duels per arm at
        // these gaps): "best" must be the champion. A failure here means the service does not
        // feed the bandit correctly.
        assert_eq!(
            e["champion"]["ranker"], "best",
            "{policy:?}: {}",
            e["champion"]
        );
    }
    app.stop().await;
}

/// The order of a duel's rankers travels in its token to the bandit: the reductions (Sparring,
/// Doubler, MultiSBM) credit each side's box with its own ranker. Doubler's belief shows it
/// exactly: its epochs last 2, 4, 8, 16, 32 decided outcomes, and after the 62nd its belief is
/// the ranker most often second (right) in the last 32, the lowest index among equals. Winners
/// are drawn at random, so a service that lost the order (say, put the winner first) would
/// make Doubler count winners instead.
#[tokio::test]
async fn the_order_of_each_duel_reaches_the_policy() {
    let app = http_server::spawn_app().await;
    let names = ["a", "b", "c", "d", "e"];
    let id = app
        .create_experiment(&names, json!({"name": "doubler"}))
        .await;
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
    let mut seconds = Vec::new();
    while seconds.len() < 62 {
        let (token, pair) = app.duel(id).await;
        let winner = if pair[0] == pair[1] {
            "tie"
        } else {
            seconds.push(names.iter().position(|n| *n == pair[1]).unwrap());
            if rng.random::<bool>() {
                &pair[0]
            } else {
                &pair[1]
            }
        };
        let (status, body) = app.outcome(&token, winner).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let mut last_epoch = [0; 5];
    seconds[30..].iter().for_each(|&r| last_epoch[r] += 1);
    let most = *last_epoch.iter().max().unwrap();
    let expected = names[last_epoch.iter().position(|&n| n == most).unwrap()];
    let e = app.experiment(id).await;
    assert_eq!(
        e["champion"]["policy_belief"], expected,
        "right rankers of the last epoch: {last_epoch:?}"
    );
    app.stop().await;
}

/// The whole loop a search backend runs, on synthetic learning-to-rank data: for each query it
/// asks for a duel between feature rankers, posts both rankers' top-10 lists, shows the
/// interleaving joust returns to a simulated user (a cascade click model on the documents'
/// relevance grades) and posts the clicked positions. joust credits them and feeds the bandit;
/// its champion must be the feature ranker with the best NDCG@10.
#[tokio::test]
async fn clicks_on_interleavings_lead_to_the_best_ndcg_feature() {
    use joust::sim::{ClickModel, LIST_LEN, SyntheticSpec, synthetic_letor};

    // 4 features (signal strengths 2, 1, 0.5 and 0, shuffled over the ids by the seed).
    let spec = SyntheticSpec {
        queries: 60,
        docs_per_query: 20,
        features: 4,
    };
    let data = synthetic_letor(&spec, 7);
    let ndcg: Vec<f64> = data
        .feature_ids
        .iter()
        .map(|&f| data.feature_ndcg(f, LIST_LEN))
        .collect();
    let best = (0..ndcg.len())
        .max_by(|&a, &b| ndcg[a].total_cmp(&ndcg[b]))
        .unwrap();
    let name = |f: u32| format!("f{f}");
    let rankers: Vec<String> = data.feature_ids.iter().map(|&f| name(f)).collect();
    let best_name = name(data.feature_ids[best]);
    let model: ClickModel = "perfect".parse().unwrap();

    let app = http_server::spawn_app().await;
    let (s, b) = app
        .post(
            "/v1/experiments",
            json!({"name": "letor", "rankers": rankers, "policy": {"name": "rucb"},
                   "interleaving": {"method": "team_draft"}, "seed": 3}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    let id = b["id"].as_i64().unwrap();

    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
    let mut clicks = Vec::new();
    for _ in 0..QUERIES {
        let q = rng.random_range(0..data.queries.len());
        let (token, pair) = app.duel(id).await;
        let mut lists = serde_json::Map::new();
        for ranker in &pair {
            let f: u32 = ranker[1..].parse().unwrap();
            let docs: Vec<String> = data
                .rank_by_feature(q, f, LIST_LEN)
                .iter()
                .map(|d| format!("q{q}-d{d}"))
                .collect();
            lists.insert(ranker.clone(), json!(docs));
        }
        let il = app.interleave(&token, lists.into()).await;
        let grades = il["documents"].as_array().unwrap().iter().map(|d| {
            let doc: usize = d["id"]
                .as_str()
                .unwrap()
                .split("-d")
                .nth(1)
                .unwrap()
                .parse()
                .unwrap();
            data.queries[q].relevance[doc]
        });
        model.simulate(grades, &mut rng, &mut clicks);
        let (s, r) = app.click_positions(&il, &clicks).await;
        assert_eq!(s, StatusCode::OK, "{r}");
        assert_eq!(r["status"], "recorded", "{r}");
    }
    let e = app.experiment(id).await;
    assert_eq!(
        e["champion"]["ranker"], best_name,
        "NDCG@10 per feature {ndcg:?}; champion {}",
        e["champion"]
    );
    app.stop().await;
}

/// Queries in the interleaving test. `joust prefmatrix --click-model perfect --method
/// team_draft` on this data (seed 7, 20,000 comparisons per pair) gives the best feature a
/// preference of at least 0.654 over every other with ties counted as half; about 30% of its
/// duels with the closest rival tie, so among decisive outcomes (ties are ignored) it wins at
/// least 0.72: a gap Delta >= 0.22. RUCB (alpha = 0.51) keeps drawing a rival against the best
/// while u = p + sqrt(alpha ln t / n) >= 1/2, i.e. until n >= alpha ln t / Delta^2, about 80
/// decisive comparisons at t ~ 2,000 (its clock counts self-duels too, so it keeps checking).
/// The champion is wrong only if a rival's empirical preference over the best reaches 1/2:
/// by Hoeffding at most exp(-2 n Delta^2) = exp(-2 * 80 * 0.048), about 5e-4, per rival. A
/// failure means the clicks do not reach the bandit as they should.
const QUERIES: usize = 2_000;
