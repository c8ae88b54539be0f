//! Team-Draft Multileave (Schuth et al. 2014): Team-Draft for any number of rankers.
//!
//! The shown list is built in rounds. Each round the rankers pick in a fresh uniformly random
//! order, each adding its highest-ranked document not shown yet, until the length cap.
//!
//! Fairness on lists of unequal length or overlapping documents, in the spirit of pairwise
//! Team-Draft: before a round's order is drawn, the number k of picks it makes is fixed as the
//! largest k such that, whatever the order, its first k rankers can each pick; the first k of a
//! uniform order then pick. A round with k < m (cut by the lists or by the length cap) is the
//! last. Whether and how much a round drafts so never depends on its own order: every full round
//! gives each ranker one pick and the last partial one gives a pick to each ranker of a uniformly
//! random subset, so the team sizes are exchangeable and, under clicks that do not depend on the
//! documents, no ranker is favoured. (Letting a ranker whose list runs out sit out while the
//! others keep drafting gave the longer lists more picks, and so more credit under random clicks.)
//! m copies of one list show exactly that list (the last round makes the picks the list has
//! left). k is m when every ranker has at least m documents not shown yet (the m - 1 picks before
//! its own cannot take them all); otherwise, for m <= [`MAX_ORDERS_CHECKED`], every order is
//! simulated, and for larger m k is the fewest documents any ranker has left (always safe, at
//! times smaller than necessary).
//!
//! Rankers with an empty list take no part in the draft (they have no team, the others draft
//! among themselves): such a ranker can never be credited, so no rule can make it fair against
//! the others, and showing nothing would hide the others' documents.
//!
//! Credit: each ranker gets the clicks on its team's documents. Ranker i beats ranker j when its
//! team has more clicks; equal is a tie.

use super::doc_set::DocSet;
use super::{Doc, SoftOutcome};
use rand::Rng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

/// Up to this many drafting rankers a round that some ranker might not complete is checked order
/// by order (m! orders); beyond it a simpler count that may stop earlier is used.
pub const MAX_ORDERS_CHECKED: usize = 6;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MultileaveInterleaving<D> {
    pub shown: Vec<D>,
    /// `teams[i]` is the ranker (index into the input lists) that picked `shown[i]`.
    pub teams: Vec<usize>,
    pub rankers: usize,
}

impl<D: Doc> MultileaveInterleaving<D> {
    /// Every list must be free of duplicates (see [`super::dedup`]).
    pub(crate) fn new<R: Rng + ?Sized>(lists: &[Vec<D>], max_len: usize, rng: &mut R) -> Self {
        let total: usize = lists.iter().map(Vec::len).sum();
        let mut shown = Vec::with_capacity(max_len.min(total));
        let mut teams = Vec::with_capacity(shown.capacity());
        let mut placed = DocSet::with_capacity(shown.capacity());
        let mut next = vec![0usize; lists.len()];
        let mut order: Vec<usize> = (0..lists.len()).filter(|&r| !lists[r].is_empty()).collect();
        while shown.len() < max_len && !order.is_empty() {
            let picks = picks_next_round(lists, &order, &shown).min(max_len - shown.len());
            if picks == 0 {
                break;
            }
            order.shuffle(rng);
            for &r in &order[..picks] {
                let list = &lists[r];
                while placed.contains(&list[next[r]]) {
                    next[r] += 1;
                }
                let doc = &list[next[r]];
                placed.insert(doc);
                shown.push(doc.clone());
                teams.push(r);
            }
            if picks < order.len() {
                break;
            }
        }
        MultileaveInterleaving {
            shown,
            teams,
            rankers: lists.len(),
        }
    }

    /// Clicks on each ranker's team.
    pub(crate) fn ranker_credit(&self, clicks: &[usize]) -> Vec<f64> {
        let mut credit = vec![0.0; self.rankers];
        for &c in clicks {
            credit[self.teams[c]] += 1.0;
        }
        credit
    }

    pub(crate) fn pairwise(&self, clicks: &[usize], i: usize, j: usize) -> SoftOutcome {
        let count = |r: usize| clicks.iter().filter(|&&c| self.teams[c] == r).count() as f64;
        SoftOutcome::compare(count(i), count(j))
    }
}

/// How many picks the next round makes: the largest k such that, whatever the order, the first
/// k rankers in it can each pick (at most m). Depends only on what is shown so far (module docs).
fn picks_next_round<D: Doc>(lists: &[Vec<D>], rankers: &[usize], shown: &[D]) -> usize {
    let m = rankers.len();
    let left: Vec<Vec<&D>> = rankers
        .iter()
        .map(|&r| lists[r].iter().filter(|d| !shown.contains(d)).collect())
        .collect();
    // Before the p-th pick only p - 1 documents are taken, so a ranker with at least k documents
    // left can make any of the first k picks.
    let safe = left.iter().map(Vec::len).min().unwrap_or(0).min(m);
    if safe == m || m > MAX_ORDERS_CHECKED {
        return safe;
    }
    let mut order: Vec<usize> = (0..m).collect();
    fewest_picks(&left, &mut order, 0)
}

/// The fewest picks made before some ranker finds nothing left, over every order of
/// `order[k..]` after the fixed `order[..k]`.
fn fewest_picks<D: Doc>(left: &[Vec<&D>], order: &mut [usize], k: usize) -> usize {
    if k == order.len() {
        let mut taken: Vec<&D> = Vec::with_capacity(order.len());
        for &r in order.iter() {
            match left[r].iter().find(|d| !taken.contains(d)) {
                Some(d) => taken.push(d),
                None => break,
            }
        }
        return taken.len();
    }
    let mut fewest = order.len();
    for x in k..order.len() {
        order.swap(k, x);
        fewest = fewest.min(fewest_picks(left, order, k + 1));
        order.swap(k, x);
    }
    fewest
}
