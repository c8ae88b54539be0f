//! Built-in preference matrices from the papers (see ALGORITHMS.md, "Evaluation").

use super::matrix::PrefMatrix;

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

pub fn cycle() -> PrefMatrix {
    cycle_with(20, 0.51, 1.0)
}

pub fn cycle2() -> PrefMatrix {
    cycle_with(20, 0.6, 0.51)
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
}
