//! The cells of a grid: every family at every size, margin and noise, each with its own matrix
//! seed derived from the grid's seed (so a second seed gives new matrices of the same kinds,
//! the ones a policy was not tuned on).

use crate::sim::matrix::PrefMatrix;
use crate::sim::matrix::families::{FAMILIES, FamilyCell, family};
use crate::sim::run::run_seed;

/// What `joust grid` sweeps.
#[derive(Debug, Clone, PartialEq)]
pub struct GridPlan {
    pub families: Vec<String>,
    pub sizes: Vec<usize>,
    pub margins: Vec<f64>,
    pub noises: Vec<f64>,
    /// Seed of the generators: cell `c`'s matrix has seed `run_seed(seed, c)`.
    pub seed: u64,
    /// Matrices given as they are (files such as the MSLR ones, or scenarios), each a cell of
    /// its own after the families', under the name it was given by.
    pub given: Vec<(String, PrefMatrix)>,
}

/// One cell: a family's matrix with its parameters, and the name `--matrix` would take for it.
#[derive(Debug, Clone)]
pub struct GridCell {
    /// The family, or `given` for a matrix given as it is.
    pub family: String,
    /// For a given matrix: its size, its Condorcet winner's smallest gap (0 without one), no
    /// noise and seed 0.
    pub cell: FamilyCell,
    pub matrix: PrefMatrix,
    /// How `--matrix` names it.
    pub name: String,
}

impl GridCell {
    /// `family:NAME:K:MARGIN:NOISE:SEED`, which `joust simulate --matrix` reads back into the
    /// same matrix.
    pub fn scenario(&self) -> String {
        self.name.clone()
    }

    fn given(name: &str, matrix: &PrefMatrix) -> GridCell {
        let k = matrix.k();
        let margin = matrix.condorcet_winner().map_or(0.0, |w| {
            (0..k)
                .filter(|&j| j != w)
                .map(|j| matrix.p(w, j) - 0.5)
                .fold(f64::INFINITY, f64::min)
        });
        GridCell {
            family: "given".into(),
            cell: FamilyCell {
                k,
                margin,
                noise: 0.0,
                seed: 0,
            },
            matrix: matrix.clone(),
            name: name.to_string(),
        }
    }
}

impl GridPlan {
    /// Every cell, in the order families, sizes, margins, noises; refuses a bad family or
    /// parameter before anything runs.
    pub fn cells(&self) -> Result<Vec<GridCell>, String> {
        let families_swept = !self.families.is_empty();
        if families_swept
            && (self.sizes.is_empty() || self.margins.is_empty() || self.noises.is_empty())
        {
            return Err("a grid of families needs at least one size, margin and noise".into());
        }
        if !families_swept && self.given.is_empty() {
            return Err("a grid needs at least one family or given matrix".into());
        }
        let mut cells = Vec::new();
        for name in &self.families {
            if !FAMILIES.contains(&name.as_str()) {
                return Err(format!(
                    "unknown family `{name}`; families: {}",
                    FAMILIES.join(", ")
                ));
            }
            for &k in &self.sizes {
                for &margin in &self.margins {
                    for &noise in &self.noises {
                        let cell = FamilyCell {
                            k,
                            margin,
                            noise,
                            seed: run_seed(self.seed, cells.len() as u64),
                        };
                        let matrix = family(name, cell)?;
                        cells.push(GridCell {
                            family: name.clone(),
                            cell,
                            matrix,
                            name: format!("family:{name}:{k}:{margin}:{noise}:{}", cell.seed),
                        });
                    }
                }
            }
        }
        cells.extend(self.given.iter().map(|(name, m)| GridCell::given(name, m)));
        Ok(cells)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::matrix::resolve_matrix;

    fn plan(seed: u64) -> GridPlan {
        GridPlan {
            families: vec!["cyclic".into(), "copeland".into()],
            sizes: vec![4, 9],
            margins: vec![0.01, 0.2],
            noises: vec![0.05],
            seed,
            given: Vec::new(),
        }
    }

    #[test]
    fn cells_cover_the_grid_and_name_their_matrix() {
        let cells = plan(1).cells().unwrap();
        assert_eq!(cells.len(), 2 * 2 * 2);
        for c in &cells {
            assert_eq!(
                resolve_matrix(&c.scenario()).unwrap(),
                c.matrix,
                "{}",
                c.scenario()
            );
        }
    }

    #[test]
    fn another_seed_gives_other_matrices_of_the_same_kinds() {
        let (a, b) = (plan(1).cells().unwrap(), plan(2).cells().unwrap());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(
                (&x.family, x.cell.k, x.cell.margin),
                (&y.family, y.cell.k, y.cell.margin)
            );
            assert_ne!(x.matrix, y.matrix);
        }
    }

    #[test]
    fn bad_grids_are_refused() {
        let mut p = plan(1);
        p.families = vec!["nope".into()];
        assert!(p.cells().is_err());
        let mut p = plan(1);
        p.sizes.clear();
        assert!(p.cells().is_err());
        let mut p = plan(1);
        p.families.clear();
        assert!(p.cells().is_err());
    }

    #[test]
    fn given_matrices_are_cells_with_their_winners_margin() {
        let mut p = plan(1);
        p.families.clear();
        p.given = vec![("cycle".into(), resolve_matrix("cycle").unwrap())];
        let cells = p.cells().unwrap();
        assert_eq!(cells.len(), 1);
        assert_eq!(
            (cells[0].scenario().as_str(), cells[0].cell.k),
            ("cycle", 20)
        );
        assert!((cells[0].cell.margin - 0.01).abs() < 1e-9);
    }
}
