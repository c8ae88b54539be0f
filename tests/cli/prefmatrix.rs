//! Preference matrices estimated from (synthetic) learning-to-rank data.

use joust::cli::{PrefmatrixArgs, run_prefmatrix};
use joust::interleave::Method;
use joust::sim::{
    ClickModel, Estimation, FeatureRankers, PrefMatrix, SyntheticSpec, estimate_matrix,
    synthetic_letor,
};
use std::path::{Path, PathBuf};

/// 100 queries of 30 documents, 5 features (strengths 2, 1, 0.5, 0.25, 0 in seeded order).
fn rankers(seed: u64) -> (FeatureRankers, Vec<f64>) {
    let spec: SyntheticSpec = "100:30:5".parse().unwrap();
    let data = synthetic_letor(&spec, seed);
    let ndcg = data
        .feature_ids
        .iter()
        .map(|&f| data.feature_ndcg(f, 10))
        .collect();
    (FeatureRankers::from_letor(&data, 10), ndcg)
}

fn how(method: &str, click_model: &str, comparisons: usize, seed: u64) -> Estimation {
    Estimation {
        method: Method::from_name(method).unwrap(),
        click_model: click_model.parse().unwrap(),
        comparisons,
        list_len: 10,
        seed,
    }
}

#[test]
fn perfect_clicks_crown_the_feature_with_the_best_ndcg() {
    // Every method, perfect click model: the matrix is a valid preference matrix and the feature
    // ranker with the best NDCG@10 is its Condorcet winner. Each p_ij is a mean of n = 2000
    // scores in [0, 1], so its standard error is at most sqrt(0.25 / n) = 0.011. The best
    // feature's weakest true preference (against the second best, signal strength 2 against 1)
    // is far above 1/2 + 5 standard errors (observed with these seeds: at least 0.58, over 7
    // standard errors); the run prints the margins.
    for method in [
        "team_draft",
        "balanced",
        "probabilistic",
        "optimized",
        "team_draft_multileave",
    ] {
        let n = 2000;
        for seed in [1, 2] {
            let (rankers, ndcg) = rankers(seed);
            let est = estimate_matrix(&rankers, &how(method, "perfect", n, seed)).unwrap();
            let matrix = PrefMatrix::from_rows(est.rows.clone(), None).expect("valid matrix");
            let best = (0..ndcg.len())
                .max_by(|&a, &b| ndcg[a].total_cmp(&ndcg[b]))
                .unwrap();
            let weakest = (0..ndcg.len())
                .filter(|&j| j != best)
                .map(|j| matrix.p(best, j))
                .fold(1.0, f64::min);
            println!(
                "{method} seed {seed}: ndcg {ndcg:.3?}, best {best} beats all with p >= {weakest:.3}"
            );
            assert_eq!(
                matrix.condorcet_winner(),
                Some(best),
                "{method}, seed {seed}: {:?}",
                est.rows
            );
            assert_eq!(est.comparisons, (10 * n) as u64);
        }
    }
}

#[test]
fn random_clicks_give_a_flat_matrix() {
    // Top-10 lists of 30 documents are all 10 long, so Team-Draft is fair under random clicks, and
    // Probabilistic always is: every p_ij estimates 1/2. Scores lie in [0, 1], so the standard
    // error is at most sqrt(0.25 / 4000) = 0.0079; the bound is 5 standard errors, 0.04.
    let (rankers, _) = rankers(3);
    for method in ["team_draft", "probabilistic"] {
        let est = estimate_matrix(&rankers, &how(method, "random", 4000, 3)).unwrap();
        for (i, row) in est.rows.iter().enumerate() {
            for (j, p) in row.iter().enumerate() {
                assert!((p - 0.5).abs() < 0.04, "{method}: p[{i}][{j}] = {p}");
            }
        }
    }
}

#[test]
fn the_seed_alone_decides_the_matrix() {
    let (rankers, _) = rankers(4);
    let run = |threads: usize, seed: u64| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            estimate_matrix(&rankers, &how("team_draft", "navigational", 300, seed)).unwrap()
        })
    };
    assert_eq!(run(1, 7), run(2, 7));
    assert_ne!(run(2, 7), run(2, 8));
}

fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("joust-prefmatrix-{}-{name}", std::process::id()))
}

fn args(out: &Path) -> PrefmatrixArgs {
    PrefmatrixArgs {
        letor: None,
        synthetic: Some("40:20:4".parse().unwrap()),
        click_model: ClickModel::Random,
        method: Method::from_name("balanced").unwrap(),
        tau: 3.0,
        comparisons: 200,
        length: 10,
        seed: 5,
        threads: Some(2),
        out: out.to_path_buf(),
    }
}

/// Reads the command's output: `#` comments, a header line of names, rows of values.
fn read_matrix(path: &Path) -> PrefMatrix {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let names: Vec<String> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect();
    let rows = lines
        .map(|l| l.split_whitespace().map(|v| v.parse().unwrap()).collect())
        .collect();
    PrefMatrix::from_rows(rows, Some(names)).expect("the simulator's checks pass")
}

#[test]
fn command_writes_the_same_matrix_from_synthetic_data_and_from_its_letor_file() {
    let (synthetic_out, letor_out, letor_in) =
        (temp_path("a.txt"), temp_path("b.txt"), temp_path("in.txt"));
    run_prefmatrix(args(&synthetic_out)).unwrap();
    let data = synthetic_letor(&"40:20:4".parse().unwrap(), 5);
    std::fs::write(&letor_in, data.to_letor_text()).unwrap();
    let mut from_file = args(&letor_out);
    from_file.synthetic = None;
    from_file.letor = Some(letor_in.clone());
    run_prefmatrix(from_file).unwrap();
    let a = read_matrix(&synthetic_out);
    assert_eq!(a.k(), 4);
    assert_eq!(a.names(), ["f1", "f2", "f3", "f4"]);
    assert_eq!(a, read_matrix(&letor_out));
    for p in [synthetic_out, letor_out, letor_in] {
        std::fs::remove_file(p).unwrap();
    }
}

#[test]
fn command_errors_name_the_file_and_line() {
    let out = temp_path("never.txt");
    let mut missing = args(&out);
    missing.synthetic = None;
    missing.letor = Some(temp_path("missing.txt"));
    let e = format!("{:#}", run_prefmatrix(missing).unwrap_err());
    assert!(
        e.contains("cannot open") && e.contains("missing.txt"),
        "{e}"
    );
    let bad = temp_path("bad.txt");
    std::fs::write(&bad, "1 qid:1 1:0.5 2:1\n2 qid:1 1:x 2:1\n").unwrap();
    let mut broken = args(&out);
    broken.synthetic = None;
    broken.letor = Some(bad.clone());
    let e = format!("{:#}", run_prefmatrix(broken).unwrap_err());
    assert!(
        e.contains("bad.txt") && e.contains("line 2: feature 1 has value 'x'"),
        "{e}"
    );
    std::fs::remove_file(bad).unwrap();
    assert!(!out.exists());
}
