//! Team-Draft interleaving (Radlinski, Kurup & Joachims 2008).
//!
//! Like picking teams in a schoolyard: the ranker with fewer picks so far picks next (a fair coin
//! when both have as many) and adds its highest-ranked document that is not shown yet. A click
//! counts for the team that picked the document; more clicks wins, equal (including none) is a tie.
//!
//! Two choices on which implementations differ are explicit options ([`TeamDraftOptions`]).

use super::doc_set::DocSet;
use super::{Doc, SoftOutcome};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// What happens to the documents A and B share at the same top positions (the common prefix
/// `A[0..k] == B[0..k]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SharedPrefix {
    /// Draft them like any other document (the original algorithm).
    #[default]
    Draft,
    /// Show them first and credit their clicks to nobody: both rankers agree on them, so a click
    /// there says nothing about which is better, and drafting them only adds noise.
    NoCredit,
}

/// What happens when one list has no documents left that are not shown yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Exhausted {
    /// Stop the shown list there (the original algorithm): teams stay within one pick of each
    /// other, which keeps the comparison fair under random clicks.
    #[default]
    Stop,
    /// Keep drafting from the other list until it runs out or the length cap is reached: shows
    /// more documents, but the longer list's team can get more picks.
    Continue,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TeamDraftOptions {
    #[serde(default)]
    pub shared_prefix: SharedPrefix,
    #[serde(default)]
    pub exhausted: Exhausted,
}

/// Which team picked a shown document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Team {
    A,
    B,
    /// A shared top document placed without drafting ([`SharedPrefix::NoCredit`]).
    Nobody,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamDraftInterleaving<D> {
    pub shown: Vec<D>,
    /// `teams[i]` picked `shown[i]`.
    pub teams: Vec<Team>,
}

impl<D: Doc> TeamDraftInterleaving<D> {
    /// `a` and `b` must be free of duplicates (see [`super::dedup`]).
    pub(crate) fn new<R: Rng + ?Sized>(
        a: &[D],
        b: &[D],
        options: TeamDraftOptions,
        max_len: usize,
        rng: &mut R,
    ) -> Self {
        let mut shown = Vec::with_capacity(max_len.min(a.len() + b.len()));
        let mut teams = Vec::with_capacity(shown.capacity());
        let mut placed = DocSet::with_capacity(shown.capacity());
        if options.shared_prefix == SharedPrefix::NoCredit {
            for (x, y) in a.iter().zip(b) {
                if x != y || shown.len() >= max_len {
                    break;
                }
                placed.insert(x);
                shown.push(x.clone());
                teams.push(Team::Nobody);
            }
        }
        let (mut next_a, mut next_b) = (0, 0);
        let (mut picks_a, mut picks_b) = (0usize, 0usize);
        while shown.len() < max_len {
            while next_a < a.len() && placed.contains(&a[next_a]) {
                next_a += 1;
            }
            while next_b < b.len() && placed.contains(&b[next_b]) {
                next_b += 1;
            }
            let (a_left, b_left) = (next_a < a.len(), next_b < b.len());
            let a_picks = match (a_left, b_left) {
                (false, false) => break,
                (true, true) => picks_a < picks_b || (picks_a == picks_b && rng.random::<bool>()),
                _ if options.exhausted == Exhausted::Stop => break,
                (a_left, _) => a_left,
            };
            let doc = if a_picks {
                picks_a += 1;
                teams.push(Team::A);
                &a[next_a]
            } else {
                picks_b += 1;
                teams.push(Team::B);
                &b[next_b]
            };
            placed.insert(doc);
            shown.push(doc.clone());
        }
        TeamDraftInterleaving { shown, teams }
    }

    /// Clicks on each team's documents: `[A, B]`.
    pub(crate) fn ranker_credit(&self, clicks: &[usize]) -> [f64; 2] {
        let mut credit = [0.0; 2];
        for &c in clicks {
            match self.teams[c] {
                Team::A => credit[0] += 1.0,
                Team::B => credit[1] += 1.0,
                Team::Nobody => {}
            }
        }
        credit
    }

    pub(crate) fn soft_outcome(&self, clicks: &[usize]) -> SoftOutcome {
        let [a, b] = self.ranker_credit(clicks);
        SoftOutcome::compare(a, b)
    }
}
