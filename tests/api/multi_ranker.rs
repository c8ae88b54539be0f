//! Multi-ranker experiments over HTTP against a real Postgres: a query compares up to
//! `rankers_per_query` rankers through one multileaved list, and its clicks (or the rankers'
//! credits, or an ordering) record a result for every pair, exactly once.

use crate::helpers::http_server;
use std::collections::HashSet;

use crate::helpers::http_server::{TestApp, error_code};
use joust::sim::{ClickModel, LetorData, SyntheticSpec, synthetic_letor};
use rand::{Rng, SeedableRng};
use reqwest::StatusCode;
use serde_json::{Map, Value, json};

async fn create(app: &TestApp, body: Value) -> (StatusCode, Value) {
    app.post("/v1/experiments", body).await
}

async fn multi_experiment(app: &TestApp, rankers: &[String], policy: &str, m: usize) -> i64 {
    let (s, e) = create(
        app,
        json!({"name": "multi", "rankers": rankers, "policy": {"name": policy},
               "rankers_per_query": m, "seed": 5}),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{e}");
    assert_eq!(e["rankers_per_query"], m);
    assert_eq!(e["interleaving"]["method"], "team_draft_multileave");
    e["id"].as_i64().unwrap()
}

/// A query's token and rankers.
async fn query(app: &TestApp, id: i64) -> (String, Vec<String>) {
    let (s, d) = app
        .post(&format!("/v1/experiments/{id}/duels"), json!({}))
        .await;
    assert_eq!(s, StatusCode::OK, "{d}");
    let rankers = d["rankers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect();
    (d["duel_token"].as_str().unwrap().to_string(), rankers)
}

fn names(k: usize) -> Vec<String> {
    (0..k).map(|i| format!("r{i}")).collect()
}

/// Each ranker lists its own two documents, then one they all share.
fn own_lists(rankers: &[String]) -> Value {
    let lists: Map<String, Value> = rankers
        .iter()
        .map(|r| {
            (
                r.clone(),
                json!([format!("{r}-1"), format!("{r}-2"), "shared"]),
            )
        })
        .collect();
    Value::Object(lists)
}

#[tokio::test]
async fn a_query_records_every_pair_once() {
    let app = http_server::spawn_app().await;
    let id = multi_experiment(&app, &names(6), "mdb", 4).await;
    let (token, rankers) = query(&app, id).await;
    assert_eq!(rankers.len(), 4, "mdb fills the set at the start");
    assert_eq!(rankers.iter().collect::<HashSet<_>>().len(), 4);

    let il = app.interleave(&token, own_lists(&rankers)).await;
    assert_eq!(il["method"], "team_draft_multileave");
    let shown = http_server::shown_documents(&il);
    // Team-Draft Multileave: every shown document names the team that drafted it.
    for (doc, team) in &shown {
        let team = team.as_ref().expect("every document has a team");
        assert!(rankers.contains(team) && (doc.starts_with(team.as_str()) || doc == "shared"));
    }
    let (clicked, winner) = shown
        .iter()
        .find(|(d, _)| d != "shared")
        .map(|(d, t)| (d.clone(), t.clone().unwrap()))
        .unwrap();
    let clicks = json!({"interleaving_token": il["interleaving_token"], "clicks": [clicked]});
    let (s, rec) = app.post("/v1/clicks", clicks.clone()).await;
    assert_eq!(s, StatusCode::OK, "{rec}");
    assert_eq!(rec["status"], "recorded");
    assert!(rec.get("winner").is_none(), "{rec}");
    // One click on the winner's document: it beats each of the 3 others; the 3 pairs among the
    // others are ties (nothing told them apart).
    let outcomes = rec["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 6, "{rec}");
    for o in outcomes {
        let pair: Vec<&str> = o["rankers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        let expected = if pair.contains(&winner.as_str()) {
            winner.as_str()
        } else {
            "tie"
        };
        assert_eq!(o["winner"], expected, "{o}");
    }
    assert_eq!(rec["credit"][&winner], 1.0);
    assert_eq!(rec["credit"].as_object().unwrap().len(), 4);

    // A retry is a duplicate with the same answer; nothing counts twice.
    let (s, again) = app.post("/v1/clicks", clicks).await;
    assert_eq!(s, StatusCode::OK, "{again}");
    assert_eq!(again["status"], "duplicate");
    assert_eq!(again["outcomes"], rec["outcomes"]);
    // The same result as an ordering is a duplicate too; a different one is a conflict.
    let others: Vec<&String> = rankers.iter().filter(|r| **r != winner).collect();
    let (s, same) = app
        .post(
            "/v1/outcomes",
            json!({"duel_token": token, "ordering": [winner, others]}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{same}");
    assert_eq!(same["status"], "duplicate");
    let (s, other) = app
        .post(
            "/v1/outcomes",
            json!({"duel_token": token, "ordering": [others, winner]}),
        )
        .await;
    assert_eq!(s, StatusCode::CONFLICT, "{other}");
    assert_eq!(error_code(&other), "outcome_conflict");

    let e = app.experiment(id).await;
    assert_eq!(e["outcomes_applied"], 3, "{e}");
    assert_eq!(e["ties_recorded"], 3, "{e}");
    assert_eq!(http_server::win_total(&app, id).await, 3);
    let wins: i64 = e["rankers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["name"] == winner.as_str())
        .map(|r| r["wins"].as_i64().unwrap())
        .sum();
    assert_eq!(wins, 3);
    app.stop().await;
}

#[tokio::test]
async fn credits_and_orderings_decide_each_pair() {
    let app = http_server::spawn_app().await;
    let id = multi_experiment(&app, &names(5), "self_sparring", 3).await;
    let (token, rankers) = query(&app, id).await;
    // Self-Sparring draws 3 arms with replacement, so a query may hold fewer distinct rankers.
    let credits: Map<String, Value> = rankers
        .iter()
        .enumerate()
        .map(|(i, r)| (r.clone(), json!(if i == 0 { 2.0 } else { 0.5 })))
        .collect();
    let (s, rec) = app
        .post(
            "/v1/outcomes",
            json!({"duel_token": token, "credits": credits}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{rec}");
    let n = rankers.len();
    let outcomes = rec["outcomes"].as_array().unwrap();
    // Every pair; one ranker alone is its self-duel, listed as a tie.
    assert_eq!(outcomes.len(), (n * (n - 1) / 2).max(1));
    for o in outcomes {
        let involves_first = o["rankers"][0] == rankers[0].as_str();
        let expected = if involves_first && n > 1 {
            rankers[0].as_str()
        } else {
            "tie"
        };
        assert_eq!(o["winner"], expected, "{rec}");
    }

    // An ordering with a tied group, on a fresh query. An empty group is refused first, and
    // records nothing: the valid ordering after it is recorded, not a duplicate or a conflict.
    let (token, rankers) = query(&app, id).await;
    let mut with_empty_group = vec![json!([])];
    with_empty_group.extend(rankers.iter().map(|r| json!(r)));
    let (s, e) = app
        .post(
            "/v1/outcomes",
            json!({"duel_token": token, "ordering": with_empty_group}),
        )
        .await;
    assert_eq!(
        (s, error_code(&e)),
        (StatusCode::UNPROCESSABLE_ENTITY, "rankers_mismatch"),
        "{e}"
    );
    let mut ordering: Vec<Value> = rankers.iter().rev().map(|r| json!(r)).collect();
    if ordering.len() >= 3 {
        let last = ordering.split_off(1);
        ordering.push(json!(last));
    }
    let (s, rec) = app
        .post(
            "/v1/outcomes",
            json!({"duel_token": token, "ordering": ordering}),
        )
        .await;
    assert_eq!(
        (s, rec["status"].as_str()),
        (StatusCode::OK, Some("recorded")),
        "{rec}"
    );
    let best = rankers.last().unwrap();
    for o in rec["outcomes"].as_array().unwrap() {
        if rankers.len() > 1
            && o["rankers"]
                .as_array()
                .unwrap()
                .contains(&json!(best.as_str()))
        {
            assert_eq!(o["winner"], best.as_str(), "{rec}");
        } else {
            assert_eq!(o["winner"], "tie", "{rec}");
        }
    }
    app.stop().await;
}

#[tokio::test]
async fn refusals_name_the_problem_and_change_nothing() {
    let app = http_server::spawn_app().await;
    let rankers = names(6);
    for (body, code) in [
        (
            json!({"name": "x", "rankers": rankers, "policy": {"name": "rucb"}, "rankers_per_query": 4}),
            "invalid_rankers_per_query",
        ),
        (
            json!({"name": "x", "rankers": rankers, "policy": {"name": "mdb"}, "rankers_per_query": 1}),
            "invalid_rankers_per_query",
        ),
        (
            json!({"name": "x", "rankers": rankers, "policy": {"name": "mdb"}, "rankers_per_query": 65}),
            "invalid_rankers_per_query",
        ),
        (
            json!({"name": "x", "rankers": rankers, "policy": {"name": "mdb"}, "rankers_per_query": 4,
                   "interleaving": {"method": "team_draft"}}),
            "invalid_interleaving",
        ),
        (
            json!({"name": "x", "rankers": rankers, "policy": {"name": "mdb"}, "rankers_per_query": 9,
                   "interleaving": {"method": "probabilistic_multileave"}}),
            "invalid_interleaving",
        ),
        (
            json!({"name": "x", "rankers": rankers, "policy": {"name": "rucb"},
                   "interleaving": {"method": "team_draft_multileave"}}),
            "invalid_interleaving",
        ),
    ] {
        let (s, e) = create(&app, body.clone()).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {e}");
        assert_eq!(error_code(&e), code, "{body}: {e}");
    }
    let (_, list) = app.get("/v1/experiments").await;
    assert_eq!(
        list["experiments"].as_array().map(Vec::len),
        Some(0),
        "{list}"
    );

    // Naming no policy is not a refusal: above two rankers per query the default is the
    // multi-ranker Self-Sparring (auto is pairwise).
    let (s, e) = create(
        &app,
        json!({"name": "default", "rankers": rankers, "rankers_per_query": 4}),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{e}");
    assert_eq!(e["policy"], json!({"name": "self_sparring", "params": {}}));
    let (_, shown) = query(&app, e["id"].as_i64().unwrap()).await;
    assert!((1..=4).contains(&shown.len()), "{shown:?}");

    let id = multi_experiment(&app, &rankers, "mdb", 4).await;
    let version = app.experiment(id).await["version"].clone();
    let (token, shown) = query(&app, id).await;
    // Lists must name exactly the query's rankers.
    let mut lists = own_lists(&shown);
    lists.as_object_mut().unwrap().remove(&shown[0]);
    let (s, e) = app.try_interleave(&token, lists).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    assert_eq!(error_code(&e), "lists_mismatch");
    let outsider = rankers.iter().find(|r| !shown.contains(r)).unwrap();
    let mut lists = own_lists(&shown);
    lists[outsider] = json!(["z"]);
    let (s, e) = app.try_interleave(&token, lists).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    assert_eq!(error_code(&e), "lists_mismatch");
    // Clicks on documents that were not shown.
    let il = app.interleave(&token, own_lists(&shown)).await;
    for clicks in [
        json!({"interleaving_token": il["interleaving_token"], "clicks": ["nowhere"]}),
        json!({"interleaving_token": il["interleaving_token"], "click_positions": [99]}),
    ] {
        let (s, e) = app.post("/v1/clicks", clicks).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
        assert_eq!(error_code(&e), "click_not_shown");
    }
    // Outcomes: a single winner, credits or orderings that miss or add rankers.
    let all_but_first: Vec<&String> = shown.iter().skip(1).collect();
    let mut credits: Map<String, Value> = shown.iter().map(|r| (r.clone(), json!(1))).collect();
    credits.insert(outsider.clone(), json!(0));
    for (body, code) in [
        (
            json!({"duel_token": token, "winner": shown[0]}),
            "invalid_outcome",
        ),
        (
            json!({"duel_token": token, "ordering": all_but_first}),
            "rankers_mismatch",
        ),
        (
            json!({"duel_token": token, "ordering": [shown, shown[0]]}),
            "rankers_mismatch",
        ),
        (
            json!({"duel_token": token, "credits": credits}),
            "rankers_mismatch",
        ),
        (
            json!({"duel_token": token, "credits": {}, "ordering": shown}),
            "invalid_outcome",
        ),
        (json!({"duel_token": token}), "invalid_outcome"),
    ] {
        let (s, e) = app.post("/v1/outcomes", body.clone()).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {e}");
        assert_eq!(error_code(&e), code, "{body}: {e}");
    }
    let e = app.experiment(id).await;
    assert_eq!(e["version"], version, "refusals changed the experiment");
    assert_eq!(e["outcomes_applied"], 0);
    assert_eq!(e["ties_recorded"], 0);
    app.stop().await;
}

/// The best feature ranker by mean NDCG@10.
fn best_feature(data: &LetorData) -> u32 {
    *data
        .feature_ids
        .iter()
        .max_by(|&&a, &&b| {
            data.feature_ndcg(a, 10)
                .partial_cmp(&data.feature_ndcg(b, 10))
                .unwrap()
        })
        .unwrap()
}

/// A search backend with 12 feature rankers, 8 per query: each query multileaves the rankers'
/// top-10 lists for a random query of synthetic LETOR data, a simulated user clicks (the perfect
/// cascade model: clicks in proportion to the grade), and the clicks go back to joust. The
/// champion must become the best feature by NDCG@10.
///
/// On these data the best feature beats every other in at least 65% of interleaved comparisons
/// (`joust prefmatrix --synthetic 100:30:12 --seed 3 --click-model perfect`: 0.655 against the
/// runner-up; 0.54 with navigational clicks, too close for a short test). With 8 of 12 rankers
/// per query, each pair is shown together in about 600 * (8*7)/(12*11) = 255 queries; if only
/// half of those decide the pair, the empirical preference has a standard error of
/// 0.5 / sqrt(128) = 0.044, so the gap of 0.155 is 3.5 standard errors: the best feature is the
/// empirical Condorcet candidate except with probability about 11 * P(Z > 3.5) < 0.3% (a bound:
/// the other ten gaps are wider). 8 of 8 data and click seeds gave the right champion, confident,
/// when this test was written.
#[tokio::test]
async fn a_simulated_backend_finds_the_best_feature_with_eight_rankers_per_query() {
    let app = http_server::spawn_app().await;
    let spec = SyntheticSpec {
        queries: 100,
        docs_per_query: 30,
        features: 12,
    };
    let data = synthetic_letor(&spec, 3);
    let names: Vec<String> = data.feature_ids.iter().map(|f| format!("f{f}")).collect();
    let best = format!("f{}", best_feature(&data));
    let id = multi_experiment(&app, &names, "mdb", 8).await;
    let users: ClickModel = "perfect".parse().unwrap();
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(17);
    let mut clicks = Vec::new();
    for _ in 0..600 {
        let (token, shown) = query(&app, id).await;
        let q = rng.random_range(0..data.queries.len());
        let lists: Map<String, Value> = shown
            .iter()
            .map(|name| {
                let feature: u32 = name[1..].parse().unwrap();
                let docs: Vec<String> = data
                    .rank_by_feature(q, feature, 10)
                    .iter()
                    .map(|d| format!("q{q}-d{d}"))
                    .collect();
                (name.clone(), json!(docs))
            })
            .collect();
        let il = app.interleave(&token, Value::Object(lists)).await;
        let docs: Vec<usize> = http_server::shown_documents(&il)
            .iter()
            .map(|(d, _)| d.rsplit("-d").next().unwrap().parse().unwrap())
            .collect();
        let grades = docs.iter().map(|&d| data.queries[q].relevance[d]);
        users.simulate(grades, &mut rng, &mut clicks);
        let (s, rec) = app.click_positions(&il, &clicks).await;
        assert_eq!(s, StatusCode::OK, "{rec}");
    }
    let e = app.experiment(id).await;
    assert_eq!(e["champion"]["ranker"], best.as_str(), "{}", e["champion"]);
    // Concluded, the experiment answers its champion alone.
    let (s, _) = app
        .patch_experiment(id, json!({"status": "concluded"}))
        .await;
    assert_eq!(s, StatusCode::OK);
    let (s, d) = app
        .post(&format!("/v1/experiments/{id}/duels"), json!({}))
        .await;
    assert_eq!(s, StatusCode::OK, "{d}");
    assert_eq!(d["rankers"], json!([best]));
    assert_eq!(d["concluded"], true);
    app.stop().await;
}

/// A restart loses nothing acknowledged: counts, matrix and champion come back, a query issued
/// before it can still be clicked, and a retry of clicks acknowledged before it is a duplicate.
#[tokio::test]
async fn multi_ranker_results_survive_a_restart_exactly_once() {
    let app = http_server::spawn_app().await;
    let id = multi_experiment(&app, &names(6), "merge_dts", 4).await;
    let mut acknowledged = Vec::new();
    for i in 0..30 {
        let (token, rankers) = query(&app, id).await;
        let il = app.interleave(&token, own_lists(&rankers)).await;
        let clicks =
            json!({"interleaving_token": il["interleaving_token"], "click_positions": [i % 3]});
        let (s, rec) = app.post("/v1/clicks", clicks.clone()).await;
        assert_eq!(s, StatusCode::OK, "{rec}");
        acknowledged.push((clicks, rec));
    }
    let before = app.experiment(id).await;
    let (_, matrix_before) = app.get(&format!("/v1/experiments/{id}/matrix")).await;
    let (token, rankers) = query(&app, id).await;
    let pending = app.interleave(&token, own_lists(&rankers)).await;
    let db = app.db_url.clone();
    app.stop().await;

    let app = http_server::spawn_app_on(&db, "").await;
    let after = app.experiment(id).await;
    for key in [
        "version",
        "outcomes_applied",
        "ties_recorded",
        "rankers",
        "champion",
    ] {
        assert_eq!(before[key], after[key], "{key}");
    }
    let (_, matrix_after) = app.get(&format!("/v1/experiments/{id}/matrix")).await;
    assert_eq!(matrix_before, matrix_after);
    for (clicks, rec) in &acknowledged {
        let (s, again) = app.post("/v1/clicks", clicks.clone()).await;
        assert_eq!(s, StatusCode::OK, "{again}");
        assert_eq!(again["status"], "duplicate");
        assert_eq!(again["outcomes"], rec["outcomes"]);
    }
    let (s, rec) = app
        .post(
            "/v1/clicks",
            json!({"interleaving_token": pending["interleaving_token"], "click_positions": [0]}),
        )
        .await;
    assert_eq!(
        (s, rec["status"].as_str()),
        (StatusCode::OK, Some("recorded")),
        "{rec}"
    );
    app.stop().await;
}

/// A query that names one ranker is that ranker's self-duel: recorded as a tie, like a
/// two-ranker self-duel, and listed as one in its answer. Over every answer, the ties and decided
/// pairs listed are exactly what `ties_recorded` and `outcomes_applied` gain.
#[tokio::test]
async fn a_one_ranker_query_lists_the_tie_it_counts() {
    let app = http_server::spawn_app().await;
    // Self-Sparring's 4 draws among 2 rankers often name one ranker alone (1 in 8 at the start,
    // more as it grows sure of `good`).
    let id = multi_experiment(&app, &names(2), "self_sparring", 4).await;
    let (mut listed_wins, mut listed_ties, mut one_ranker_queries) = (0, 0, 0);
    for _ in 0..200 {
        let (token, rankers) = query(&app, id).await;
        let credits: Map<String, Value> = rankers
            .iter()
            .map(|r| (r.clone(), json!(if r == "r0" { 1 } else { 0 })))
            .collect();
        let (s, rec) = app
            .post(
                "/v1/outcomes",
                json!({"duel_token": token, "credits": credits}),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{rec}");
        let outcomes = rec["outcomes"].as_array().unwrap();
        if let [only] = &rankers[..] {
            one_ranker_queries += 1;
            assert_eq!(
                rec["outcomes"],
                json!([{"rankers": [only, only], "winner": "tie"}]),
                "{rec}"
            );
        }
        for o in outcomes {
            if o["winner"] == "tie" {
                listed_ties += 1;
            } else {
                listed_wins += 1;
            }
        }
        let e = app.experiment(id).await;
        assert_eq!(e["ties_recorded"], listed_ties, "{e}");
        assert_eq!(e["outcomes_applied"], listed_wins, "{e}");
        if one_ranker_queries >= 3 {
            break;
        }
    }
    assert!(
        one_ranker_queries >= 1,
        "no query named one ranker alone in 200"
    );
    app.stop().await;
}
