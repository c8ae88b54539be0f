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
    for f in ["regret.svg", "regret.png", "accuracy.svg", "accuracy.png"] {
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
    assert_eq!(summary(&out)["policies"][0]["regret_kind"], "copeland");
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
