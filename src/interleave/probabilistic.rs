//! Probabilistic interleaving (Hofmann, Whiteson & de Rijke 2011).
//!
//! Each ranker becomes a softmax over its ranks: P_X(d) proportional to rank_X(d)^-tau,
//! renormalised over the documents not shown yet. For every slot a fair coin picks a ranker and
//! the slot gets a document drawn from that ranker's softmax.
//!
//! Documents in only one list get no weight in the other ranker's softmax: a ranker never
//! produces, and so is never credited for, a document it did not list. A slot's producer is then
//! known for certain when only one list holds the shown document, and a click there can only
//! favour that list. (Ranking missing documents just below the list, at `len + 1`, gives every
//! ranker a share in every document: with A = (1, 2), B = (3), shown (3, 2, 1), a click on 2 made
//! B the likelier producer, since B had nothing else left.)
//!
//! Length: the shown list has n = min(max_len, |A|, |B|) documents. At slot i at most i - 1 of a
//! ranker's documents are shown, so with i <= n both rankers still have one to offer and every
//! slot's coin is a fair coin between two possible producers. The assignment of slots to rankers
//! is then uniform over {A, B}^n and independent of the clicks whenever the clicks do not depend
//! on the documents; since swapping A and B in an assignment swaps the outcome, A and B win
//! equally often under any such clicks. Showing more than n documents would break this: once a
//! ranker has nothing left, every later slot is the other's for certain, and a click there
//! favours it (the longer list would win under random clicks). An empty list shows nothing.
//!
//! Credit is marginalised over assignments rather than taken from the coins actually thrown. The
//! probability of the shown list and an assignment (who produced each slot) factorises per slot:
//! P(l, a) = prod_i 1/2 * P^(i)_{a_i}(l_i), where P^(i)_X is X's softmax renormalised over the
//! documents not among l_1..l_{i-1}, which depends on the shown list only, not on the assignment.
//! So given the shown list the slots' assignments are independent, with
//! P(a_i = A | l) = P^(i)_A(l_i) / (P^(i)_A(l_i) + P^(i)_B(l_i)), computed once when
//! interleaving. Only clicked slots change the outcome (A wins when more clicks are assigned to
//! A), so the outcome distribution is a Poisson-binomial over the c clicked slots: O(c^2), not 2^n.

use super::{Doc, SoftOutcome};
use rand::Rng;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbabilisticInterleaving<D> {
    pub shown: Vec<D>,
    /// P(slot i was produced by A | shown list).
    pub p_a: Vec<f64>,
    pub tau: f64,
}

impl<D: Doc> ProbabilisticInterleaving<D> {
    /// `a` and `b` must be free of duplicates (see [`super::dedup`]).
    pub(crate) fn new<R: Rng + ?Sized>(
        a: &[D],
        b: &[D],
        tau: f64,
        max_len: usize,
        rng: &mut R,
    ) -> Self {
        let (union, weight_a, weight_b) = softmax_weights(a, b, tau);
        // Both rankers can produce every slot up to the shorter list's length (module docs).
        let n = max_len.min(a.len()).min(b.len());
        let mut unplaced: Vec<usize> = (0..union.len()).collect();
        let mut shown = Vec::with_capacity(n);
        let mut p_a = Vec::with_capacity(n);
        for _ in 0..n {
            // Sums are recomputed (not updated by subtraction) to keep them exact enough for
            // long lists, where tiny tail weights would otherwise drown in rounding.
            let total_a: f64 = unplaced.iter().map(|&u| weight_a[u]).sum();
            let total_b: f64 = unplaced.iter().map(|&u| weight_b[u]).sum();
            let (weights, total) = if rng.random::<bool>() {
                (&weight_a, total_a)
            } else {
                (&weight_b, total_b)
            };
            let slot = sample_weighted(&unplaced, weights, total, rng);
            let u = unplaced.remove(slot);
            let (pa, pb) = (weight_a[u] / total_a, weight_b[u] / total_b);
            p_a.push(pa / (pa + pb));
            shown.push(union[u].clone());
        }
        ProbabilisticInterleaving { shown, p_a, tau }
    }

    /// Expected number of clicks assigned to each ranker: `[A, B]`.
    pub(crate) fn ranker_credit(&self, clicks: &[usize]) -> [f64; 2] {
        let a: f64 = clicks.iter().map(|&c| self.p_a[c]).sum();
        [a, clicks.len() as f64 - a]
    }

    /// The outcome marginalised over assignments (see the module docs).
    pub(crate) fn soft_outcome(&self, clicks: &[usize]) -> SoftOutcome {
        // dist[k] = P(exactly k of the clicks processed so far are assigned to A).
        let mut dist = vec![0.0; clicks.len() + 1];
        dist[0] = 1.0;
        for (seen, &c) in clicks.iter().enumerate() {
            let p = self.p_a[c];
            for k in (0..=seen + 1).rev() {
                let from_a = if k > 0 { dist[k - 1] * p } else { 0.0 };
                dist[k] = from_a + dist[k] * (1.0 - p);
            }
        }
        let c = clicks.len();
        let mut out = SoftOutcome {
            a: 0.0,
            b: 0.0,
            tie: 0.0,
        };
        for (k, &p) in dist.iter().enumerate() {
            match (2 * k).cmp(&c) {
                std::cmp::Ordering::Greater => out.a += p,
                std::cmp::Ordering::Less => out.b += p,
                std::cmp::Ordering::Equal => out.tie += p,
            }
        }
        out
    }
}

/// The union of the two lists (A's order, then B's documents not in A) and each document's
/// unnormalised softmax weight rank^-tau under A and under B (0 for a document the list lacks).
pub(crate) fn softmax_weights<D: Doc>(a: &[D], b: &[D], tau: f64) -> (Vec<D>, Vec<f64>, Vec<f64>) {
    let mut union: Vec<D> = a.to_vec();
    union.extend(b.iter().filter(|d| !a.contains(d)).cloned());
    let weight = |list: &[D], d: &D| match list.iter().position(|x| x == d) {
        Some(p) => ((p + 1) as f64).powf(-tau),
        None => 0.0,
    };
    let weight_a = union.iter().map(|d| weight(a, d)).collect();
    let weight_b = union.iter().map(|d| weight(b, d)).collect();
    (union, weight_a, weight_b)
}

/// Index into `unplaced` drawn with probability weights[unplaced[i]] / total (also Probabilistic
/// Multileave's draw).
pub(super) fn sample_weighted<R: Rng + ?Sized>(
    unplaced: &[usize],
    weights: &[f64],
    total: f64,
    rng: &mut R,
) -> usize {
    let mut r = rng.random::<f64>() * total;
    for (i, &u) in unplaced.iter().enumerate() {
        r -= weights[u];
        if r < 0.0 {
            return i;
        }
    }
    // Rounding can leave r a hair above zero after the last document: take the last one the
    // ranker gives weight to (never a document it does not list).
    unplaced
        .iter()
        .rposition(|&u| weights[u] > 0.0)
        .expect("the ranker has a document left")
}
