//! Built-in preference matrices from the papers, as `--matrix` names them (`docs/simulation.md`
//! lists them with the results on each):
//!
//! - `arxiv6`: the 6-ranker matrix of the Beat-the-Mean poster, with a Condorcet winner;
//! - `utility:VECTOR:LINK`: ailon-2014 section 7's utility vectors (`1good`, `2good`, `3good`,
//!   `arith`, `geom`) through a link function (`linear`, `natural`, `logit`);
//! - `cycle`, `cycle2`: li-2020 section 5.2's 20 rankers, one winner above a cycle of the rest;
//! - `random-condorcet:K:SEED`, `random-copeland:K:SEED`: seeded random matrices with and without
//!   a Condorcet winner.

use rand::{Rng, SeedableRng};

use super::preference_matrix::PrefMatrix;
use crate::bandit::BanditRng;

/// The arXiv 6-arm matrix of the Beat-the-Mean poster (arms A..F = 0..5).
///
/// The poster's table is read with its own worked example, P(A > B) = 0.55, and its
/// transitivity notes ("A > D should be at least 0.06", "C > E should be at least 0.04"): the
/// entry in row r, column c below the diagonal is P(c beats r) - 1/2. A is then the Condorcet
/// winner. The table's upper triangle is the negation of the lower one except for B vs D
/// (-0.04 against 0.06); we take the lower triangle, as those notes do (P(B > D) = 0.56).
pub fn arxiv6() -> PrefMatrix {
    // LOWER[r][c] for c < r: P(arm c beats arm r) - 1/2.
    const LOWER: [[f64; 5]; 6] = [
        [0.0; 5],
        [0.05, 0.0, 0.0, 0.0, 0.0],
        [0.05, 0.05, 0.0, 0.0, 0.0],
        [0.04, 0.06, 0.04, 0.0, 0.0],
        [0.11, 0.08, 0.01, 0.04, 0.0],
        [0.11, 0.10, 0.06, 0.00, 0.01],
    ];
    let mut rows = vec![vec![0.5; 6]; 6];
    for (r, lower) in LOWER.iter().enumerate() {
        for (c, d) in lower.iter().enumerate().take(r) {
            rows[c][r] = 0.5 + d;
            rows[r][c] = 0.5 - d;
        }
    }
    let names = ["A", "B", "C", "D", "E", "F"].map(String::from).to_vec();
    PrefMatrix::from_rows(rows, Some(names)).expect("arxiv6 is a valid matrix")
}

/// Utility vectors of ailon-2014 section 7, by name.
pub const UTILITIES: [(&str, [f64; 6]); 5] = [
    ("1good", [0.8, 0.2, 0.2, 0.2, 0.2, 0.2]),
    ("2good", [0.8, 0.7, 0.2, 0.2, 0.2, 0.2]),
    ("3good", [0.8, 0.7, 0.7, 0.2, 0.2, 0.2]),
    ("arith", [0.8, 0.7, 0.575, 0.45, 0.325, 0.2]),
    ("geom", [0.8, 0.7, 0.512, 0.374, 0.274, 0.2]),
];

/// Link functions of ailon-2014 section 7: P(x beats y) from utilities x and y.
pub const LINKS: [&str; 3] = ["linear", "natural", "logit"];

fn link(name: &str, x: f64, y: f64) -> Option<f64> {
    match name {
        "linear" => Some((1.0 + x - y) / 2.0),
        "natural" => Some(x / (x + y)),
        "logit" => Some(1.0 / (1.0 + (y - x).exp())),
        _ => None,
    }
}

/// A utility-based matrix, e.g. `utility("arith", "logit")`.
pub fn utility(utilities: &str, link_name: &str) -> Result<PrefMatrix, String> {
    let u = UTILITIES
        .iter()
        .find(|(n, _)| *n == utilities)
        .map(|(_, u)| u)
        .ok_or_else(|| {
            format!("unknown utility vector `{utilities}`; known: 1good, 2good, 3good, arith, geom")
        })?;
    if link(link_name, 0.5, 0.5).is_none() {
        return Err(format!(
            "unknown link `{link_name}`; known: linear, natural, logit"
        ));
    }
    let rows = u
        .iter()
        .map(|&x| u.iter().map(|&y| link(link_name, x, y).unwrap()).collect())
        .collect();
    PrefMatrix::from_rows(rows, None)
}

/// The 15 utility scenarios as `(name, matrix)`, named `utility:VECTOR:LINK`.
pub fn all_utility() -> Vec<(String, PrefMatrix)> {
    UTILITIES
        .iter()
        .flat_map(|(u, _)| {
            LINKS
                .iter()
                .map(move |l| (format!("utility:{u}:{l}"), utility(u, l).unwrap()))
        })
        .collect()
}

/// Cycle (li-2020 section 5.2): arm 0 beats every other arm with `p_best`; the other `k - 1` arms
/// sit at a round table and each beats every arm to its left with probability `p_cycle`.
/// `cycle` is (20, 0.51, 1.0); `cycle2` is (20, 0.6, 0.51).
pub fn cycle_with(k: usize, p_best: f64, p_cycle: f64) -> PrefMatrix {
    let n = k - 1;
    let mut rows = vec![vec![0.5; k]; k];
    for row in rows.iter_mut().skip(1) {
        row[0] = 1.0 - p_best;
    }
    rows[0].iter_mut().skip(1).for_each(|p| *p = p_best);
    // Seats 0..n around the table; "to its left" are the next floor((n-1)/2) seats clockwise,
    // so every pair of the cycle is decided exactly once (n = 19 is odd: 9 on each side).
    for a in 0..n {
        for step in 1..=(n - 1) / 2 {
            let b = (a + step) % n;
            rows[1 + a][1 + b] = p_cycle;
            rows[1 + b][1 + a] = 1.0 - p_cycle;
        }
    }
    PrefMatrix::from_rows(rows, None).expect("cycle is a valid matrix")
}

/// `identical:K`: K identical rankers (every preference 1/2), the A/A test of a decision: no
/// ranker is better, so any decision is an error (every arm is a Copeland winner, so the
/// simulator counts it in `decided`, not in `decided_wrong`).
pub fn identical(k: usize) -> Result<PrefMatrix, String> {
    if k < 2 {
        return Err(format!("scenario `identical:{k}` needs at least 2 rankers"));
    }
    PrefMatrix::from_rows(vec![vec![0.5; k]; k], None)
}

pub fn cycle() -> PrefMatrix {
    cycle_with(20, 0.51, 1.0)
}

pub fn cycle2() -> PrefMatrix {
    cycle_with(20, 0.6, 0.51)
}

/// Off-diagonal preferences of random scenarios are drawn uniformly from this range: away from
/// 1/2 (so that every pair has a winner a finite number of duels can find) and from 0 and 1.
const RANDOM_RANGE: (f64, f64) = (0.05, 0.95);

/// Fills a K x K matrix with independent random preferences, none equal to 1/2 off the diagonal.
// Cells (i, j) and (j, i) are written together, which index loops say most plainly.
#[allow(clippy::needless_range_loop)]
fn random_rows(k: usize, rng: &mut BanditRng) -> Vec<Vec<f64>> {
    let mut rows = vec![vec![0.5; k]; k];
    for i in 0..k {
        for j in i + 1..k {
            let mut p: f64 = 0.5;
            while (p - 0.5).abs() < 1e-3 {
                p = rng.random_range(RANDOM_RANGE.0..RANDOM_RANGE.1);
            }
            rows[i][j] = p;
            rows[j][i] = 1.0 - p;
        }
    }
    rows
}

/// `random-condorcet:K:SEED`: a random K-arm matrix with a Condorcet winner. The winner (a
/// seeded random arm) beats every other arm with a probability uniform in [0.51, 0.95]; the other
/// pairs are uniform in [0.05, 0.95].
pub fn random_condorcet(k: usize, seed: u64) -> Result<PrefMatrix, String> {
    if k < 2 {
        return Err(format!(
            "random-condorcet needs at least 2 rankers, got {k}"
        ));
    }
    let mut rng = BanditRng::seed_from_u64(seed);
    let mut rows = random_rows(k, &mut rng);
    let winner = rng.random_range(0..k);
    for j in (0..k).filter(|&j| j != winner) {
        let p = rng.random_range(0.51..RANDOM_RANGE.1);
        rows[winner][j] = p;
        rows[j][winner] = 1.0 - p;
    }
    PrefMatrix::from_rows(rows, None)
}

/// `random-copeland:K:SEED`: a random K-arm matrix (K >= 3) with no Condorcet winner, so only
/// Copeland winners. Drawn as for [`random_condorcet`] without the planted winner; if the draw
/// has a Condorcet winner w, one of its duels is reversed: against an arm j with at least two
/// losses, which always exists (the K - 1 other arms share (K - 1) + (K - 1)(K - 2)/2 losses,
/// at least 1.5 each on average when K >= 3). Then w loses once, j keeps a loss, and no other
/// arm's record changes, so no arm is unbeaten.
pub fn random_copeland(k: usize, seed: u64) -> Result<PrefMatrix, String> {
    if k < 3 {
        return Err(format!(
            "random-copeland needs at least 3 rankers (2 rankers always have a Condorcet winner), got {k}"
        ));
    }
    let mut rng = BanditRng::seed_from_u64(seed);
    let mut rows = random_rows(k, &mut rng);
    let beaten = |rows: &Vec<Vec<f64>>, i: usize| (0..k).filter(|&j| rows[j][i] > 0.5).count();
    if let Some(w) = (0..k).find(|&i| beaten(&rows, i) == 0) {
        let candidates: Vec<usize> = (0..k)
            .filter(|&j| j != w && beaten(&rows, j) >= 2)
            .collect();
        let j = candidates[rng.random_range(0..candidates.len())];
        let p = rows[w][j];
        rows[w][j] = 1.0 - p;
        rows[j][w] = p;
    }
    PrefMatrix::from_rows(rows, None)
}

/// A random subset of `k` arms of `matrix` that has a Condorcet winner, in random order (as the
/// RUCB paper's experiments draw them from the MSLR matrices). Tries `MAX_SUBSET_DRAWS` subsets
/// before giving up.
pub fn condorcet_subset(
    matrix: &PrefMatrix,
    k: usize,
    rng: &mut BanditRng,
) -> Result<PrefMatrix, String> {
    const MAX_SUBSET_DRAWS: usize = 100_000;
    let n = matrix.k();
    if k < 2 || k > n {
        return Err(format!(
            "a subset must have between 2 and {n} rankers, got {k}"
        ));
    }
    let mut arms: Vec<usize> = (0..n).collect();
    for _ in 0..MAX_SUBSET_DRAWS {
        // Partial Fisher-Yates: the first k entries are a uniform random ordered subset.
        for i in 0..k {
            let j = rng.random_range(i..n);
            arms.swap(i, j);
        }
        let sub = matrix.subset(&arms[..k]);
        if sub.condorcet_winner().is_some() {
            return Ok(sub);
        }
    }
    Err(format!(
        "no subset of {k} rankers with a Condorcet winner found in {MAX_SUBSET_DRAWS} draws"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arxiv6_has_condorcet_winner_a() {
        let m = arxiv6();
        assert_eq!(m.condorcet_winner(), Some(0));
        assert!((m.p(0, 1) - 0.55).abs() < 1e-12);
        assert!((m.p(1, 3) - 0.56).abs() < 1e-12);
    }

    #[test]
    fn utility_scenarios_have_arm_zero_as_winner() {
        let all = all_utility();
        assert_eq!(all.len(), 15);
        for (name, m) in all {
            assert_eq!(m.condorcet_winner(), Some(0), "{name}");
        }
    }

    #[test]
    fn cycles_have_arm_zero_as_condorcet_winner() {
        for m in [cycle(), cycle2()] {
            assert_eq!(m.k(), 20);
            assert_eq!(m.condorcet_winner(), Some(0));
            // Every cycle arm beats exactly half of the other 18 cycle arms.
            for i in 1..20 {
                assert_eq!(m.copeland_scores()[i], 9);
            }
        }
    }

    #[test]
    fn random_condorcet_has_a_condorcet_winner() {
        for seed in 0..200 {
            for k in [2, 3, 8, 40] {
                let m = random_condorcet(k, seed).unwrap();
                assert_eq!(m.k(), k);
                assert!(m.condorcet_winner().is_some(), "k {k} seed {seed}");
            }
        }
        assert_eq!(random_condorcet(10, 3), random_condorcet(10, 3));
        assert_ne!(random_condorcet(10, 3), random_condorcet(10, 4));
        assert!(random_condorcet(1, 0).is_err());
    }

    #[test]
    fn random_copeland_has_no_condorcet_winner() {
        for seed in 0..200 {
            for k in [3, 4, 8, 40] {
                let m = random_copeland(k, seed).unwrap();
                assert_eq!(m.condorcet_winner(), None, "k {k} seed {seed}");
                assert!(!m.copeland_winners().is_empty());
            }
        }
        assert!(random_copeland(2, 0).is_err());
    }

    #[test]
    fn condorcet_subsets_have_a_winner_and_come_from_the_matrix() {
        let m = random_copeland(30, 1).unwrap();
        let mut rng = BanditRng::seed_from_u64(5);
        for _ in 0..20 {
            let sub = condorcet_subset(&m, 6, &mut rng).unwrap();
            assert_eq!(sub.k(), 6);
            let w = sub.condorcet_winner().unwrap();
            // Its name (r<index>) tells which arm of the full matrix it is.
            let index = |name: &str| name[1..].parse::<usize>().unwrap();
            let wi = index(&sub.names()[w]);
            for (j, name) in sub.names().iter().enumerate() {
                assert_eq!(sub.p(w, j), m.p(wi, index(name)));
            }
        }
        assert!(condorcet_subset(&m, 31, &mut rng).is_err());
    }
}
