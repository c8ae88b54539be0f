//! `joust simulate` end to end through the binary: outputs, determinism whatever the thread
//! count, regret kinds, and clear errors for bad matrices and specs.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn simulate(args: &[&str], out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_joust"))
        .arg("simulate")
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .expect("run joust simulate")
}

fn summary(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

/// The summary without the fields that measure time (they differ between any two runs).
fn without_timing(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("timing");
    for p in v["policies"].as_array_mut().unwrap() {
        p.as_object_mut().unwrap().remove("steps_per_second");
    }
    v
}

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("joust-sim-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn writes_summary_csv_and_plots_and_is_deterministic_across_threads() {
    let args = [
        "--matrix", "arxiv6", "--policy", "rucb", "--policy", "uniform", "--steps", "20000",
        "--runs", "6", "--seed", "3",
    ];
    let (one, two) = (temp("one"), temp("two"));
    let a = simulate(&[&args[..], &["--threads", "1"]].concat(), &one);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let b = simulate(&[&args[..], &["--threads", "2"]].concat(), &two);
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    let s = summary(&one);
    assert_eq!(without_timing(s.clone()), without_timing(summary(&two)));

    let policies = s["policies"].as_array().unwrap();
    assert_eq!(policies.len(), 2);
    for p in policies {
        assert_eq!(p["regret_kind"], "condorcet");
        assert!(p["steps_per_second"].as_f64().unwrap() > 0.0);
        let cps = p["checkpoints"].as_array().unwrap();
        let steps: Vec<u64> = cps.iter().map(|c| c["step"].as_u64().unwrap()).collect();
        assert_eq!(*steps.last().unwrap(), 20000);
        assert!(steps.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
        // Log-spaced: many more checkpoints in the first tenth than in the last nine tenths.
        assert!(
            steps.iter().filter(|&&s| s <= 2000).count()
                > steps.iter().filter(|&&s| s > 2000).count()
        );
        for c in cps {
            let acc = c["accuracy"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&acc));
            let decided = c["decided"].as_f64().unwrap();
            let wrong = c["decided_wrong"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&decided) && wrong <= decided, "{c}");
            assert!(c["regret_mean"].as_f64().unwrap() >= 0.0);
            assert!(c["regret_stderr"].as_f64().unwrap() >= 0.0);
        }
    }
    // Uniform pays the average gap on every step; RUCB concentrates on the winner: its regret
    // at 20,000 steps must be well below uniform's.
    let final_regret = |i: usize| {
        policies[i]["checkpoints"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["regret_mean"]
            .as_f64()
            .unwrap()
    };
    assert!(
        final_regret(0) < 0.5 * final_regret(1),
        "rucb {} uniform {}",
        final_regret(0),
        final_regret(1)
    );

    let csv = std::fs::read_to_string(one.join("curves.csv")).unwrap();
    assert!(
        csv.starts_with("policy,regret_kind,step,regret_mean,regret_stderr,accuracy"),
        "{csv}"
    );
    // Every run decided at the last checkpoint has a decision step, within the horizon.
    for p in policies {
        let last = p["checkpoints"].as_array().unwrap().last().unwrap().clone();
        let decided_runs = (last["decided"].as_f64().unwrap() * 6.0).round() as u64;
        let at = &p["decided_at"];
        if decided_runs > 0 {
            assert!(at["runs"].as_u64().unwrap() >= decided_runs, "{p}");
            let (min, max) = (at["min"].as_u64().unwrap(), at["max"].as_u64().unwrap());
            assert!(min <= max && max <= 20000, "{at}");
        }
    }
    for f in [
        "regret.svg",
        "regret.png",
        "accuracy.svg",
        "accuracy.png",
        "decisions.svg",
        "decisions.png",
    ] {
        assert!(
            std::fs::metadata(one.join(f)).unwrap().len() > 1000,
            "{f} is empty"
        );
    }
    let _ = std::fs::remove_dir_all(one);
    let _ = std::fs::remove_dir_all(two);
}

#[test]
fn matrices_without_condorcet_winner_use_copeland_regret() {
    let out = temp("copeland");
    let r = simulate(
        &[
            "--matrix",
            "random-copeland:8:5",
            "--policy",
            "dts",
            "--steps",
            "2000",
            "--runs",
            "2",
        ],
        &out,
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let s = summary(&out);
    let p = &s["policies"][0];
    assert_eq!(p["regret_kind"], "copeland");
    // The regret lower bound of consistent policies: C ln T at the horizon, and the regret over
    // it, as printed.
    let bound = &p["regret_bound"];
    let rate = bound["rate"].as_f64().unwrap();
    let at_horizon = bound["at_horizon"].as_f64().unwrap();
    assert!(rate > 0.0, "{bound}");
    assert!(
        (at_horizon - rate * 2000f64.ln()).abs() < 1e-9 * at_horizon,
        "{bound}"
    );
    let regret = final_checkpoint(p)["regret_mean"].as_f64().unwrap();
    let ratio = bound["ratio"].as_f64().unwrap();
    assert!(
        (ratio - regret / at_horizon).abs() < 1e-9 * ratio,
        "{bound}"
    );
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(
        stdout.contains(&format!("C ln T = {rate:.1} ln 2000 = {at_horizon:.0}")),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn bad_matrices_and_specs_are_refused_clearly() {
    let dir = temp("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("m.txt");
    std::fs::write(&file, "0.5 0.6\n0.3 0.5\n").unwrap();
    let r = simulate(
        &[
            "--matrix",
            file.to_str().unwrap(),
            "--policy",
            "rucb",
            "--steps",
            "10",
            "--runs",
            "1",
        ],
        &dir.join("o"),
    );
    assert!(!r.status.success());
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("sum"), "{err}");
    std::fs::write(&file, "0.5 0.6\n0.4\n").unwrap();
    let r = simulate(
        &[
            "--matrix",
            file.to_str().unwrap(),
            "--policy",
            "rucb",
            "--steps",
            "10",
            "--runs",
            "1",
        ],
        &dir.join("o"),
    );
    assert!(!r.status.success());
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("line 2"), "{err}");
    let r = simulate(
        &[
            "--matrix",
            "arxiv6",
            "--policy",
            "rucb:alpha=-1",
            "--steps",
            "10",
            "--runs",
            "1",
        ],
        &dir.join("o"),
    );
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("alpha"));
    let r = simulate(
        &[
            "--matrix", "nonsense", "--policy", "rucb", "--steps", "10", "--runs", "1",
        ],
        &dir.join("o"),
    );
    assert!(!r.status.success());
    let _ = std::fs::remove_dir_all(dir);
}

fn letor_gen(size: &str, seed: &str, out: &Path) {
    let r = Command::new(env!("CARGO_BIN_EXE_joust"))
        .args(["letor-gen", "--size", size, "--seed", seed, "--out"])
        .arg(out)
        .output()
        .expect("run joust letor-gen");
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
}

fn final_checkpoint(policy: &Value) -> &Value {
    policy["checkpoints"].as_array().unwrap().last().unwrap()
}

#[test]
fn letor_mode_finds_the_best_feature_by_clicks() {
    let dir = temp("letor");
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("data.txt");
    // 100 queries of 20 documents, 6 features (synthetic strengths 2, 1, 0.5, 0.25, 0.125, 0):
    // seed 2 makes f1 best by NDCG@10 (0.97). Under navigational clicks with Team-Draft, f1
    // beats the runner-up with probability 0.571 (`joust prefmatrix` with 20,000 comparisons
    // per pair on this file), a gap of 0.071 above a coin.
    letor_gen("100:20:6", "2", &data);
    let out = dir.join("out");
    let r = simulate(
        &[
            "--letor",
            data.to_str().unwrap(),
            "--click-model",
            "navigational",
            "--method",
            "team_draft",
            "--policy",
            "rucb",
            "--policy",
            "merge_dts",
            "--steps",
            "20000",
            "--runs",
            "10",
        ],
        &out,
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(stdout.contains("steps/s"), "{stdout}");
    let s = summary(&out);
    assert!(s.get("matrix").is_none(), "{s}");
    assert_eq!(s["letor"]["file"], data.to_str().unwrap());
    assert_eq!(s["letor"]["click_model"], "navigational");
    assert_eq!(s["letor"]["interleaving"]["method"], "team_draft");
    assert_eq!(s["letor"]["list_len"], 10);
    assert_eq!(s["letor"]["queries"], 100);
    assert_eq!(s["k"], 6);
    // The winner the summary names is the feature of highest NDCG@10 it lists.
    let ndcg = s["letor"]["ndcg"].as_array().unwrap();
    let names: Vec<&str> = ndcg.iter().map(|r| r["ranker"].as_str().unwrap()).collect();
    assert_eq!(names, ["f1", "f2", "f3", "f4", "f5", "f6"]);
    let utilities: Vec<f64> = ndcg.iter().map(|r| r["ndcg"].as_f64().unwrap()).collect();
    let best = utilities.iter().copied().fold(f64::MIN, f64::max);
    let best_name = names[utilities.iter().position(|&u| u == best).unwrap()];
    assert_eq!(s["winners"], serde_json::json!([best_name]));
    // Duelling two uniformly random arms costs u* - mean(u) per step in expectation.
    let random_regret = 20000.0 * (best - utilities.iter().sum::<f64>() / 6.0);

    for p in s["policies"].as_array().unwrap() {
        assert_eq!(p["regret_kind"], "ndcg_utility");
        assert!(p["steps_per_second"].as_f64().unwrap() > 0.0);
        let cps = p["checkpoints"].as_array().unwrap();
        assert!(cps.len() > 10, "{cps:?}");
        assert_eq!(cps.last().unwrap()["step"], 20000);
        let last = final_checkpoint(p);
        // Accuracy: a champion picked by chance is the best of 6 with probability 1/6, and
        // P(at least 8 of 10 such runs right) = sum_{k>=8} C(10,k) (1/6)^k (5/6)^(10-k) < 3e-5:
        // 0.8 cannot be met by chance. A policy that identifies the winner can meet it: even
        // spread evenly over the 15 pairs, 20,000 duels give each pair about 1,300, so the
        // runner-up duel's win rate has a standard error of 0.5 / sqrt(1300) = 0.014, and the
        // 0.071 gap is 5 of them; RUCB and MergeDTS concentrate their duels on the top arms.
        assert!(
            last["accuracy"].as_f64().unwrap() >= 0.8,
            "{}: {last}",
            p["policy"]
        );
        // Regret: a policy that duelled random arms for the whole first half and the winner
        // afterwards would pay half of random_regret; policies that identify the winner sooner
        // (see the accuracy above) and then mostly duel it must pay less.
        let regret = last["regret_mean"].as_f64().unwrap();
        assert!(
            regret < 0.5 * random_regret,
            "{}: {regret} vs {random_regret}",
            p["policy"]
        );
    }
    let csv = std::fs::read_to_string(out.join("curves.csv")).unwrap();
    assert!(csv.contains(",ndcg_utility,"), "{csv}");
    for f in ["regret.svg", "regret.png", "accuracy.svg", "accuracy.png"] {
        assert!(std::fs::metadata(out.join(f)).unwrap().len() > 1000, "{f}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn letor_mode_is_deterministic_across_threads_and_supports_subsets() {
    let dir = temp("letor-det");
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("data.txt");
    letor_gen("40:15:5", "4", &data);
    let args = [
        "--letor",
        data.to_str().unwrap(),
        "--click-model",
        "informational",
        "--method",
        "probabilistic",
        "--tau",
        "2",
        "--policy",
        "rucb",
        "--steps",
        "3000",
        "--runs",
        "4",
        "--seed",
        "9",
    ];
    let (one, two, sub) = (dir.join("one"), dir.join("two"), dir.join("sub"));
    let a = simulate(&[&args[..], &["--threads", "1"]].concat(), &one);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let b = simulate(&[&args[..], &["--threads", "2"]].concat(), &two);
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    let s = summary(&one);
    assert_eq!(without_timing(s.clone()), without_timing(summary(&two)));
    assert_eq!(s["letor"]["interleaving"]["method"], "probabilistic");
    assert_eq!(s["letor"]["interleaving"]["tau"], 2.0);
    assert_eq!(s["letor"]["click_model"], "informational");

    let c = simulate(&[&args[..], &["--subset", "3"]].concat(), &sub);
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    let s = summary(&sub);
    assert_eq!(s["k"], 3);
    assert_eq!(s["subset"], 3);
    // The best feature differs between subsets: no single winner to name.
    assert!(s["winners"].is_null(), "{s}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn letor_mode_refuses_bad_input_clearly_and_writes_nothing() {
    let dir = temp("letor-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("data.txt");
    letor_gen("10:8:3", "1", &data);
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "1 qid:1 1:0.5 2:0.1\n0 qid:1 1:zero 2:0.3\n").unwrap();
    let data = data.to_str().unwrap();
    let run = ["--policy", "rucb", "--steps", "100", "--runs", "1"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "--matrix",
                "arxiv6",
                "--letor",
                data,
                "--click-model",
                "perfect",
                "--method",
                "balanced",
            ],
            "cannot be used with",
        ),
        (vec![], "--matrix"),
        (
            vec![
                "--letor",
                data,
                "--click-model",
                "hasty",
                "--method",
                "balanced",
            ],
            "unknown click model 'hasty'",
        ),
        (
            vec![
                "--letor",
                data,
                "--click-model",
                "perfect",
                "--method",
                "zipper",
            ],
            "unknown method 'zipper'",
        ),
        (
            vec!["--letor", data, "--method", "balanced"],
            "--click-model",
        ),
        (
            vec!["--matrix", "arxiv6", "--click-model", "perfect"],
            "--letor",
        ),
        (
            vec![
                "--letor",
                bad.to_str().unwrap(),
                "--click-model",
                "perfect",
                "--method",
                "balanced",
            ],
            "line 2",
        ),
        (
            vec![
                "--letor",
                data,
                "--click-model",
                "perfect",
                "--method",
                "optimized",
                "--subset",
                "4",
            ],
            "--subset 4",
        ),
    ];
    for (i, (args, expected)) in cases.iter().enumerate() {
        let out = dir.join(format!("out{i}"));
        let r = simulate(&[&args[..], &run[..]].concat(), &out);
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success(), "{args:?} succeeded");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
    let _ = std::fs::remove_dir_all(dir);
}
