//! Balanced interleaving (Joachims 2002).
//!
//! One coin decides which ranker leads. Two pointers walk down A and B; the one that is behind
//! (the leader on a draw) contributes its next document unless it is already shown, so the shown
//! top k always holds the top k_a of A and the top k_b of B with |k_a - k_b| <= 1.
//! Both lists are first cut to the length of the shorter one, n = min(|A|, |B|).
//!
//! Credit (Joachims' rule): let d be the lowest clicked document and
//! k = min(rank_A(d), rank_B(d)). Each ranker gets the number of clicked documents in its own
//! top k; more wins, equal is a tie. The method is known to be biased: with A = (a, b, c),
//! B = (b, c, a) and one uniformly random click, B wins with probability 2/3.
//!
//! The known bias comes from shared documents ranked differently. On lists of different
//! documents Balanced is fair under random clicks: the two shown lists (A leads, B leads) mirror
//! each other, so whatever positions are clicked, A wins in one exactly as often as B in the
//! other. That needs lists of equal length, hence the cut: if the longer list carried on after the
//! shorter one was used up, its extra documents would all credit it (A = (1, 2), B = (3): A wins
//! a uniformly random click 2/3 of the time); and stopping the walk as soon as one list is used up
//! (Joachims' loop) favours the shorter list instead (B leading shows (3) alone: B wins 3/4).
//! The credit rule treats a document missing from a (cut) list as ranked below all of it.

use super::doc_set::DocSet;
use super::{Doc, SoftOutcome, rank_in};
use rand::Rng;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BalancedInterleaving<D> {
    pub shown: Vec<D>,
    /// 1-based rank of `shown[i]` in A (`None`: not in A).
    pub rank_a: Vec<Option<u32>>,
    /// 1-based rank of `shown[i]` in B (`None`: not in B).
    pub rank_b: Vec<Option<u32>>,
    /// Whether A led (won the coin).
    pub a_first: bool,
}

impl<D: Doc> BalancedInterleaving<D> {
    /// `a` and `b` must be free of duplicates (see [`super::dedup`]).
    pub(crate) fn new<R: Rng + ?Sized>(a: &[D], b: &[D], max_len: usize, rng: &mut R) -> Self {
        let n = a.len().min(b.len());
        let (a, b) = (&a[..n], &b[..n]);
        let a_first = rng.random::<bool>();
        let mut shown = Vec::with_capacity(max_len.min(a.len() + b.len()));
        let mut placed = DocSet::with_capacity(shown.capacity());
        let (mut ka, mut kb) = (0, 0);
        while shown.len() < max_len {
            let take_a = match (ka < a.len(), kb < b.len()) {
                (false, false) => break,
                (true, true) => ka < kb || (ka == kb && a_first),
                (a_left, _) => a_left,
            };
            let doc = if take_a {
                ka += 1;
                &a[ka - 1]
            } else {
                kb += 1;
                &b[kb - 1]
            };
            if placed.insert(doc) {
                shown.push(doc.clone());
            }
        }
        let rank_a = shown.iter().map(|d| rank_in(a, d)).collect();
        let rank_b = shown.iter().map(|d| rank_in(b, d)).collect();
        BalancedInterleaving {
            shown,
            rank_a,
            rank_b,
            a_first,
        }
    }

    /// Clicked documents within each ranker's top k (Joachims' rule, see the module docs).
    pub(crate) fn ranker_credit(&self, clicks: &[usize]) -> [f64; 2] {
        let Some(&lowest) = clicks.last() else {
            return [0.0, 0.0];
        };
        let rank = |r: Option<u32>| r.unwrap_or(u32::MAX);
        let k = rank(self.rank_a[lowest]).min(rank(self.rank_b[lowest]));
        let mut credit = [0.0; 2];
        for &c in clicks {
            if rank(self.rank_a[c]) <= k {
                credit[0] += 1.0;
            }
            if rank(self.rank_b[c]) <= k {
                credit[1] += 1.0;
            }
        }
        credit
    }

    pub(crate) fn soft_outcome(&self, clicks: &[usize]) -> SoftOutcome {
        let [a, b] = self.ranker_credit(clicks);
        SoftOutcome::compare(a, b)
    }
}
