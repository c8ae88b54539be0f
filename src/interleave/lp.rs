//! A small exact feasibility solver for the linear systems of optimized interleaving:
//! find x >= 0 with M x = b. Phase I of the simplex method on a dense tableau, with Bland's rule
//! (lowest index enters and leaves) so that it cannot cycle on the degenerate systems that shared
//! documents produce. The systems have a dozen rows and at most a few thousand columns.

/// Reduced costs and pivots below this are treated as zero.
const EPS: f64 = 1e-10;
/// Pivots after which Dantzig's rule gives way to Bland's, per row of the system.
const DANTZIG_PIVOTS_PER_ROW: usize = 20;
/// The sum of artificial variables left at the optimum below which the system is feasible.
const FEASIBLE: f64 = 1e-8;

/// A basic solution x >= 0 of `rows * x = rhs`, or `None` when there is none.
/// Every row of `rows` has the same length (the number of variables).
pub(crate) fn feasible_point(rows: &[Vec<f64>], rhs: &[f64]) -> Option<Vec<f64>> {
    let m = rows.len();
    let n = rows.first().map_or(0, Vec::len);
    let width = n + m + 1;
    // Tableau: original columns, one artificial per row, right-hand side last.
    let mut t = vec![0.0; m * width];
    for i in 0..m {
        let sign = if rhs[i] < 0.0 { -1.0 } else { 1.0 };
        for j in 0..n {
            t[i * width + j] = sign * rows[i][j];
        }
        t[i * width + n + i] = 1.0;
        t[i * width + width - 1] = sign * rhs[i];
    }
    let mut basis: Vec<usize> = (n..n + m).collect();
    // Phase I objective: minimise the sum of artificials; reduced costs of original columns.
    let mut cost = vec![0.0; width];
    for i in 0..m {
        for j in 0..n {
            cost[j] -= t[i * width + j];
        }
        cost[width - 1] -= t[i * width + width - 1];
    }
    // Artificial columns never re-enter once they leave (standard for Phase I).
    let mut pivots = 0;
    loop {
        let bland = pivots > DANTZIG_PIVOTS_PER_ROW * m;
        let enter = if bland {
            (0..n).find(|&j| cost[j] < -EPS)
        } else {
            (0..n)
                .filter(|&j| cost[j] < -EPS)
                .min_by(|&x, &y| cost[x].total_cmp(&cost[y]))
        };
        let Some(enter) = enter else { break };
        pivots += 1;
        let mut leave: Option<usize> = None;
        for i in 0..m {
            let a = t[i * width + enter];
            if a > EPS {
                let ratio = t[i * width + width - 1] / a;
                let better = match leave {
                    None => true,
                    Some(l) => {
                        let best = t[l * width + width - 1] / t[l * width + enter];
                        ratio < best - EPS || (ratio <= best + EPS && basis[i] < basis[l])
                    }
                };
                if better {
                    leave = Some(i);
                }
            }
        }
        // Phase I is bounded below by zero, so some row always limits the step.
        let l = leave?;
        pivot(&mut t, width, l, enter);
        let factor = cost[enter];
        for j in 0..width {
            cost[j] -= factor * t[l * width + j];
        }
        basis[l] = enter;
    }
    if -cost[width - 1] > FEASIBLE {
        return None;
    }
    let mut x = vec![0.0; n];
    for (i, &var) in basis.iter().enumerate() {
        if var < n {
            x[var] = t[i * width + width - 1].max(0.0);
        }
    }
    Some(x)
}

fn pivot(t: &mut [f64], width: usize, row: usize, col: usize) {
    let m = t.len() / width;
    let p = t[row * width + col];
    for j in 0..width {
        t[row * width + j] /= p;
    }
    for i in 0..m {
        if i == row {
            continue;
        }
        let f = t[i * width + col];
        if f != 0.0 {
            for j in 0..width {
                t[i * width + j] -= f * t[row * width + j];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_point_of_a_feasible_system() {
        // x + y + z = 1, x - z = 0.2: e.g. x = 0.2 + z.
        let rows = vec![vec![1.0, 1.0, 1.0], vec![1.0, 0.0, -1.0]];
        let x = feasible_point(&rows, &[1.0, 0.2]).expect("feasible");
        assert!(x.iter().all(|&v| v >= 0.0));
        assert!((x[0] + x[1] + x[2] - 1.0).abs() < 1e-9);
        assert!((x[0] - x[2] - 0.2).abs() < 1e-9);
    }

    #[test]
    fn reports_an_infeasible_system() {
        // x + y = 1 and x + y = 2 cannot both hold; nor can x = -1 with x >= 0.
        let rows = vec![vec![1.0, 1.0], vec![1.0, 1.0]];
        assert!(feasible_point(&rows, &[1.0, 2.0]).is_none());
        assert!(feasible_point(&[vec![1.0]], &[-1.0]).is_none());
    }

    #[test]
    fn handles_redundant_and_zero_rows() {
        // A zero row with zero right-hand side and a repeated row are common in interleaving
        // systems when both lists share their top documents.
        let rows = vec![
            vec![0.0, 0.0],
            vec![1.0, 1.0],
            vec![1.0, 1.0],
            vec![1.0, -1.0],
        ];
        let x = feasible_point(&rows, &[0.0, 1.0, 1.0, 0.0]).expect("feasible");
        assert!((x[0] - 0.5).abs() < 1e-9 && (x[1] - 0.5).abs() < 1e-9);
    }
}
