//! `joust grid` end to end through the binary: each cell's regret lower bound agrees with
//! `joust simulate`'s on the same matrix, the tables show it, and a rerun into the same `--out`
//! reuses the figures and keeps their time.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn joust(args: &[&str], out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_joust"))
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .expect("run joust")
}

fn json(path: PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("joust-grid-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn each_cell_carries_the_simulators_regret_bound_and_a_rerun_keeps_it() {
    let out = temp("bound");
    let args = [
        "grid",
        "--policy",
        "uniform",
        "--policy",
        "self_sparring",
        "--families",
        "copeland,transitive",
        "--sizes",
        "4",
        "--margins",
        "0.1",
        "--steps",
        "20000",
        "--runs",
        "2",
        "--threads",
        "1",
    ];
    let r = joust(&args, &out);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let grid = json(out.join("grid.json"));
    let cells = grid["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    let md = std::fs::read_to_string(out.join("grid.md")).unwrap();
    for cell in cells {
        // The same C as `joust simulate` prints for the cell's matrix.
        let scenario = cell["scenario"].as_str().unwrap();
        let sim_out = temp(&format!("sim-{}", cell["family"].as_str().unwrap()));
        let s = joust(
            &[
                "simulate", "--matrix", scenario, "--policy", "uniform", "--steps", "1000",
            ],
            &sim_out,
        );
        assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
        let summary = json(sim_out.join("summary.json"));
        let rate = summary["policies"][0]["regret_bound"]["rate"]
            .as_f64()
            .unwrap();
        assert!(rate > 0.0);
        // (The simulator shuffles the arms, which changes only the order of the sum.)
        let grid_rate = cell["regret_rate"].as_f64().unwrap();
        assert!(
            (grid_rate - rate).abs() < 1e-9 * rate,
            "{scenario}: {grid_rate} {rate}"
        );
        // grid.md's `C ln T` column at 10^4 and 20000 steps.
        let bound = format!(
            "{:.0} / {:.0}",
            grid_rate * 10_000f64.ln(),
            grid_rate * 20_000f64.ln()
        );
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {} K=4", cell["family"].as_str().unwrap())))
            .unwrap_or_else(|| panic!("{md}"));
        assert!(row.contains(&format!("| {bound} |")), "{row}");
        let _ = std::fs::remove_dir_all(sim_out);
    }
    assert!(md.contains("Where the best policy pays at least"), "{md}");
    // A rerun reuses every figure (nothing new to run) and adds its time to theirs.
    let seconds = grid["seconds"].as_f64().unwrap();
    let r = joust(&args, &out);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let again = json(out.join("grid.json"));
    assert_eq!(again["cells"], grid["cells"]);
    assert!(again["seconds"].as_f64().unwrap() >= seconds);
    let _ = std::fs::remove_dir_all(out);
}
