//! Team-Draft Multileave (Schuth et al. 2014): Team-Draft for any number of rankers.
//!
//! The shown list is built in rounds. Each round the rankers that still have a document not shown
//! yet pick in a fresh uniformly random order, each adding its highest-ranked such document, until
//! the length cap. A ranker whose list is used up sits out (the others keep drafting), so lists of
//! unequal length are fine; a ranker with an empty list simply has no team.
//!
//! Credit: each ranker gets the clicks on its team's documents. Ranker i beats ranker j when its
//! team has more clicks; equal is a tie.

use super::doc_set::DocSet;
use super::{Doc, SoftOutcome};
use rand::Rng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

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
        let mut order: Vec<usize> = (0..lists.len()).collect();
        'rounds: while shown.len() < max_len {
            order.shuffle(rng);
            let mut picked = false;
            for &r in &order {
                if shown.len() >= max_len {
                    break 'rounds;
                }
                let list = &lists[r];
                while next[r] < list.len() && placed.contains(&list[next[r]]) {
                    next[r] += 1;
                }
                if let Some(doc) = list.get(next[r]) {
                    placed.insert(doc);
                    shown.push(doc.clone());
                    teams.push(r);
                    picked = true;
                }
            }
            if !picked {
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
