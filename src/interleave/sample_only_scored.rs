//! Sample-Only Scored Multileave (Brost, Cox, Seldin & Lioma, SIGIR 2016, "An Improved
//! Multileaving Algorithm for Online Ranker Evaluation"): the multileaving method li-2020 section
//! 6.6 compares MergeDTS against.
//!
//! Building the list, as the reference implementation li-2020 used builds it: the documents every
//! ranker puts at the same position from the top are shown first, in that order (the shared
//! prefix); then, round after round in a fresh uniformly random order of the rankers, each ranker
//! adds its best document not shown yet, until `max_len` documents are shown or no ranker has one
//! left (a ranker whose list is used up sits the rest out). m copies of one list therefore show
//! that list.
//!
//! Credit does not use who added a document ("sample only"): each ranker re-ranks **the shown
//! documents only** by its own list, and scores every clicked document by its rank r (1-based)
//! in that re-ranking, 1 / r^tau (tau default 3, as in Probabilistic Multileave; "scored"). A
//! shown document a ranker does not list ranks after every shown document it does list, all such
//! documents sharing that rank (the reference scores every document of the query, which a
//! ranker's top-k list cannot). A ranker's credit is the sum over clicked documents; ranker i
//! beats ranker j when its credit is higher (equal within 1e-12 is no preference), so no clicks
//! give no preference at all. The method's judgement is certain: no marginalisation and no RNG.
//!
//! Fairness: unlike Team-Draft and Probabilistic Multileave, the credit depends on how each
//! ranker orders the shown documents, not on which ranker contributed them, so under clicks that
//! do not depend on the documents a ranker can still be favoured: a ranker that lists every shown
//! document scores a click at its rank 1, 2, ..., while one that lists few of them scores clicks
//! on the documents it lacks at its shared last rank. Brost et al. accept this bias for a method
//! whose credit uses every ranker's opinion of every shown document, which makes it far more
//! sensitive with many rankers; `tests/interleaving/multileave.rs` measures the bias where it exists and
//! checks that it vanishes where the lists are symmetric.

use super::{Doc, Preferences, SoftOutcome};
use rand::Rng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleOnlyScoredInterleaving<D> {
    pub shown: Vec<D>,
    /// `ranks[r][s]`: the 1-based rank of `shown[s]` when ranker r re-ranks the shown documents
    /// (documents r does not list share the rank after its listed ones).
    pub ranks: Vec<Vec<u32>>,
    pub tau: f64,
}

impl<D: Doc> SampleOnlyScoredInterleaving<D> {
    /// Every list must be free of duplicates (see [`super::dedup`]); at least 2 lists.
    pub(crate) fn new<R: Rng + ?Sized>(
        lists: &[Vec<D>],
        tau: f64,
        max_len: usize,
        rng: &mut R,
    ) -> Self {
        let m = lists.len();
        let mut shown: Vec<D> = Vec::with_capacity(max_len);
        let mut placed: std::collections::HashSet<&D> = std::collections::HashSet::new();
        // The shared prefix: every ranker has the same document at this position.
        let shortest = lists.iter().map(Vec::len).min().unwrap_or(0);
        while shown.len() < max_len.min(shortest) {
            let d = &lists[0][shown.len()];
            if lists.iter().any(|l| &l[shown.len()] != d) {
                break;
            }
            placed.insert(d);
            shown.push(d.clone());
        }
        let mut next = vec![shown.len(); m];
        let mut order: Vec<usize> = (0..m).collect();
        'rounds: while shown.len() < max_len {
            order.shuffle(rng);
            let mut picked = false;
            for &r in &order {
                if shown.len() == max_len {
                    break 'rounds;
                }
                let list = &lists[r];
                while next[r] < list.len() && placed.contains(&list[next[r]]) {
                    next[r] += 1;
                }
                if let Some(d) = list.get(next[r]) {
                    placed.insert(d);
                    shown.push(d.clone());
                    next[r] += 1;
                    picked = true;
                }
            }
            if !picked {
                break;
            }
        }
        let ranks = lists
            .iter()
            .map(|list| sample_ranks(list, &shown))
            .collect();
        SampleOnlyScoredInterleaving { shown, ranks, tau }
    }

    /// Each ranker's score of the clicked documents. `clicks` are sorted, unique and in range.
    fn scores(&self, clicks: &[usize]) -> Vec<f64> {
        self.ranks
            .iter()
            .map(|ranks| {
                clicks
                    .iter()
                    .map(|&c| (ranks[c] as f64).powf(-self.tau))
                    .sum()
            })
            .collect()
    }

    pub(crate) fn preferences(&self, clicks: &[usize]) -> Preferences {
        let scores = self.scores(clicks);
        Preferences::from_fn(scores.clone(), |i, j| {
            SoftOutcome::compare(scores[i], scores[j])
        })
    }
}

/// The 1-based rank of every shown document when `list` re-ranks the shown documents.
fn sample_ranks<D: Doc>(list: &[D], shown: &[D]) -> Vec<u32> {
    let position: HashMap<&D, usize> = list.iter().enumerate().map(|(p, d)| (d, p)).collect();
    let mut listed: Vec<(usize, usize)> = shown
        .iter()
        .enumerate()
        .filter_map(|(s, d)| position.get(d).map(|&p| (p, s)))
        .collect();
    listed.sort_unstable();
    let unlisted_rank = listed.len() as u32 + 1;
    let mut ranks = vec![unlisted_rank; shown.len()];
    for (rank, &(_, s)) in listed.iter().enumerate() {
        ranks[s] = rank as u32 + 1;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_within_the_sample() {
        // The list ranks 9, 3, 5, 1; shown: 1, 7, 3. Re-ranked by the list: 3 (1st), 1 (2nd);
        // 7 is not listed and ranks after them (3rd).
        assert_eq!(sample_ranks(&[9, 3, 5, 1], &[1, 7, 3]), vec![2, 3, 1]);
        assert_eq!(sample_ranks::<u32>(&[], &[4, 2]), vec![1, 1]);
    }
}
