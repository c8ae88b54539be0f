//! `joust simulate --letor ... --rankers-per-query M` through the binary: multi-dueling policies
//! on multileaved lists find the best feature, duels keep their numbers, the users' measures are
//! right on a case worked by hand, and bad combinations are refused.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn joust(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_joust"))
        .args(args)
        .output()
        .expect("run joust")
}

fn simulate(args: &[&str], out: &Path) -> std::process::Output {
    let mut all = vec!["simulate"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out.to_str().unwrap()]);
    joust(&all)
}

fn summary(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("joust-simm-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn letor_gen(size: &str, seed: &str, out: &Path) {
    let r = joust(&[
        "letor-gen",
        "--size",
        size,
        "--seed",
        seed,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
}

fn last(policy: &Value) -> &Value {
    policy["checkpoints"].as_array().unwrap().last().unwrap()
}

#[test]
fn multi_dueling_policies_find_the_best_feature_with_four_rankers_per_query() {
    let dir = temp("find");
    let data = dir.join("data.txt");
    // 100 queries of 30 documents, 12 features; under perfect clicks the best feature by
    // NDCG@10 beats the runner-up in 65% of interleaved comparisons (`joust prefmatrix
    // --synthetic 100:30:12 --seed 3 --click-model perfect`).
    letor_gen("100:30:12", "3", &data);
    let out = dir.join("out");
    let r = simulate(
        &[
            "--letor",
            data.to_str().unwrap(),
            "--click-model",
            "perfect",
            "--method",
            "team_draft_multileave",
            "--rankers-per-query",
            "4",
            "--policy",
            "mdb",
            "--policy",
            "self_sparring",
            "--policy",
            "merge_dts",
            "--policy",
            "ucb_candidates",
            "--steps",
            "5000",
            "--runs",
            "10",
        ],
        &out,
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let s = summary(&out);
    assert_eq!(s["letor"]["rankers_per_query"], 4);
    assert_eq!(
        s["letor"]["interleaving"]["method"],
        "team_draft_multileave"
    );
    let ndcg: Vec<f64> = s["letor"]["ndcg"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ndcg"].as_f64().unwrap())
        .collect();
    let best = ndcg.iter().copied().fold(f64::MIN, f64::max);
    let mean = ndcg.iter().sum::<f64>() / ndcg.len() as f64;
    for p in s["policies"].as_array().unwrap() {
        let end = last(p);
        // A champion picked by chance is the best of 12 with probability 1/12, and P(at least 8
        // of 10 such runs right) < 2e-7; a policy that learns meets it easily: 5,000 queries of
        // 4 rankers show each pair together about 5,000 * 12/132 = 450 times even spread evenly,
        // and the 0.15 gap is 6 standard errors (0.5 / sqrt(450) = 0.024) of a pair's win rate.
        assert!(
            end["accuracy"].as_f64().unwrap() >= 0.8,
            "{}: {end}",
            p["policy"]
        );
        // Showing 4 random rankers per query would cost (best - mean) per step; a policy that
        // finds the best feature must pay well under half of that over the run.
        let random = 5000.0 * (best - mean);
        assert!(
            end["regret_mean"].as_f64().unwrap() < 0.5 * random,
            "{}: {end} vs {random}",
            p["policy"]
        );
        // The users' measures are reported at every checkpoint, within their ranges.
        for c in p["checkpoints"].as_array().unwrap() {
            let ndcg = c["shown_ndcg"]["mean"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&ndcg), "{c}");
            assert!(c["clicks"]["mean"].as_f64().unwrap() >= 0.0, "{c}");
        }
        // Once the best feature is found the shown lists are mostly its own: their NDCG ends
        // above the mean ranker's.
        assert!(end["shown_ndcg"]["mean"].as_f64().unwrap() > mean, "{end}");
    }
    let csv = std::fs::read_to_string(out.join("curves.csv")).unwrap();
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with("shown_ndcg_mean,shown_ndcg_stderr,decided,decided_wrong")
    );
    for f in ["clicks.svg", "clicks.png", "ndcg.svg", "ndcg.png"] {
        assert!(std::fs::metadata(out.join(f)).unwrap().len() > 1000, "{f}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn duels_keep_their_numbers_and_identical_rankers_show_their_own_quality() {
    let dir = temp("same");
    let data = dir.join("data.txt");
    // Four features with the same values: every ranker shows the same list, so every shown
    // list, interleaved or multileaved, is that list. Its NDCG on each query is known, so the
    // mean NDCG of the shown lists must be the rankers' own NDCG (reported in the summary), and
    // the regret is 0.
    let mut text = String::new();
    for q in 0..20 {
        for d in 0..12 {
            let grade = (d * 7 + q) % 5;
            let value = ((d * 13 + q * 3) % 17) as f64;
            text.push_str(&format!(
                "{grade} qid:{q} 1:{value} 2:{value} 3:{value} 4:{value}\n"
            ));
        }
    }
    std::fs::write(&data, text).unwrap();
    let base = [
        "--letor",
        data.to_str().unwrap(),
        "--click-model",
        "perfect",
        "--steps",
        "2000",
        "--runs",
        "3",
    ];
    let multi = dir.join("multi");
    let r = simulate(
        &[
            &base[..],
            &[
                "--method",
                "sample_only_scored",
                "--rankers-per-query",
                "3",
                "--policy",
                "self_sparring",
            ],
        ]
        .concat(),
        &multi,
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let s = summary(&multi);
    let own = s["letor"]["ndcg"][0]["ndcg"].as_f64().unwrap();
    let end = last(&s["policies"][0]);
    assert_eq!(end["regret_mean"], 0.0);
    // Each window averages at least a few hundred random queries of 20 (perfect clicks cap the
    // NDCG's spread at 1); the last window holds about 2,000 * (1 - 1/1.26) = 400 queries per
    // run, 1,200 over 3 runs: a standard error of at most 0.5 / sqrt(1200) = 0.014 (0.07 = 5 of
    // them).
    let shown = end["shown_ndcg"]["mean"].as_f64().unwrap();
    assert!((shown - own).abs() < 0.07, "{shown} vs {own}");

    // m = 2 is a duel, flag or no flag: the same numbers.
    let duel = |extra: &[&str], out: &Path| {
        let r = simulate(
            &[
                &base[..],
                &["--method", "team_draft", "--policy", "rucb"],
                extra,
            ]
            .concat(),
            out,
        );
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let mut s = summary(out);
        s.as_object_mut().unwrap().remove("timing");
        s["policies"][0]
            .as_object_mut()
            .unwrap()
            .remove("steps_per_second");
        s
    };
    let (a, b) = (dir.join("a"), dir.join("b"));
    assert_eq!(duel(&[], &a), duel(&["--rankers-per-query", "2"], &b));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_combinations_are_refused_clearly() {
    let dir = temp("bad");
    let data = dir.join("data.txt");
    letor_gen("10:8:5", "1", &data);
    let data = data.to_str().unwrap();
    let letor = ["--letor", data, "--click-model", "perfect"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "--method",
                "team_draft",
                "--policy",
                "mdb",
                "--rankers-per-query",
                "4",
            ],
            "cannot merge 4 lists",
        ),
        (
            vec![
                "--method",
                "probabilistic_multileave",
                "--policy",
                "mdb",
                "--rankers-per-query",
                "9",
            ],
            "cannot merge 9 lists",
        ),
        (
            vec![
                "--method",
                "team_draft_multileave",
                "--policy",
                "rucb",
                "--rankers-per-query",
                "4",
            ],
            "compares at most 2 rankers",
        ),
        (
            vec![
                "--method",
                "team_draft_multileave",
                "--policy",
                "mdb",
                "--rankers-per-query",
                "4",
                "--delay",
                "10",
            ],
            "--delay and --batch",
        ),
        (
            vec![
                "--method",
                "team_draft",
                "--policy",
                "mdb",
                "--rankers-per-query",
                "1",
            ],
            "at least 2",
        ),
    ];
    for (extra, needle) in cases {
        let out = dir.join("out");
        let args = [&letor[..], &extra[..], &["--steps", "10", "--runs", "1"]].concat();
        let r = simulate(&args, &out);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success(), "{extra:?} succeeded");
        assert!(stderr.contains(needle), "{extra:?}: {stderr}");
        assert!(!out.join("summary.json").exists(), "{extra:?} wrote output");
    }
    let matrix = simulate(
        &[
            "--matrix",
            "arxiv6",
            "--policy",
            "mdb",
            "--rankers-per-query",
            "3",
            "--steps",
            "10",
        ],
        &dir.join("m"),
    );
    assert!(!matrix.status.success());
    assert!(String::from_utf8_lossy(&matrix.stderr).contains("needs --letor"));
    let _ = std::fs::remove_dir_all(dir);
}
