//! Families of preference matrices: generators for the structures a search team's rankers can
//! have, each over a size, a margin and a noise level, so that a policy is judged over many
//! matrices of a kind rather than on the few the papers published (`joust grid`, and `--matrix
//! family:NAME:K:MARGIN:NOISE:SEED`).
//!
//! `margin` is the true winner's smallest gap: with a Condorcet winner, min_j p_wj - 1/2 is
//! exactly `margin`; in `copeland` (no Condorcet winner) it is the gap of each duel of the top
//! cycle. `noise` perturbs every other preference by up to that much, uniformly, never moving it
//! across 1/2 (so the family's structure, and the winner, stay as designed). Arm 0 is the winner
//! (one of the Copeland winners in `copeland`); simulations shuffle arms per run anyway.

use rand::{Rng, SeedableRng};

use super::preference_matrix::PrefMatrix;
use crate::bandit::BanditRng;
use crate::bandit::normal_cdf;

/// The families, as `--family` and `family:NAME:...` name them.
// New families go at the end: a grid's cell seeds follow the cells' order, so earlier grids'
// matrices stay the same.
pub const FAMILIES: [&str; 8] = [
    "transitive",
    "cyclic",
    "copeland",
    "near-ties",
    "long-tail",
    "bradley-terry",
    "thurstone",
    "copeland-random",
];

/// Furthest from 1/2 a generated preference goes: a pair decided with certainty would make a
/// duel carry no noise at all, which no pair of real rankers does.
const MAX_GAP: f64 = 0.48;

/// Closest to 1/2 a perturbed preference may come, so noise never makes a pair a true tie.
const MIN_GAP: f64 = 0.001;

/// What a family's generator is asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FamilyCell {
    pub k: usize,
    pub margin: f64,
    pub noise: f64,
    pub seed: u64,
}

/// A K x K matrix being built: p(i, j) and p(j, i) are always set together.
struct Rows {
    rows: Vec<Vec<f64>>,
    /// Pairs that carry the family's defining gap (the winner's duels, the top cycle): noise
    /// leaves them alone, so `margin` stays exact.
    fixed: Vec<Vec<bool>>,
}

impl Rows {
    fn new(k: usize) -> Self {
        Rows {
            rows: vec![vec![0.5; k]; k],
            fixed: vec![vec![false; k]; k],
        }
    }

    /// Sets P(i beats j) = 1/2 + gap (gap may be negative).
    fn set(&mut self, i: usize, j: usize, gap: f64) {
        let gap = gap.clamp(-MAX_GAP, MAX_GAP);
        self.rows[i][j] = 0.5 + gap;
        self.rows[j][i] = 0.5 - gap;
    }

    fn fix(&mut self, i: usize, j: usize, gap: f64) {
        self.set(i, j, gap);
        self.fixed[i][j] = true;
        self.fixed[j][i] = true;
    }

    /// Moves every pair not fixed by up to `noise`, keeping it on its side of 1/2.
    fn perturb(&mut self, noise: f64, rng: &mut BanditRng) {
        if noise <= 0.0 {
            return;
        }
        let k = self.rows.len();
        for i in 0..k {
            for j in i + 1..k {
                if self.fixed[i][j] {
                    continue;
                }
                let gap = self.rows[i][j] - 0.5;
                let moved = gap + rng.random_range(-noise..noise);
                let sign = if gap >= 0.0 { 1.0 } else { -1.0 };
                self.set(i, j, sign * (moved * sign).max(MIN_GAP));
            }
        }
    }

    fn finish(self) -> Result<PrefMatrix, String> {
        PrefMatrix::from_rows(self.rows, None)
    }
}

/// The winner (arm 0) beats every other arm by `margin`, and by more in a random share of its
/// duels: the smallest gap is exactly `margin` (against arm 1).
fn plant_winner(m: &mut Rows, margin: f64, extra: f64, rng: &mut BanditRng) {
    let k = m.rows.len();
    for j in 1..k {
        let more = if j == 1 || extra <= 0.0 {
            0.0
        } else {
            rng.random_range(0.0..extra)
        };
        m.fix(0, j, margin + more);
    }
}

/// Arms `from..k` in a strict order, each beating those after it by a gap growing with the
/// distance in the order, starting at `step`.
fn order(m: &mut Rows, from: usize, step: f64) {
    let k = m.rows.len();
    for i in from..k {
        for j in i + 1..k {
            m.set(i, j, step * (j - i) as f64);
        }
    }
}

/// `transitive`: a total order, arm 0 first; adjacent arms differ by `margin`, and a pair's gap
/// grows with the distance between them (a linear utility model, capped).
fn transitive(cell: FamilyCell) -> Rows {
    let mut m = Rows::new(cell.k);
    order(&mut m, 0, cell.margin);
    // The winner's duels carry the margin (against arm 1) and are kept from the noise.
    for j in 1..cell.k {
        m.fix(0, j, cell.margin * j as f64);
    }
    m
}

/// `cyclic`: a Condorcet winner by `margin` over a rest made of strong cycles (li-2020's Cycle,
/// generalised): the others sit at a round table and each beats the arms to its left by 0.2 to
/// 0.45, so Borda scores hide the winner.
fn cyclic(cell: FamilyCell, rng: &mut BanditRng) -> Rows {
    let mut m = Rows::new(cell.k);
    let n = cell.k - 1;
    for a in 0..n {
        for step in 1..=n / 2 {
            let b = (a + step) % n;
            if b == a || (n % 2 == 0 && step == n / 2 && a >= n / 2) {
                continue; // with n even, the opposite seat's pair is set once
            }
            m.set(1 + a, 1 + b, rng.random_range(0.2..0.45));
        }
    }
    plant_winner(&mut m, cell.margin, 0.05, rng);
    m
}

/// `copeland`: no Condorcet winner. Arms 0, 1 and 2 beat one another in a cycle by `margin`
/// each and beat every other arm by 0.1 to 0.4, so all three are Copeland winners; the rest
/// are in a random order with gaps of 0.05 to 0.3.
fn copeland(cell: FamilyCell, rng: &mut BanditRng) -> Rows {
    let mut m = Rows::new(cell.k);
    for i in 3..cell.k {
        for j in i + 1..cell.k {
            let gap = rng.random_range(0.05..0.3);
            m.set(i, j, if rng.random_bool(0.5) { gap } else { -gap });
        }
    }
    for (a, b) in [(0, 1), (1, 2), (2, 0)] {
        m.fix(a, b, cell.margin);
    }
    for top in 0..3 {
        for j in 3..cell.k {
            m.fix(top, j, rng.random_range(0.1..0.4));
        }
    }
    m
}

/// `copeland-random`: no Condorcet winner and no planted structure: every pair is decided either
/// way at random, by `margin` to `margin` + 0.3; if that leaves an arm unbeaten, one of its duels
/// is reversed (against an arm with at least two losses, as `random-copeland` does). The
/// Copeland winners are whichever arms the draw makes them, and usually beat only a few more
/// arms than the rest, so finding them needs most pairs' relations: the matrices on which
/// policies that target a Condorcet or Borda winner have regret linear in T.
fn copeland_random(cell: FamilyCell, rng: &mut BanditRng) -> Rows {
    let k = cell.k;
    let mut m = Rows::new(k);
    for i in 0..k {
        for j in i + 1..k {
            let gap = cell.margin + rng.random_range(0.0..0.3);
            m.set(i, j, if rng.random_bool(0.5) { gap } else { -gap });
        }
    }
    let beaten = |m: &Rows, i: usize| (0..k).filter(|&j| m.rows[j][i] > 0.5).count();
    if let Some(w) = (0..k).find(|&i| beaten(&m, i) == 0) {
        let candidates: Vec<usize> = (0..k).filter(|&j| j != w && beaten(&m, j) >= 2).collect();
        let j = candidates[rng.random_range(0..candidates.len())];
        let gap = m.rows[w][j] - 0.5;
        m.set(w, j, -gap);
    }
    // Every relation is the structure here: noise may move a pair but never reverse it, so the
    // Copeland winners stay the draw's.
    m
}

/// `near-ties` (as MSLR): a top group of max(3, K/8) arms within `margin` of one another; the
/// winner beats each of them by `margin`, the others in the group are near-tied (gaps below
/// `margin`, either way); the group beats the rest by 0.05 to 0.3, and the rest are near 1/2
/// with random orientation (gaps up to 0.2).
fn near_ties(cell: FamilyCell, rng: &mut BanditRng) -> Rows {
    let k = cell.k;
    let top = (k / 8).max(3).min(k);
    let mut m = Rows::new(k);
    for i in 1..k {
        for j in i + 1..k {
            let gap = if j < top {
                rng.random_range(MIN_GAP..cell.margin.max(2.0 * MIN_GAP))
            } else if i < top {
                rng.random_range(0.05..0.3)
            } else {
                rng.random_range(MIN_GAP..0.2)
            };
            // Inside the top group and the tail, pairs go either way; the group beats the tail.
            let either_way = j < top || i >= top;
            m.set(
                i,
                j,
                if either_way && rng.random_bool(0.5) {
                    -gap
                } else {
                    gap
                },
            );
        }
    }
    for j in 1..k {
        let gap = if j < top {
            cell.margin
        } else {
            cell.margin + rng.random_range(0.05..0.3)
        };
        m.fix(0, j, gap);
    }
    m
}

/// `long-tail`: three clearly better arms, 0 > 1 > 2 by `margin` each, beat a long tail by 0.2
/// to 0.3 (by `margin` to `margin` + 0.1 when `margin` is above 0.2); the tail's pairs are near-ties either way (gaps up to 0.05).
fn long_tail(cell: FamilyCell, rng: &mut BanditRng) -> Rows {
    let k = cell.k;
    let head = 3.min(k);
    let mut m = Rows::new(k);
    for i in head..k {
        for j in i + 1..k {
            let gap = rng.random_range(MIN_GAP..0.05);
            m.set(i, j, if rng.random_bool(0.5) { gap } else { -gap });
        }
    }
    for i in 0..head {
        for j in i + 1..head {
            m.set(i, j, cell.margin);
        }
        for j in head..k {
            // 0.2 to 0.3 above the tail, or the margin and up to 0.1 more if that is wider.
            let gap = rng.random_range(0.2..0.3);
            m.set(
                i,
                j,
                if cell.margin > 0.2 {
                    gap - 0.2 + cell.margin
                } else {
                    gap
                },
            );
        }
    }
    for j in 1..k {
        let gap = m.rows[0][j] - 0.5;
        m.fix(0, j, gap);
    }
    m
}

/// Utilities for the utility models: arm 0 at 0, arm 1 at `-d1` (the gap that gives `margin`
/// through the link), the others below arm 1 by up to `spread` (uniform).
fn utilities(k: usize, d1: f64, spread: f64, rng: &mut BanditRng) -> Vec<f64> {
    let mut u = vec![0.0, -d1];
    u.extend((2..k).map(|_| -d1 - rng.random_range(0.0..spread)));
    u.truncate(k);
    u
}

fn from_utilities(u: &[f64], link: impl Fn(f64) -> f64) -> Rows {
    let k = u.len();
    let mut m = Rows::new(k);
    for i in 0..k {
        for j in i + 1..k {
            let p = link(u[i] - u[j]);
            if i == 0 {
                m.fix(i, j, p - 0.5);
            } else {
                m.set(i, j, (p - 0.5).clamp(-MAX_GAP, MAX_GAP));
            }
        }
    }
    m
}

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// `bradley-terry`: P(i beats j) = 1 / (1 + e^-(u_i - u_j)), utilities spread over 3 logits.
fn bradley_terry(cell: FamilyCell, rng: &mut BanditRng) -> Rows {
    let p = 0.5 + cell.margin;
    let d1 = (p / (1.0 - p)).ln();
    from_utilities(&utilities(cell.k, d1, 3.0, rng), logistic)
}

/// `thurstone`: P(i beats j) = Phi(u_i - u_j), utilities spread over 2 standard deviations.
fn thurstone(cell: FamilyCell, rng: &mut BanditRng) -> Rows {
    let d1 = normal_quantile(0.5 + cell.margin);
    from_utilities(&utilities(cell.k, d1, 2.0, rng), normal_cdf)
}

/// Inverse of [`normal_cdf`] by bisection: called once per matrix, so plain and exact enough.
fn normal_quantile(p: f64) -> f64 {
    let (mut lo, mut hi) = (-10.0, 10.0);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if normal_cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// A matrix of the named family.
pub fn family(name: &str, cell: FamilyCell) -> Result<PrefMatrix, String> {
    let min_k = match name {
        "copeland" => 4,
        "copeland-random" => 3,
        _ => 2,
    };
    if cell.k < min_k || cell.k > 10_000 {
        return Err(format!(
            "family `{name}` needs {min_k} to 10000 rankers, got {}",
            cell.k
        ));
    }
    if !(cell.margin > 0.0 && cell.margin <= 0.45) {
        return Err(format!(
            "a family's margin is in (0, 0.45], got {}",
            cell.margin
        ));
    }
    if !(0.0..=0.45).contains(&cell.noise) {
        return Err(format!(
            "a family's noise is in [0, 0.45], got {}",
            cell.noise
        ));
    }
    let mut rng = BanditRng::seed_from_u64(cell.seed);
    let mut m = match name {
        "transitive" => transitive(cell),
        "cyclic" => cyclic(cell, &mut rng),
        "copeland" => copeland(cell, &mut rng),
        "near-ties" => near_ties(cell, &mut rng),
        "long-tail" => long_tail(cell, &mut rng),
        "bradley-terry" => bradley_terry(cell, &mut rng),
        "thurstone" => thurstone(cell, &mut rng),
        "copeland-random" => copeland_random(cell, &mut rng),
        _ => {
            return Err(format!(
                "unknown family `{name}`; families: {}",
                FAMILIES.join(", ")
            ));
        }
    };
    m.perturb(cell.noise, &mut rng);
    m.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells() -> impl Iterator<Item = FamilyCell> {
        [4, 5, 16, 41].into_iter().flat_map(|k| {
            [0.005, 0.05, 0.3].into_iter().flat_map(move |margin| {
                [0.0, 0.1].into_iter().flat_map(move |noise| {
                    (0..5).map(move |seed| FamilyCell {
                        k,
                        margin,
                        noise,
                        seed,
                    })
                })
            })
        })
    }

    #[test]
    fn condorcet_families_have_arm_zero_win_by_exactly_the_margin() {
        for name in FAMILIES.iter().filter(|n| !n.starts_with("copeland")) {
            for cell in cells() {
                let m = family(name, cell).unwrap();
                assert_eq!(m.condorcet_winner(), Some(0), "{name} {cell:?}");
                let smallest = (1..cell.k)
                    .map(|j| m.p(0, j) - 0.5)
                    .fold(f64::INFINITY, f64::min);
                assert!(
                    (smallest - cell.margin).abs() < 1e-6,
                    "{name} {cell:?}: {smallest}"
                );
            }
        }
    }

    #[test]
    fn copeland_has_three_copeland_winners_in_a_cycle() {
        for cell in cells() {
            let m = family("copeland", cell).unwrap();
            assert_eq!(m.condorcet_winner(), None, "{cell:?}");
            assert_eq!(m.copeland_winners(), vec![0, 1, 2], "{cell:?}");
            assert!((m.p(0, 1) - 0.5 - cell.margin).abs() < 1e-9);
            assert!((m.p(2, 0) - 0.5 - cell.margin).abs() < 1e-9);
        }
    }

    #[test]
    fn copeland_random_has_no_condorcet_winner_and_keeps_its_margin() {
        for cell in cells() {
            let m = family("copeland-random", cell).unwrap();
            assert_eq!(m.condorcet_winner(), None, "{cell:?}");
            // Noise may bring a pair closer to 1/2 than the margin, never across it.
            if cell.noise == 0.0 {
                for i in 0..cell.k {
                    for j in (0..cell.k).filter(|&j| j != i) {
                        assert!((m.p(i, j) - 0.5).abs() >= cell.margin.min(MAX_GAP) - 1e-9);
                    }
                }
            }
        }
    }

    #[test]
    fn cyclic_rest_has_no_arm_that_beats_all_others() {
        let m = family(
            "cyclic",
            FamilyCell {
                k: 20,
                margin: 0.01,
                noise: 0.0,
                seed: 1,
            },
        )
        .unwrap();
        let scores = m.copeland_scores();
        // 19 arms at a round table: each beats the 9 to its left.
        assert!(scores[1..].iter().all(|&s| s == 9), "{scores:?}");
    }

    #[test]
    fn seeds_decide_the_matrix() {
        let cell = FamilyCell {
            k: 12,
            margin: 0.05,
            noise: 0.05,
            seed: 3,
        };
        for name in FAMILIES {
            assert_eq!(family(name, cell), family(name, cell));
        }
        let other = FamilyCell { seed: 4, ..cell };
        assert_ne!(family("near-ties", cell), family("near-ties", other));
    }

    #[test]
    fn normal_cdf_and_quantile_agree() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.959_963_985) - 0.975).abs() < 1e-6);
        for p in [0.505, 0.6, 0.8, 0.95] {
            assert!((normal_cdf(normal_quantile(p)) - p).abs() < 1e-6);
        }
    }

    #[test]
    fn bad_cells_are_refused() {
        let ok = FamilyCell {
            k: 8,
            margin: 0.1,
            noise: 0.0,
            seed: 0,
        };
        assert!(family("nope", ok).is_err());
        assert!(family("copeland", FamilyCell { k: 3, ..ok }).is_err());
        assert!(family("cyclic", FamilyCell { margin: 0.0, ..ok }).is_err());
        assert!(family("cyclic", FamilyCell { noise: 0.5, ..ok }).is_err());
    }
}
