//! Probabilistic Multileave (Schuth, Bruintjes, Buttner, van Doorn, Groenland, Oosterhuis, Tran,
//! Veeling, van der Velde, Wechsler, Zoeter & de Rijke, SIGIR 2015): Probabilistic interleaving
//! for any number m >= 2 of rankers.
//!
//! Each ranker becomes a softmax over its ranks, P_r(d) proportional to rank_r(d)^-tau (tau
//! default 3, as pairwise Probabilistic), renormalised over the documents not shown yet; a document
//! a ranker does not list has weight 0 under it. The shown list is built in team-draft-like rounds:
//! each round the rankers take turns in a fresh uniformly random order, and each turn adds a
//! document drawn from the turn's ranker's softmax.
//!
//! Length: n = min(max_len, shortest list). At slot s at most s - 1 documents are shown, so with
//! s <= n every ranker still has a document of positive weight and can take any turn (as in
//! pairwise Probabilistic; an empty list shows nothing).
//!
//! Credit is marginalised over the assignments of slots to rankers, exactly. The prior on
//! assignments is uniform over the injective maps of each round's slots to rankers (a full round
//! is a permutation, the last one a prefix of a uniform permutation), and P(shown, assignment) is
//! that prior times prod_s P^(s)_{a_s}(shown_s), where P^(s)_r is r's softmax over the documents
//! not among the first s - 1 shown ones: it depends on the shown list only, so it is stored per
//! slot and ranker when interleaving. Given the shown list the rounds are independent, and each
//! round's posterior is enumerated over its m!/(m - t)! maps (only rounds with a click matter).
//! The paper samples assignments instead; enumeration is exact, needs no RNG, and is cheap for the
//! m this service compares (at most [`MAX_PROBABILISTIC_MULTILEAVE_RANKERS`]).
//!
//! A ranker's credit is its expected number of clicked slots. Ranker i beats j with the posterior
//! probability that more clicked slots are assigned to i than to j (a tie when equal): the
//! per-round differences (-1, 0 or +1, since a ranker has at most one slot per round) are
//! convolved across rounds.
//!
//! Fairness under clicks that do not depend on the documents: the posterior win probability is
//! the conditional expectation of "i wins under the true assignment", whose distribution is
//! uniform and symmetric in the rankers and independent of the clicks; so in expectation every
//! pair is a tie, for any lists.

use super::probabilistic::sample_weighted;
use super::{Doc, Preferences, SoftOutcome};
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The most rankers exact marginalisation enumerates (8! = 40,320 maps per clicked round).
pub const MAX_PROBABILISTIC_MULTILEAVE_RANKERS: usize = 8;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbabilisticMultileaveInterleaving<D> {
    pub shown: Vec<D>,
    /// `weights[s][r]`: ranker r's softmax probability of `shown[s]` among the documents not
    /// shown before slot s.
    pub weights: Vec<Vec<f64>>,
    pub rankers: usize,
    pub tau: f64,
}

impl<D: Doc> ProbabilisticMultileaveInterleaving<D> {
    /// Every list must be free of duplicates (see [`super::dedup`]); 2 <= m <= the maximum.
    pub(crate) fn new<R: Rng + ?Sized>(
        lists: &[Vec<D>],
        tau: f64,
        max_len: usize,
        rng: &mut R,
    ) -> Self {
        let m = lists.len();
        let mut index: HashMap<&D, usize> = HashMap::new();
        let mut union: Vec<&D> = Vec::new();
        for d in lists.iter().flatten() {
            index.entry(d).or_insert_with(|| {
                union.push(d);
                union.len() - 1
            });
        }
        // weight[r][u] = rank_r(union[u])^-tau, 0 when r does not list it.
        let mut weight = vec![vec![0.0; union.len()]; m];
        for (r, list) in lists.iter().enumerate() {
            for (p, d) in list.iter().enumerate() {
                weight[r][index[d]] = ((p + 1) as f64).powf(-tau);
            }
        }
        let n = lists.iter().map(Vec::len).min().unwrap_or(0).min(max_len);
        let mut unplaced: Vec<usize> = (0..union.len()).collect();
        let mut shown = Vec::with_capacity(n);
        let mut weights = Vec::with_capacity(n);
        let mut order: Vec<usize> = (0..m).collect();
        while shown.len() < n {
            rand::seq::SliceRandom::shuffle(&mut order[..], rng);
            for &r in order.iter().take(n - shown.len()) {
                // Recomputed each slot (not updated by subtraction), as in pairwise Probabilistic.
                let totals: Vec<f64> = (0..m)
                    .map(|x| unplaced.iter().map(|&u| weight[x][u]).sum())
                    .collect();
                let slot = sample_weighted(&unplaced, &weight[r], totals[r], rng);
                let u = unplaced.remove(slot);
                weights.push((0..m).map(|x| weight[x][u] / totals[x]).collect());
                shown.push(union[u].clone());
            }
        }
        ProbabilisticMultileaveInterleaving {
            shown,
            weights,
            rankers: m,
            tau,
        }
    }

    /// Expected clicked slots per ranker and the pairwise judgements (module docs). `clicks` are
    /// sorted, unique and in range.
    pub(crate) fn preferences(&self, clicks: &[usize]) -> Preferences {
        let m = self.rankers;
        let pairs = m * (m - 1) / 2;
        let mut credits = vec![0.0; m];
        // dist[p][d + k] = P(difference i - j of clicked slots = d) over the rounds so far.
        let mut dists: Vec<Vec<f64>> = vec![vec![1.0]; pairs];
        let slots = self.shown.len();
        let mut start = 0;
        while start < slots {
            let end = (start + m).min(slots);
            if clicks.iter().any(|&c| (start..end).contains(&c)) {
                let round = self.round_posterior(start, end, clicks);
                for (r, c) in round.credit.iter().enumerate() {
                    credits[r] += c;
                }
                for (dist, step) in dists.iter_mut().zip(&round.pair_steps) {
                    *dist = convolve(dist, step);
                }
            }
            start = end;
        }
        let mut dists = dists.into_iter();
        Preferences::from_fn(credits, |_, _| {
            let dist = dists.next().expect("one distribution per pair");
            let zero = (dist.len() - 1) / 2;
            SoftOutcome {
                a: dist[zero + 1..].iter().sum(),
                b: dist[..zero].iter().sum(),
                tie: dist[zero],
            }
        })
    }

    /// Enumerates the injective maps of slots `start..end` to rankers, weighted by their
    /// likelihood, and returns per ranker the probability it holds a clicked slot and per pair
    /// (i < j) the distribution of [i holds one] - [j holds one] over (-1, 0, +1).
    fn round_posterior(&self, start: usize, end: usize, clicks: &[usize]) -> RoundPosterior {
        let m = self.rankers;
        let clicked: Vec<bool> = (start..end)
            .map(|s| clicks.binary_search(&s).is_ok())
            .collect();
        let mut acc = RoundPosterior {
            credit: vec![0.0; m],
            pair_steps: vec![[0.0; 3]; m * (m - 1) / 2],
        };
        let mut holds = vec![false; m];
        let mut used = vec![false; m];
        let mut total = 0.0;
        self.enumerate(
            start, end, &clicked, 1.0, &mut used, &mut holds, &mut acc, &mut total,
        );
        for c in &mut acc.credit {
            *c /= total;
        }
        for step in &mut acc.pair_steps {
            for p in step.iter_mut() {
                *p /= total;
            }
        }
        acc
    }

    #[allow(clippy::too_many_arguments)]
    fn enumerate(
        &self,
        slot: usize,
        end: usize,
        clicked: &[bool],
        likelihood: f64,
        used: &mut [bool],
        holds: &mut [bool],
        acc: &mut RoundPosterior,
        total: &mut f64,
    ) {
        if likelihood == 0.0 {
            return;
        }
        if slot == end {
            *total += likelihood;
            let m = self.rankers;
            let mut p = 0;
            for i in 0..m {
                if holds[i] {
                    acc.credit[i] += likelihood;
                }
                for j in i + 1..m {
                    let d = holds[i] as usize + 1 - holds[j] as usize;
                    acc.pair_steps[p][d] += likelihood;
                    p += 1;
                }
            }
            return;
        }
        let k = slot + clicked.len() - end;
        for r in 0..self.rankers {
            if used[r] {
                continue;
            }
            used[r] = true;
            holds[r] = clicked[k];
            let w = likelihood * self.weights[slot][r];
            self.enumerate(slot + 1, end, clicked, w, used, holds, acc, total);
            holds[r] = false;
            used[r] = false;
        }
    }
}

struct RoundPosterior {
    credit: Vec<f64>,
    /// Per pair: P(difference = -1), P(0), P(+1).
    pair_steps: Vec<[f64; 3]>,
}

/// The distribution of a sum of a difference with distribution `dist` (centred on its middle
/// index) and one with `step` over (-1, 0, +1).
fn convolve(dist: &[f64], step: &[f64; 3]) -> Vec<f64> {
    let mut out = vec![0.0; dist.len() + 2];
    for (x, &p) in dist.iter().enumerate() {
        for (s, &q) in step.iter().enumerate() {
            out[x + s] += p * q;
        }
    }
    out
}
