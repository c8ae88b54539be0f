//! Pairwise Preference Multileaving (Oosterhuis & de Rijke, CIKM 2017, "Sensitive and Scalable
//! Online Evaluation with Theoretical Guarantees"), as its authors' reference implementation
//! (the one li-2020 used for its multileaving experiments) computes it.
//!
//! Building the list: slot s (0-based) is filled with a document drawn uniformly from the
//! documents that some ranker places in its top s + 1 and that are not shown yet. The draw ends
//! when no such document is left or `max_len` are shown. m copies of one list show that list
//! (each slot has one candidate). Kept per slot: how many candidates it had, and the shown
//! document's "top rank", the best (smallest, 0-based) position any ranker gives it: the first
//! slot where it could have been drawn.
//!
//! Inferring preferences: a clicked document is preferred over every unclicked document above
//! the last click (the top document always counts as seen). A pair of such documents is used
//! only when both could have been drawn at either of their two slots (the earlier slot is at
//! least both top ranks), so their order was random; each used pair is weighted by the inverse
//! of the probability that the document with the earlier top rank was passed over at every slot
//! until the other became available, prod over slots t in [top_a, top_b) of (1 - 1 / candidates
//! at t), which debiases the pairs the construction makes more likely. A ranker's credit is the
//! weighted number of used pairs it orders as the click did (the clicked document strictly above
//! the unclicked one in its list; a document a ranker does not list ranks below all it lists),
//! divided by the number of used pairs. Ranker i beats j when its credit is higher (equal
//! within 1e-12: no preference); no used pair, no preference.
//!
//! Fidelity: the paper proves that clicks which do not depend on the documents favour no ranker
//! in expectation. On the top-k lists a search backend sends, `tests/interleaving/multileave.rs` finds it fair
//! where the rankers are interchangeable (disjoint lists; two rankers that swap two documents),
//! but not for rankers that order the same documents differently: A = (0, 1, 2, 3) and
//! B = (1, 2, 3, 0) give B about 0.086 of a win more than A per random click. That test asserts
//! the bias, so a change to it is seen.

use super::{Doc, Preferences, SoftOutcome};
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairwisePreferenceInterleaving<D> {
    pub shown: Vec<D>,
    /// `ranks[r][s]`: position of `shown[s]` in ranker r's list, or the list's length when r
    /// does not list it.
    pub ranks: Vec<Vec<u32>>,
    /// `top_ranks[s]`: the best position any ranker gives `shown[s]`.
    pub top_ranks: Vec<u32>,
    /// `candidates[s]`: how many documents slot s was drawn from.
    pub candidates: Vec<u32>,
}

impl<D: Doc> PairwisePreferenceInterleaving<D> {
    /// Every list must be free of duplicates (see [`super::dedup`]); at least 2 lists.
    pub(crate) fn new<R: Rng + ?Sized>(lists: &[Vec<D>], max_len: usize, rng: &mut R) -> Self {
        let mut top: HashMap<&D, u32> = HashMap::new();
        for list in lists {
            for (p, d) in list.iter().enumerate() {
                let t = top.entry(d).or_insert(p as u32);
                *t = (*t).min(p as u32);
            }
        }
        let mut shown: Vec<D> = Vec::new();
        let mut placed: HashSet<&D> = HashSet::new();
        let mut candidates = Vec::new();
        let mut pool: Vec<&D> = Vec::new();
        while shown.len() < max_len {
            let s = shown.len();
            // The documents entering at slot s: position s of some list.
            for list in lists {
                if let Some(d) = list.get(s) {
                    if !placed.contains(d) && !pool.contains(&d) {
                        pool.push(d);
                    }
                }
            }
            if pool.is_empty() {
                break;
            }
            candidates.push(pool.len() as u32);
            let d = pool.swap_remove(rng.random_range(0..pool.len()));
            placed.insert(d);
            shown.push(d.clone());
        }
        let ranks = lists
            .iter()
            .map(|list| {
                let position: HashMap<&D, u32> = list
                    .iter()
                    .enumerate()
                    .map(|(p, d)| (d, p as u32))
                    .collect();
                shown
                    .iter()
                    .map(|d| position.get(d).copied().unwrap_or(list.len() as u32))
                    .collect()
            })
            .collect();
        let top_ranks = shown.iter().map(|d| top[d]).collect();
        PairwisePreferenceInterleaving {
            shown,
            ranks,
            top_ranks,
            candidates,
        }
    }

    /// Each ranker's weighted share of the used pairs it orders as the clicks did. `clicks` are
    /// sorted, unique and in range.
    fn credits(&self, clicks: &[usize]) -> Vec<f64> {
        let m = self.ranks.len();
        let Some(&last) = clicks.last() else {
            return vec![0.0; m];
        };
        let clicked = |s: usize| clicks.binary_search(&s).is_ok();
        // Seen and not clicked: above the last click, and the top document.
        let skipped: Vec<usize> = (0..last.max(1).min(self.shown.len()))
            .filter(|&s| !clicked(s))
            .collect();
        let mut credit = vec![0.0; m];
        let mut used = 0usize;
        for &pos in clicks {
            for &neg in &skipped {
                let (tp, tn) = (self.top_ranks[pos], self.top_ranks[neg]);
                if (pos.min(neg) as u32) < tp.max(tn) {
                    continue;
                }
                used += 1;
                let (a, b) = (tp.min(tn) as usize, tp.max(tn) as usize);
                let passed_over: f64 = self.candidates[a..b]
                    .iter()
                    .map(|&c| 1.0 - 1.0 / c as f64)
                    .product();
                let weight = 1.0 / passed_over;
                for (r, ranks) in self.ranks.iter().enumerate() {
                    if ranks[pos] < ranks[neg] {
                        credit[r] += weight;
                    }
                }
            }
        }
        if used > 0 {
            for c in &mut credit {
                *c /= used as f64;
            }
        }
        credit
    }

    pub(crate) fn preferences(&self, clicks: &[usize]) -> Preferences {
        let credits = self.credits(clicks);
        Preferences::from_fn(credits.clone(), |i, j| {
            SoftOutcome::compare(credits[i], credits[j])
        })
    }
}
