//! The confirmation layer: over any policy, when the evidence points to a candidate champion
//! that is not yet decided, a share of the duels compares the candidate with the rival it is
//! least separated from (LUCB's choice of duel), so that a policy that stopped comparing its
//! champion with some rivals (MergeDTS once its batches merge, any policy that duels its
//! champion with itself) still reaches a decision.
//!
//! It lives in [`crate::bandit::BanditState`]'s `select` and `select_set` and keeps the policy
//! contract: it reads the win matrix and the [`Tracker`] (derived from it, updated in `record`),
//! never changes anything when selecting, and draws its randomness from the RNG passed in, so a
//! state restored from JSON chooses exactly as the state it was saved from.
//!
//! **Rate.** Each selection, while the layer has work (on, not decided), draws one uniform; below
//! `max_confirmation_share` the duel is a confirmation, else the policy chooses. The share of
//! duels it takes is therefore at most `max_confirmation_share` in expectation, and zero once
//! decided. The comparisons a decision needs are set by the gaps and the boundary, whoever asks
//! for them, so the share mostly sets how soon they are gathered; its regret is that of those
//! comparisons: a rival close to the champion needs many comparisons but costs little per duel,
//! a clearly worse one costs more but separates in few.

use rand::Rng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::settings::DecisionSettings;
use super::tracker::Tracker;
use crate::bandit::{Arm, Pair, View};

/// An experiment's decision settings with the tracker derived from its win matrix. Serialised as
/// the settings alone; equal when the settings are equal (the tracker follows the win matrix).
#[derive(Debug, Clone, Default)]
pub struct DecisionLayer {
    settings: DecisionSettings,
    tracker: Option<Tracker>,
}

impl PartialEq for DecisionLayer {
    fn eq(&self, other: &Self) -> bool {
        self.settings == other.settings
    }
}

impl Serialize for DecisionLayer {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.settings.serialize(s)
    }
}

impl<'de> Deserialize<'de> for DecisionLayer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(DecisionLayer::new(DecisionSettings::deserialize(d)?))
    }
}

impl DecisionLayer {
    pub fn new(settings: DecisionSettings) -> Self {
        DecisionLayer {
            settings,
            tracker: None,
        }
    }

    pub fn settings(&self) -> DecisionSettings {
        self.settings
    }

    /// New settings; the tracker is rebuilt on next use.
    pub fn set_settings(&mut self, settings: DecisionSettings) {
        self.settings = settings;
        self.tracker = None;
    }

    /// Recounts everything (after arms were added or retired, or on a state just loaded).
    pub fn rebuild(&mut self, view: &View) {
        self.tracker = Some(Tracker::build(view, &self.settings));
    }

    /// The tracker for `view`, built now when missing or out of date.
    fn tracker_mut(&mut self, view: &View) -> &mut Tracker {
        let settings = self.settings;
        let fits = self
            .tracker
            .as_ref()
            .is_some_and(|t| t.fits(view, &settings));
        if !fits {
            self.tracker = Some(Tracker::build(view, &settings));
        }
        self.tracker.as_mut().expect("just built")
    }

    /// Call before the counts of the pair (`i`, `j`) change; both active and distinct.
    pub fn before(&mut self, view: &View, i: Arm, j: Arm) {
        self.tracker_mut(view).before(view, i, j);
    }

    /// Call after the counts of the pair (`i`, `j`) changed.
    pub fn after(&mut self, view: &View, i: Arm, j: Arm) {
        self.tracker_mut(view).after(view, i, j);
    }

    /// Runs `f` on an up-to-date tracker: the kept one, or (on a state never warmed) one built for
    /// this call, which chooses the same.
    fn with_tracker<T>(&self, view: &View, f: impl FnOnce(&Tracker) -> T) -> T {
        match &self.tracker {
            Some(t) if t.fits(view, &self.settings) => f(t),
            _ => f(&Tracker::build(view, &self.settings)),
        }
    }

    /// Whether some arm is a decided Condorcet winner (O(1) on a kept tracker).
    pub fn condorcet_decided(&self, view: &View) -> bool {
        self.with_tracker(view, |t| t.condorcet_decided())
    }

    /// The confirmation duel to take instead of the policy's, if any (read-only).
    pub fn confirmation<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Option<Pair> {
        if !self.settings.confirmation {
            return None;
        }
        self.with_tracker(view, |t| {
            if t.condorcet_decided() {
                return None;
            }
            if rng.random::<f64>() >= self.settings.max_confirmation_share {
                return None;
            }
            let candidate = t.candidate(view)?;
            let rival = t.weakest_rival(view, candidate)?;
            // Either order: a position bias of the interleaving falls on both sides alike.
            Some(if rng.random::<bool>() {
                Pair::new(candidate, rival)
            } else {
                Pair::new(rival, candidate)
            })
        })
    }
}
