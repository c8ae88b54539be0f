//! Team-Draft interleaving (Radlinski, Kurup & Joachims 2008).
//!
//! Like picking teams in a schoolyard: in every round a fair coin decides which ranker picks first,
//! then each adds its highest-ranked document that is not shown yet. A click counts for the team
//! that picked the document; more clicks wins, equal (including none) is a tie.
//!
//! Fairness under random clicks (clicks that do not depend on the documents): a round is drafted
//! only if both rankers can pick in it whichever picks first, so whether a round happens never
//! depends on its own coin. Every drafted round therefore gives each team one pick, and a round cut
//! short by the length cap gives its one pick to A or B with probability 1/2 each. The teams'
//! sizes are equal or differ by one in a direction decided by a fair coin, so one uniformly random
//! click, or clicks on each position independently with the same probability, make A and B
//! equally likely to win; and since position i's team is decided by a coin thrown after the round
//! was committed, any single click whose position does not depend on the documents is fair too.
//! The paper's rule (stop as soon as one list has nothing left, even in the middle of a round)
//! is not fair: with A = (1), B = (2, 1), A first takes 1 and ends the draft before B picks, so A
//! wins three clicks in four.
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
    /// End the shown list after the last round both rankers could complete (see the module
    /// docs): the teams stay equal, or one apart by a fair coin at the length cap.
    #[default]
    Stop,
    /// Draft the same rounds as `Stop`, then fill the shown list up to the length cap with the
    /// documents left (each list's in its order, the lists alternating, a fair coin choosing
    /// which starts). The filled documents count for nobody, like a shared prefix under
    /// `no_credit`: crediting them would give the longer list's team more picks and make it win
    /// under random clicks (A = (a, b, c, d) against B = (e): 25/32 of the time).
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
    /// A document placed without drafting: a shared top document ([`SharedPrefix::NoCredit`]) or
    /// one filled in after the draft ([`Exhausted::Continue`]).
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
        let mut next = [0usize, 0];
        let lists = [a, b];
        // Advances each list's cursor past shown documents; returns its next two unshown ones.
        let upcoming = |next: &mut [usize; 2], placed: &DocSet<'_, D>, side: usize| {
            let list = lists[side];
            while next[side] < list.len() && placed.contains(&list[next[side]]) {
                next[side] += 1;
            }
            let second = list[(next[side] + 1).min(list.len())..]
                .iter()
                .find(|d| !placed.contains(d));
            (list.get(next[side]), second)
        };
        while shown.len() < max_len {
            let (a1, a2) = upcoming(&mut next, &placed, 0);
            let (b1, b2) = upcoming(&mut next, &placed, 1);
            // Whether the second picker still has a document after the first took its own.
            let a_then_b = a1.is_some() && (b1.is_some_and(|d| Some(d) != a1) || b2.is_some());
            let b_then_a = b1.is_some() && (a1.is_some_and(|d| Some(d) != b1) || a2.is_some());
            if !(a_then_b && b_then_a) {
                break;
            }
            let order = if rng.random::<bool>() { [0, 1] } else { [1, 0] };
            for side in order {
                if shown.len() >= max_len {
                    break;
                }
                let doc = upcoming(&mut next, &placed, side)
                    .0
                    .expect("checked before the round");
                placed.insert(doc);
                shown.push(doc.clone());
                teams.push(if side == 0 { Team::A } else { Team::B });
            }
        }
        if options.exhausted == Exhausted::Continue && shown.len() < max_len {
            let mut side = usize::from(rng.random::<bool>());
            while shown.len() < max_len {
                let doc = match upcoming(&mut next, &placed, side) {
                    (Some(doc), _) => doc,
                    _ => match upcoming(&mut next, &placed, 1 - side) {
                        (Some(doc), _) => doc,
                        _ => break,
                    },
                };
                placed.insert(doc);
                shown.push(doc.clone());
                teams.push(Team::Nobody);
                side = 1 - side;
            }
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
