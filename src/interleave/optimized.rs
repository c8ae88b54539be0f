//! Optimized interleaving (Radlinski & Craswell 2013).
//!
//! The shown list is drawn from a distribution over the *allowed* lists: those in which every
//! prefix is the union of a prefix of A and a prefix of B (each next document is the first
//! not-yet-shown document of A or of B). The distribution is chosen so that clicks that ignore
//! relevance give zero expected credit: for every depth k,
//!     sum_L p_L * sum_{i <= k} delta(L_i) = 0,
//! where a click on d credits A with 1/rank_A(d) and B with 1/rank_B(d) (the paper's "inverse
//! rank" credit; a ranker gets no credit for a document its list does not hold) and
//! delta(d) = 1/rank_A(d) - 1/rank_B(d). A random clicker who clicks the top k, or each document
//! independently with a fixed probability, thus gives both rankers the same expected credit.
//!
//! The system (one row per depth plus sum p = 1, one column per allowed list) is solved exactly
//! with the simplex method's Phase I ([`super::lp`]), which returns a basic solution: at most
//! depth + 1 lists get non-zero probability. It first tries an evenly spaced subset of the allowed
//! lists (any solution there is a solution of the whole system, found several times faster) and
//! uses all of them only when the subset admits none. The paper picks, among the solutions, one that
//! maximises a sensitivity objective; we take the Phase I vertex instead (it is unbiased, which is
//! the property that matters for correctness). When no distribution satisfies every depth (rare;
//! depth 1 is always satisfiable), the deepest constraints are dropped one by one and
//! `unbiased_depth` records how many remain.
//!
//! The outcome: the guarantee above is on the expected credit difference, and the sign of the
//! difference does not inherit it. With A = (1, 2, 3), B = (2, 3, 1) every allowed list shows all
//! three documents and only a click on 1 gives A more credit, so "more credit wins" makes B win a
//! uniformly random click 2/3 of the time whatever the distribution. So the judgement is spread:
//! with d = credit_A - credit_B and Z the largest |d| any click set can give on any list of the
//! distribution, A wins with probability d / Z when d > 0, B with -d / Z when d < 0, and the rest
//! is a tie. P(A wins) - P(B wins) = d / Z is linear in the credit, so its expectation under
//! clicks that do not depend on the documents is E[d] / Z = 0: neither ranker wins more often.
//! The service draws the recorded outcome from it; the likelier side is still the one with more
//! credit (equal within [`super::outcome::TIE_TOLERANCE`] is a tie).
//!
//! Unequal lengths: both lists are first cut to the length of the shorter one. The constraints
//! balance the expected credit, but a document only the longer list holds beyond the shorter
//! one's end credits only the longer list wherever it is shown: with A = (1), B = (2, 3) every
//! allowed list ends in 3, and a click on the last position always made B win (and with A
//! empty, every click did).
//!
//! A list of n documents has up to 2^n allowed lists, so the shown length is limited to
//! [`MAX_OPTIMIZED_LEN`].

use super::{Doc, InterleaveError, SoftOutcome, lp};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// The longest shown list optimized interleaving builds (2^12 candidate lists at most).
pub const MAX_OPTIMIZED_LEN: usize = 12;
/// How many of the allowed lists the first, fast attempt at solving uses.
const SUBSET_COLUMNS: usize = 96;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptimizedInterleaving<D> {
    pub shown: Vec<D>,
    /// Credit a click on `shown[i]` gives A: 1 / rank_A (0 if A does not rank it).
    pub credit_a: Vec<f64>,
    /// Credit a click on `shown[i]` gives B: 1 / rank_B (0 if B does not rank it).
    pub credit_b: Vec<f64>,
    /// Depths k for which the distribution makes random clicks' expected credit zero.
    pub unbiased_depth: usize,
    /// Z: the largest credit difference any click set gives on any list of the distribution
    /// (module docs). Tokens issued before it existed read 0: certain outcomes, as then.
    #[serde(default)]
    pub scale: f64,
}

/// The distribution over allowed lists that optimized interleaving samples from. It depends on
/// the two lists and the length cap only, so a caller that interleaves the same lists many times
/// (the preference-matrix estimator) can compute it once and [`sample`](Self::sample) it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptimizedDistribution<D> {
    /// The allowed lists with non-zero probability.
    pub lists: Vec<Vec<D>>,
    pub probabilities: Vec<f64>,
    pub unbiased_depth: usize,
    scale: f64,
    credit_a: Vec<Vec<f64>>,
    credit_b: Vec<Vec<f64>>,
}

/// Computes the distribution for `a` and `b` (duplicates are dropped first).
pub fn optimized_distribution<D: Doc>(
    a: &[D],
    b: &[D],
    max_len: usize,
) -> Result<OptimizedDistribution<D>, InterleaveError> {
    let (mut a, mut b) = (super::dedup(a), super::dedup(b));
    // Both lists cut to the shorter one's length (module docs, "Unequal lengths").
    let n = a.len().min(b.len());
    a.truncate(n);
    b.truncate(n);
    let system = System::new(&a, &b, max_len)?;
    let (p, unbiased_depth) = system.solve();
    let mut out = OptimizedDistribution {
        lists: Vec::new(),
        probabilities: Vec::new(),
        unbiased_depth,
        scale: 0.0,
        credit_a: Vec::new(),
        credit_b: Vec::new(),
    };
    for (list, &pi) in system.lists.iter().zip(&p) {
        if pi > 0.0 {
            out.lists
                .push(list.iter().map(|&u| system.union[u].clone()).collect());
            out.probabilities.push(pi);
            out.credit_a
                .push(list.iter().map(|&u| system.inv_rank_a[u]).collect());
            out.credit_b
                .push(list.iter().map(|&u| system.inv_rank_b[u]).collect());
        }
    }
    // A list's largest |d| clicks all the documents that favour one side.
    out.scale = out
        .credit_a
        .iter()
        .zip(&out.credit_b)
        .map(|(ca, cb)| {
            let (mut for_a, mut for_b) = (0.0, 0.0);
            for (x, y) in ca.iter().zip(cb) {
                if x > y {
                    for_a += x - y;
                } else {
                    for_b += y - x;
                }
            }
            f64::max(for_a, for_b)
        })
        .fold(0.0, f64::max);
    Ok(out)
}

impl<D: Doc> OptimizedDistribution<D> {
    /// Draws one interleaving.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> OptimizedInterleaving<D> {
        let total: f64 = self.probabilities.iter().sum();
        let mut r = rng.random::<f64>() * total;
        // Rounding can leave r a hair above zero after the last list.
        let mut chosen = self.lists.len() - 1;
        for (i, &p) in self.probabilities.iter().enumerate() {
            r -= p;
            if r < 0.0 {
                chosen = i;
                break;
            }
        }
        OptimizedInterleaving {
            shown: self.lists[chosen].clone(),
            credit_a: self.credit_a[chosen].clone(),
            credit_b: self.credit_b[chosen].clone(),
            unbiased_depth: self.unbiased_depth,
            scale: self.scale,
        }
    }
}

impl<D: Doc> OptimizedInterleaving<D> {
    /// Inverse-rank credit of the clicked documents: `[A, B]`.
    pub(crate) fn ranker_credit(&self, clicks: &[usize]) -> [f64; 2] {
        let a = clicks.iter().map(|&c| self.credit_a[c]).sum();
        let b = clicks.iter().map(|&c| self.credit_b[c]).sum();
        [a, b]
    }

    /// A wins with probability d / Z when d = credit_A - credit_B > 0, B with -d / Z when d < 0
    /// (module docs).
    pub(crate) fn soft_outcome(&self, clicks: &[usize]) -> SoftOutcome {
        let [a, b] = self.ranker_credit(clicks);
        let certain = SoftOutcome::compare(a, b);
        if self.scale <= 0.0 || certain == SoftOutcome::TIE {
            return certain;
        }
        let share = ((a - b).abs() / self.scale).min(1.0);
        let (to_a, to_b) = if a > b { (share, 0.0) } else { (0.0, share) };
        SoftOutcome {
            a: to_a,
            b: to_b,
            tie: 1.0 - share,
        }
    }
}

/// The allowed lists (as indices into the union of A and B) and the inverse ranks.
struct System<D> {
    union: Vec<D>,
    inv_rank_a: Vec<f64>,
    inv_rank_b: Vec<f64>,
    lists: Vec<Vec<usize>>,
}

impl<D: Doc> System<D> {
    fn new(a: &[D], b: &[D], max_len: usize) -> Result<Self, InterleaveError> {
        let mut union: Vec<D> = a.to_vec();
        union.extend(b.iter().filter(|d| !a.contains(d)).cloned());
        let n = max_len.min(union.len());
        if n > MAX_OPTIMIZED_LEN {
            return Err(InterleaveError::TooLongForOptimized {
                max: MAX_OPTIMIZED_LEN,
                asked: n,
            });
        }
        let index = |list: &[D]| -> Vec<usize> {
            list.iter()
                .map(|d| union.iter().position(|u| u == d).expect("in union"))
                .collect()
        };
        let (ia, ib) = (index(a), index(b));
        let inv_rank = |list: &[usize]| -> Vec<f64> {
            (0..union.len())
                .map(|u| match list.iter().position(|&x| x == u) {
                    Some(p) => 1.0 / (p + 1) as f64,
                    None => 0.0,
                })
                .collect()
        };
        let (inv_rank_a, inv_rank_b) = (inv_rank(&ia), inv_rank(&ib));
        let lists = allowed_lists(&ia, &ib, n, union.len());
        Ok(System {
            union,
            inv_rank_a,
            inv_rank_b,
            lists,
        })
    }

    /// Probabilities per allowed list and the depth up to which they are unbiased.
    fn solve(&self) -> (Vec<f64>, usize) {
        let n = self.lists.first().map_or(0, Vec::len);
        // prefix[k][l] = sum of delta over the top k+1 documents of list l.
        let mut prefix = vec![vec![0.0; self.lists.len()]; n];
        for (l, list) in self.lists.iter().enumerate() {
            let mut sum = 0.0;
            for (k, &u) in list.iter().enumerate() {
                sum += self.inv_rank_a[u] - self.inv_rank_b[u];
                prefix[k][l] = sum;
            }
        }
        // A feasible point among a subset of the lists is feasible for all of them, and a
        // system with far fewer columns solves far faster: try an evenly spaced subset first
        // (deterministic, so the distribution stays a function of the two lists), then all.
        let stride = self.lists.len().div_ceil(SUBSET_COLUMNS);
        let subset: Vec<usize> = (0..self.lists.len()).step_by(stride).collect();
        for depth in (1..=n).rev() {
            for columns in [&subset[..], &(0..self.lists.len()).collect::<Vec<_>>()[..]] {
                let mut rows: Vec<Vec<f64>> = prefix[..depth]
                    .iter()
                    .map(|row| columns.iter().map(|&c| row[c]).collect())
                    .collect();
                rows.push(vec![1.0; columns.len()]);
                let mut rhs = vec![0.0; depth];
                rhs.push(1.0);
                if let Some(x) = lp::feasible_point(&rows, &rhs) {
                    let mut p = vec![0.0; self.lists.len()];
                    for (&c, &v) in columns.iter().zip(&x) {
                        p[c] = v;
                    }
                    return (p, depth);
                }
                if stride == 1 {
                    break;
                }
            }
        }
        // Nothing to balance (an empty shown list): the single allowed list, with certainty.
        (vec![1.0 / self.lists.len() as f64; self.lists.len()], 0)
    }
}

/// Every allowed list of length `n` over union indices, given A and B as union indices.
fn allowed_lists(a: &[usize], b: &[usize], n: usize, union_len: usize) -> Vec<Vec<usize>> {
    let mut walk = Walk {
        a,
        b,
        n,
        placed: vec![false; union_len],
        prefix: Vec::with_capacity(n),
        out: Vec::new(),
    };
    walk.extend(0, 0);
    walk.out
}

/// Depth-first enumeration state: the prefix so far and which documents it holds.
struct Walk<'a> {
    a: &'a [usize],
    b: &'a [usize],
    n: usize,
    placed: Vec<bool>,
    prefix: Vec<usize>,
    out: Vec<Vec<usize>>,
}

impl Walk<'_> {
    /// Extends the prefix in every allowed way; `ia`, `ib` point at or before the first
    /// unplaced document of A and of B.
    fn extend(&mut self, mut ia: usize, mut ib: usize) {
        if self.prefix.len() == self.n {
            self.out.push(self.prefix.clone());
            return;
        }
        while ia < self.a.len() && self.placed[self.a[ia]] {
            ia += 1;
        }
        while ib < self.b.len() && self.placed[self.b[ib]] {
            ib += 1;
        }
        let next_a = self.a.get(ia).copied();
        let next_b = self.b.get(ib).copied().filter(|&d| Some(d) != next_a);
        for d in [next_a, next_b].into_iter().flatten() {
            self.placed[d] = true;
            self.prefix.push(d);
            self.extend(ia, ib);
            self.prefix.pop();
            self.placed[d] = false;
        }
    }
}
