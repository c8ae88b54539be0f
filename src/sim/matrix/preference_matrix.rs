//! Preference matrices: P (K x K) with p_ij = P(arm i beats arm j), p_ij + p_ji = 1, p_ii = 1/2.
//! A duel of (i, j) in simulation is a Bernoulli(p_ij) draw.

use rand::Rng;

/// Tolerance for p_ij + p_ji = 1 and p_ii = 1/2 (the MSLR files carry 18 significant digits).
pub const TOLERANCE: f64 = 1e-6;

#[derive(Debug, Clone, PartialEq)]
pub struct PrefMatrix {
    k: usize,
    p: Vec<f64>,
    names: Vec<String>,
}

impl PrefMatrix {
    /// Builds a matrix from rows, validating shape and consistency.
    pub fn from_rows(rows: Vec<Vec<f64>>, names: Option<Vec<String>>) -> Result<Self, String> {
        let k = rows.len();
        if k < 2 {
            return Err(format!(
                "a preference matrix needs at least 2 rankers, got {k}"
            ));
        }
        for (i, row) in rows.iter().enumerate() {
            if row.len() != k {
                return Err(format!(
                    "row {} has {} values; the matrix is {k} x {k}",
                    i + 1,
                    row.len()
                ));
            }
        }
        for (i, row) in rows.iter().enumerate() {
            if (row[i] - 0.5).abs() > TOLERANCE {
                return Err(format!(
                    "diagonal entry ({0}, {0}) is {1}, must be 1/2",
                    i + 1,
                    row[i]
                ));
            }
            for (j, &v) in row.iter().enumerate() {
                if !(0.0..=1.0).contains(&v) {
                    return Err(format!(
                        "entry ({}, {}) is {v}, outside [0, 1]",
                        i + 1,
                        j + 1
                    ));
                }
                if (v + rows[j][i] - 1.0).abs() > TOLERANCE {
                    return Err(format!(
                        "entries ({0}, {1}) and ({1}, {0}) sum to {2}, must sum to 1",
                        i + 1,
                        j + 1,
                        v + rows[j][i]
                    ));
                }
            }
        }
        let names = match names {
            Some(n) if n.len() != k => return Err(format!("{} names for {k} rankers", n.len())),
            Some(n) => n,
            None => (0..k).map(|i| format!("r{i}")).collect(),
        };
        Ok(PrefMatrix {
            k,
            p: rows.into_iter().flatten().collect(),
            names,
        })
    }

    pub fn k(&self) -> usize {
        self.k
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    #[inline]
    pub fn p(&self, i: usize, j: usize) -> f64 {
        self.p[i * self.k + j]
    }

    /// One duel: true when `i` beats `j`.
    #[inline]
    pub fn duel<R: Rng + ?Sized>(&self, i: usize, j: usize, rng: &mut R) -> bool {
        rng.random::<f64>() < self.p(i, j)
    }

    /// The Condorcet winner: the arm with p_ij > 1/2 against every other arm.
    pub fn condorcet_winner(&self) -> Option<usize> {
        (0..self.k).find(|&i| (0..self.k).all(|j| j == i || self.p(i, j) > 0.5))
    }

    /// Copeland scores: how many other arms each arm beats (p_ij > 1/2).
    pub fn copeland_scores(&self) -> Vec<usize> {
        (0..self.k)
            .map(|i| {
                (0..self.k)
                    .filter(|&j| j != i && self.p(i, j) > 0.5)
                    .count()
            })
            .collect()
    }

    /// Arms with the highest Copeland score.
    pub fn copeland_winners(&self) -> Vec<usize> {
        let s = self.copeland_scores();
        let best = s.iter().copied().max().unwrap_or(0);
        (0..self.k).filter(|&i| s[i] == best).collect()
    }

    /// The matrix with arms relabelled: new arm `a` is old arm `perm[a]`.
    pub fn permuted(&self, perm: &[usize]) -> PrefMatrix {
        assert_eq!(perm.len(), self.k);
        let mut p = Vec::with_capacity(self.k * self.k);
        for &i in perm {
            for &j in perm {
                p.push(self.p(i, j));
            }
        }
        PrefMatrix {
            k: self.k,
            p,
            names: perm.iter().map(|&i| self.names[i].clone()).collect(),
        }
    }

    /// The sub-matrix of the given arms, in the given order.
    pub fn subset(&self, arms: &[usize]) -> PrefMatrix {
        let mut m = self.permuted_prefix(arms);
        m.k = arms.len();
        m
    }

    fn permuted_prefix(&self, arms: &[usize]) -> PrefMatrix {
        let mut p = Vec::with_capacity(arms.len() * arms.len());
        for &i in arms {
            for &j in arms {
                p.push(self.p(i, j));
            }
        }
        PrefMatrix {
            k: arms.len(),
            p,
            names: arms.iter().map(|&i| self.names[i].clone()).collect(),
        }
    }
}
