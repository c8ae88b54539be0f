//! Where a simulation's matrix comes from: `--matrix PATH_OR_SCENARIO`, and optionally a random
//! subset of its arms per run (`--subset K`).

use std::path::Path;

use rand::Rng;

use super::preference_matrix::PrefMatrix;
use super::{families, matrix_file, scenarios};
use crate::bandit::BanditRng;

/// The built-in scenario names, as `--help` and errors list them.
const SCENARIO_NAMES: &str = "arxiv6, identical:K, utility:{1good,2good,3good,arith,geom}:{linear,natural,logit}, \
     cycle, cycle2, random-condorcet:K:SEED, random-copeland:K:SEED, \
     family:{transitive,cyclic,copeland,near-ties,long-tail,bradley-terry,thurstone,copeland-random}:K:MARGIN:NOISE:SEED";

fn parse_number<T: std::str::FromStr>(what: &str, text: &str, scenario: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("scenario `{scenario}`: {what} `{text}` is not a whole number"))
}

fn parse_real(what: &str, text: &str, scenario: &str) -> Result<f64, String> {
    text.parse()
        .map_err(|_| format!("scenario `{scenario}`: {what} `{text}` is not a number"))
}

/// A built-in scenario by name, `None` when `name` is not a scenario name.
pub fn scenario(name: &str) -> Option<Result<PrefMatrix, String>> {
    let parts: Vec<&str> = name.split(':').collect();
    match parts.as_slice() {
        ["arxiv6"] => Some(Ok(scenarios::arxiv6())),
        ["cycle"] => Some(Ok(scenarios::cycle())),
        ["cycle2"] => Some(Ok(scenarios::cycle2())),
        ["utility", u, l] => Some(scenarios::utility(u, l)),
        ["identical", k] => Some((|| scenarios::identical(parse_number("K", k, name)?))()),
        [kind @ ("random-condorcet" | "random-copeland"), k, seed] => Some((|| {
            let k: usize = parse_number("K", k, name)?;
            let seed: u64 = parse_number("SEED", seed, name)?;
            if *kind == "random-condorcet" {
                scenarios::random_condorcet(k, seed)
            } else {
                scenarios::random_copeland(k, seed)
            }
        })()),
        ["family", family, k, margin, noise, seed] => Some((|| {
            let cell = families::FamilyCell {
                k: parse_number("K", k, name)?,
                margin: parse_real("MARGIN", margin, name)?,
                noise: parse_real("NOISE", noise, name)?,
                seed: parse_number("SEED", seed, name)?,
            };
            families::family(family, cell)
        })()),
        [
            "utility" | "random-condorcet" | "random-copeland" | "family" | "identical",
            ..,
        ] => Some(Err(format!(
            "scenario `{name}` has the wrong number of `:` fields; scenarios: {SCENARIO_NAMES}"
        ))),
        _ => None,
    }
}

/// Resolves `--matrix`: a scenario name, else a matrix file. An argument that looks like a path
/// (it has a `/` or a file extension) and names no file is reported as a missing file; anything
/// else that is neither is answered with the scenario names.
pub fn resolve_matrix(arg: &str) -> Result<PrefMatrix, String> {
    if let Some(m) = scenario(arg) {
        return m;
    }
    let path = Path::new(arg);
    if path.exists() {
        return matrix_file::load(path);
    }
    if arg.contains('/') || path.extension().is_some() {
        return Err(format!("no such file: {arg}"));
    }
    Err(format!(
        "`{arg}` is neither a matrix file nor a scenario; scenarios: {SCENARIO_NAMES}"
    ))
}

/// The matrix every run plays on, before that run's random relabelling.
#[derive(Debug, Clone)]
pub enum MatrixPlan {
    /// The same matrix in every run, arms shuffled per run.
    Whole(PrefMatrix),
    /// Per run, a fresh random subset of `k` arms that has a Condorcet winner.
    CondorcetSubsets { matrix: PrefMatrix, k: usize },
}

impl MatrixPlan {
    pub fn new(matrix: PrefMatrix, subset: Option<usize>) -> Result<Self, String> {
        match subset {
            None => Ok(MatrixPlan::Whole(matrix)),
            Some(k) if k < 2 || k > matrix.k() => Err(format!(
                "--subset {k}: must be between 2 and the matrix's {} rankers",
                matrix.k()
            )),
            Some(k) => Ok(MatrixPlan::CondorcetSubsets { matrix, k }),
        }
    }

    /// Number of arms each run has.
    pub fn k(&self) -> usize {
        match self {
            MatrixPlan::Whole(m) => m.k(),
            MatrixPlan::CondorcetSubsets { k, .. } => *k,
        }
    }

    /// The matrix one run sees: arms in a uniformly random order, as the papers do, so that no
    /// policy profits from index-order tie breaking.
    pub fn draw(&self, rng: &mut BanditRng) -> Result<PrefMatrix, String> {
        match self {
            MatrixPlan::Whole(m) => {
                let k = m.k();
                let mut perm: Vec<usize> = (0..k).collect();
                for i in (1..k).rev() {
                    perm.swap(i, rng.random_range(0..=i));
                }
                Ok(m.permuted(&perm))
            }
            MatrixPlan::CondorcetSubsets { matrix, k } => {
                scenarios::condorcet_subset(matrix, *k, rng)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_files_and_unknown_names_are_told_apart() {
        assert_eq!(
            resolve_matrix("data/no-such-matrix.txt").unwrap_err(),
            "no such file: data/no-such-matrix.txt"
        );
        assert_eq!(
            resolve_matrix("matrix.csv").unwrap_err(),
            "no such file: matrix.csv"
        );
        let err = resolve_matrix("nonsense").unwrap_err();
        assert!(
            err.contains("neither a matrix file nor a scenario"),
            "{err}"
        );
        assert!(
            err.contains("arxiv6") && err.contains("random-copeland"),
            "{err}"
        );
        assert_eq!(resolve_matrix("arxiv6").unwrap().k(), 6);
    }
}
