//! The confirmation layer: over any policy, while no Condorcet winner is decided, a share of the
//! steps is given to the duel the decision most needs: the leader against the rival whose
//! evidence says least that the leader is not worse (the estimate less two standard deviations,
//! [`super::tracker::evidence`]), never-compared rivals first, and any rival with fewer than
//! sqrt(plays / rivals) comparisons when it has the widest interval ([`rival_of`]).
//!
//! - **Which steps.** Once some arm is established, played [`ESTABLISHED_PER_RIVAL`] times per
//!   active rival, each step is a confirmation with probability `max_confirmation_share`, drawn
//!   before the policy is asked: a step given to a confirmation costs none of the policy's
//!   sampling (MergeDTS's Beta draws, DTS's), so the layer's steps are cheaper than the policy's.
//!   Before that, early exploration is left to the policy. Measured on MSLR-Navigational with DTS
//!   at 136 rankers: in the runs that decided late or never, DTS led for a million steps with a
//!   wrong champion that it compared with a few close rivals and never with itself, while the
//!   true winner had met only a handful of the 135 others; a layer that waited for self-duels
//!   never ran.
//! - **Which leader.** The arm played most, its comparisons and its self-duels (only a policy
//!   duels an arm with itself, to exploit the arm it believes best), while no rival confidently
//!   beats it; otherwise the rival that beats it most clearly (followed on while that one is
//!   beaten too). A policy stuck on a wrong champion thus has its evidence gathered for the arm
//!   beating it. Counting self-duels matters: a policy that settles on its champion early (DTS at
//!   8 rankers after some 600 comparisons) then only self-duels, and without them no arm would
//!   ever be established.
//!
//! - **Self-duels become confirmations.** Once an arm is established and while nothing is
//!   decided, a self-duel the policy chose (to exploit the arm it believes best) is replaced by
//!   the same confirmation duel: a self-duel carries no evidence, so those steps are where a
//!   decision is cheapest to gather, and a policy that has settled on its champion would
//!   otherwise leave half the steps idle for the decision. Each such confirmation costs the
//!   regret of its pair (half the leader's gap to the rival), which the decision would pay
//!   anyway, only sooner; once decided, the policy's self-duels are left alone.
//!
//! The policy learns from every outcome, confirmations included, so the evidence also corrects
//! its own beliefs.
//!
//! It lives in [`crate::bandit::BanditState`]'s `select` and `select_set` and keeps the policy
//! contract: it reads the win matrix and the [`Tracker`] (derived from it, updated in `record`),
//! never changes anything when selecting, and draws its randomness from the RNG passed in, before
//! the policy's own draws, so a state restored from JSON chooses exactly as the state it was
//! saved from.
//!
//! **Decisions do not lapse.** The first time the counts decide a Condorcet winner, the layer
//! keeps it (`decided_champion`, persisted with the state): each pair's confidence sequence
//! holds at every time at once with probability 1 - delta, so its running intersection does too,
//! and a lower bound that once cleared 1/2 - epsilon may be taken as cleared from then on. The
//! statement made at the first crossing is therefore right with the same probability, and stays
//! so; later counts that close a bound again (a fair stretch of luck) do not withdraw it. It is
//! forgotten when it no longer speaks of the experiment: an arm added (never compared with the
//! champion), the champion retired, or other delta or epsilon. A Copeland decision is not kept:
//! it is read from the counts whenever asked (see [`super::verdict`]).
//!
//! **Rate.** Each step is a confirmation with probability `max_confirmation_share` once an arm is
//! established, and so is each of the policy's self-duels in the other steps; so at most that
//! share of the duels the policy would have spent on comparing two rankers go to confirmations
//! (in expectation), and none once decided. The comparisons a decision needs are set by the gaps and the boundary, whoever
//! asks for them; the
//! share sets how soon they are gathered, and every step after the decision costs no regret (the
//! decided champion is served), so an earlier decision is usually cheaper. Their regret is that
//! of those comparisons: a rival close to the leader needs many but costs little per duel, a
//! clearly worse one costs more per duel but separates in few. At the default share of 1 the
//! layer takes every step from the start until decided, the policy choosing only when the layer has
//! no leader (a cycle of confidently beaten arms): the policy's duels between two rankers that are
//! not the leader and its most needed rival add nothing the decision reads, and a step of one
//! costs as much regret as a confirmation.

use rand::Rng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::settings::DecisionSettings;
use super::tracker::Tracker;
use crate::bandit::{Arm, Pair, View};

/// An experiment's decision settings, the Condorcet winner it decided (kept once decided), and
/// the tracker derived from its win matrix. Serialised as the settings and the decided champion;
/// equal when those are equal (the tracker follows the win matrix).
#[derive(Debug, Clone, Default)]
pub struct DecisionLayer {
    settings: DecisionSettings,
    decided_champion: Option<Arm>,
    tracker: Option<Tracker>,
}

impl PartialEq for DecisionLayer {
    fn eq(&self, other: &Self) -> bool {
        self.settings == other.settings && self.decided_champion == other.decided_champion
    }
}

/// The persisted form: the settings' fields, and `decided_champion` once decided (a state written
/// before decisions were kept reads without it, and keeps the decision its counts make).
#[derive(Serialize, Deserialize)]
struct Persisted {
    #[serde(flatten)]
    settings: DecisionSettings,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    decided_champion: Option<Arm>,
}

impl Serialize for DecisionLayer {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Persisted {
            settings: self.settings,
            decided_champion: self.decided_champion,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for DecisionLayer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let p = Persisted::deserialize(d)?;
        Ok(DecisionLayer {
            settings: p.settings,
            decided_champion: p.decided_champion,
            tracker: None,
        })
    }
}

impl DecisionLayer {
    pub fn new(settings: DecisionSettings) -> Self {
        DecisionLayer {
            settings,
            decided_champion: None,
            tracker: None,
        }
    }

    pub fn settings(&self) -> DecisionSettings {
        self.settings
    }

    /// The Condorcet winner decided so far, kept once decided (see the module documentation).
    pub fn decided_champion(&self) -> Option<Arm> {
        self.decided_champion
    }

    /// Keeps `champion` as the decided Condorcet winner: a decision made earlier and stored apart
    /// from the counts, which alone may no longer decide it (call it after the settings are set,
    /// since other ones forget it). It replaces a champion the counts decide now: the first
    /// decision stands. Ignored when it no longer speaks of the active arms (see
    /// [`DecisionLayer::arms_changed`]).
    pub fn restore_decided(&mut self, view: &View, champion: Arm) {
        if view.active.get(champion).copied().unwrap_or(false) {
            self.decided_champion = Some(champion);
        }
    }

    /// New settings; the tracker is rebuilt on next use. Another delta or epsilon asks another
    /// question, so a decision kept under the old ones is forgotten (the counts may decide again
    /// at once); the confirmation settings do not change what was decided.
    pub fn set_settings(&mut self, settings: DecisionSettings) {
        if (settings.delta, settings.epsilon) != (self.settings.delta, self.settings.epsilon) {
            self.decided_champion = None;
        }
        self.settings = settings;
        self.tracker = None;
    }

    /// Forgets the kept decision when it no longer speaks of the active arms: an arm was added
    /// (never compared with the champion) or the champion was retired.
    pub fn arms_changed(&mut self, view: &View, added: bool) {
        if added || self.decided_champion.is_some_and(|c| !view.active[c]) {
            self.decided_champion = None;
        }
        self.rebuild(view);
    }

    /// Recounts everything (after arms were added or retired, or on a state just loaded), and
    /// keeps the decision the counts make, if any.
    pub fn rebuild(&mut self, view: &View) {
        self.tracker = Some(Tracker::build(view, &self.settings));
        self.keep_decision(view);
    }

    /// Keeps the Condorcet winner the counts decide, the first time they decide one: O(1) until
    /// then, one O(K^2) pass at that moment (the decision picks among several arms that all hold
    /// when epsilon > 0).
    fn keep_decision(&mut self, view: &View) {
        if self.decided_champion.is_some()
            || !self.tracker.as_ref().is_some_and(|t| t.condorcet_decided())
        {
            return;
        }
        let d = super::decide(view, &self.settings);
        if d.decided && d.kind == super::DecisionKind::Condorcet {
            self.decided_champion = d.champion;
        }
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

    /// Call after the active arm `arm` duelled itself (its tie count grew).
    pub fn self_duel(&mut self, view: &View, arm: Arm) {
        self.tracker_mut(view).self_duel(view, arm);
    }

    /// Call after the counts of the pair (`i`, `j`) changed.
    pub fn after(&mut self, view: &View, i: Arm, j: Arm) {
        self.tracker_mut(view).after(view, i, j);
        self.keep_decision(view);
    }

    /// Runs `f` on an up-to-date tracker: the kept one, or (on a state never warmed) one built for
    /// this call, which chooses the same.
    fn with_tracker<T>(&self, view: &View, f: impl FnOnce(&Tracker) -> T) -> T {
        match &self.tracker {
            Some(t) if t.fits(view, &self.settings) => f(t),
            _ => f(&Tracker::build(view, &self.settings)),
        }
    }

    /// Whether a Condorcet winner is decided, now or before (O(1) on a kept tracker).
    pub fn condorcet_decided(&self, view: &View) -> bool {
        self.decided_champion.is_some() || self.with_tracker(view, |t| t.condorcet_decided())
    }

    /// The confirmation duel to take instead of asking the policy, if any (read-only; see the
    /// module documentation for the rule). Called before the policy's `select`, so that a step
    /// given to a confirmation does not pay for the policy's sampling.
    pub fn confirmation<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Option<Pair> {
        self.evidence_duel(view, rng, |rng| {
            rng.random::<f64>() < self.settings.max_confirmation_share
        })
    }

    /// The confirmation duel to take instead of a self-duel the policy chose, if any: a
    /// self-duel carries no evidence, so while a leader is established and nothing is decided
    /// it is given to the decision (read-only, as [`DecisionLayer::confirmation`]).
    pub fn instead_of_self_duel<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Option<Pair> {
        self.evidence_duel(view, rng, |_| true)
    }

    /// The leader against its weakest rival, once a leader is established and `take` agrees.
    fn evidence_duel<R: Rng + ?Sized>(
        &self,
        view: &View,
        rng: &mut R,
        take: impl FnOnce(&mut R) -> bool,
    ) -> Option<Pair> {
        if !self.settings.confirmation || self.decided_champion.is_some() {
            return None;
        }
        self.with_tracker(view, |t| {
            if t.condorcet_decided() {
                return None;
            }
            let own = t.most_played()?;
            if t.played(view, own) < ESTABLISHED_PER_RIVAL * t.rivals() as f64 {
                return None;
            }
            if !take(rng) {
                return None;
            }
            let candidate = leader(t, view, own)?;
            let rival = rival_of(t, view, candidate)?;
            // Either order: a position bias of the interleaving falls on both sides alike.
            Some(if rng.random::<bool>() {
                Pair::new(candidate, rival)
            } else {
                Pair::new(rival, candidate)
            })
        })
    }
}

/// Plays per active rival the most played arm must have before the layer takes steps: about
/// what a clearly worse rival needs before its bound separates (28 to 110 comparisons at a
/// preference of 0.9 to 0.7 with 16 arms), so the policy's very first steps of exploration are
/// left alone. Why not more: where every rival but one is clearly worse (a long tail of bad
/// rankers, or 4 rankers at a margin of 0.1) the whole decision takes 80 to 150 comparisons per
/// rival, and at 100 the layer waited for most of it. With the two-scale boundary, 20 against
/// 100 on seed 1 matrices (docs/decisions.md; 256 runs each, standard error of a median about
/// 0.04): median decision 1.43x against 1.62x the oracle on Bradley-Terry K 4 at 0.1, 1.67x
/// against 1.80x on a 64-ranker long tail, 1.08x against 1.16x on Bradley-Terry K 4 at 0.02,
/// within 0.07 on the six others; on MSLR it moved Navigational later and Perfect sooner.
/// Measured with DTS at 136 rankers, much later (1,000) rescued runs stuck on a wrong champion
/// only after most of their regret.
const ESTABLISHED_PER_RIVAL: f64 = 20.0;

/// The rival the leader meets. While the leader has been played fewer than
/// [`LEAST_EVIDENCE_PER_RIVAL`] times per rival: the one with the least evidence
/// ([`Tracker::weakest_rival`], which says why), unless the one with the widest interval has
/// fewer than sqrt(plays / rivals) comparisons with it (forced exploration at track-and-stop's
/// rate, Garivier and Kaufmann 2016): then that one. From then on: the one with the widest
/// interval, the lowest lower bound (LUCB's rule, [`Tracker::widest_rival`]). Never-compared
/// rivals (the widest of all) come first either way.
fn rival_of(t: &Tracker, view: &View, leader: Arm) -> Option<Arm> {
    let widest = t.widest_rival(view, leader)?;
    let played = t.played(view, leader);
    let rivals = t.rivals().max(1) as f64;
    if played >= LEAST_EVIDENCE_PER_RIVAL * rivals
        || view.count(leader, widest) < (played / rivals).sqrt()
    {
        return Some(widest);
    }
    t.weakest_rival(view, leader)
}

/// Plays per rival of the leader up to which it meets the rival with the least evidence rather
/// than LUCB's. Early, LUCB's intervals are wide for every rival compared a few times, so it
/// spends each clearly worse rival's first dozens of comparisons before the rival that beats a
/// wrong leader; the least evidence meets that rival at once. But greed has no end of its own:
/// a leader trailing a near-tie stays on it while a rival ahead by luck, or one that beats the
/// leader by more, waits (without a bound, 5% of runs on a 4-ranker transitive matrix at margin
/// 0.005 were undecided after 10^6 steps, with two standard deviations of optimism and the
/// forced exploration); LUCB's balancing of the intervals resolves that. 200 against 100 (and
/// no bound) on seeds 1 and 5 of docs/decisions.md; measured on seed 6 there.
const LEAST_EVIDENCE_PER_RIVAL: f64 = 200.0;

/// Most hops from a confidently beaten arm to the arm beating it (a Condorcet winner is reached
/// within K - 1; the bound keeps a cycle of a Copeland matrix from looping).
const MAX_LEADER_HOPS: usize = 8;

/// The arm whose evidence the layer gathers from `own`, the most played arm: `own` itself while
/// no rival confidently beats it, otherwise the rival that beats it most clearly, followed on
/// while that one is beaten too (LUCB's empirical leader).
fn leader(t: &Tracker, view: &View, own: Arm) -> Option<Arm> {
    let mut arm = own;
    for _ in 0..MAX_LEADER_HOPS {
        if !t.is_beaten(arm) {
            return Some(arm);
        }
        arm = t.strongest_beater(view, arm)?;
    }
    None
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::bandit::decision::decide;
    use crate::bandit::testing::{view_of, wins_of};
    use crate::bandit::{BanditRng, BanditState, Outcome, PolicySpec, TieRule, WinMatrix};

    /// Arm 0 leads arm 1 narrowly and arm 2 clearly: undecided, 1 is the weakest rival.
    fn undecided() -> WinMatrix {
        let mut w = WinMatrix::new(3);
        w.add_wins(0, 1, 52);
        w.add_wins(1, 0, 48);
        w.add_wins(0, 2, 900);
        w.add_wins(2, 0, 100);
        w
    }

    #[test]
    fn confirmations_take_at_most_the_share_and_meet_the_weakest_rival() {
        let w = undecided();
        let active = [true; 3];
        let view = view_of(&w, &active);
        let share = 0.3;
        let mut layer = DecisionLayer::new(DecisionSettings {
            max_confirmation_share: share,
            ..Default::default()
        });
        layer.rebuild(&view);
        let mut rng = BanditRng::seed_from_u64(5);
        let draws = 20_000;
        let mut taken = 0;
        for _ in 0..draws {
            if let Some(pair) = layer.confirmation(&view, &mut rng) {
                taken += 1;
                assert!(
                    pair == Pair::new(0, 1) || pair == Pair::new(1, 0),
                    "{pair:?}"
                );
            }
        }
        // A binomial at the share: within 4 standard errors either way.
        let rate = taken as f64 / draws as f64;
        let se = (share * (1.0 - share) / draws as f64).sqrt();
        assert!((rate - share).abs() < 4.0 * se, "rate {rate}");
        // Off: never.
        let off = DecisionLayer::new(DecisionSettings::default().without_confirmation());
        assert!((0..1000).all(|_| off.confirmation(&view, &mut rng).is_none()));
    }

    /// Arm 0 leads rival 1 by 10 to 0 (the widest interval, but more evidence: 0.5 - 0.32 against
    /// 0.03 - 0.045) and rival 2 by 265 to 235; 3 is separated (45 to 5). Rival 1 has fewer than
    /// sqrt(560 plays / 3 rivals) = 13.7 comparisons, so the forced exploration meets it first.
    /// At 29 to 11 it still has the widest interval, but 40 comparisons (evidence 0.225 - 0.16):
    /// rival 2 is met. Once the leader has 200 plays per rival (600), the widest interval again.
    #[test]
    fn the_leader_meets_the_least_evidence_then_the_widest_interval() {
        let mut w = wins_of(
            4,
            &[(0, 1, 10), (0, 2, 265), (2, 0, 235), (0, 3, 45), (3, 0, 5)],
        );
        let active = [true; 4];
        let layer = DecisionLayer::new(DecisionSettings {
            max_confirmation_share: 1.0,
            ..Default::default()
        });
        let mut rng = BanditRng::seed_from_u64(6);
        let rival = |w: &WinMatrix, rng: &mut BanditRng| {
            let pair = layer
                .confirmation(&view_of(w, &active), rng)
                .expect("established");
            assert!(pair.first == 0 || pair.second == 0, "{pair:?}");
            pair.first + pair.second
        };
        let rivals = |w: &WinMatrix| {
            let view = view_of(w, &active);
            let t = Tracker::build(&view, &DecisionSettings::default());
            (t.widest_rival(&view, 0), t.weakest_rival(&view, 0))
        };
        assert_eq!(rivals(&w), (Some(1), Some(2)));
        for _ in 0..20 {
            assert_eq!(rival(&w, &mut rng), 1);
        }
        w.add_wins(0, 1, 19);
        w.add_wins(1, 0, 11);
        assert_eq!(rivals(&w), (Some(1), Some(2)));
        for _ in 0..20 {
            assert_eq!(rival(&w, &mut rng), 2);
        }
        const { assert!(LEAST_EVIDENCE_PER_RIVAL * 3.0 <= 635.0) };
        w.add_wins(0, 3, 45);
        for _ in 0..20 {
            assert_eq!(rival(&w, &mut rng), 1);
        }
    }

    /// The layer starts once the most played arm has been played [`ESTABLISHED_PER_RIVAL`]
    /// times per rival, and gathers the evidence of the arm that confidently beats it, if any.
    #[test]
    fn confirmations_start_once_an_arm_is_established_and_follow_its_beater() {
        // Arm 2 is the most compared (3,000); 0 confidently beats it, and 0's weakest rival is 1
        // (0 leads 1 narrowly over 1,960 comparisons).
        let mut w = WinMatrix::new(3);
        w.add_wins(0, 1, 1000);
        w.add_wins(1, 0, 960);
        w.add_wins(0, 2, 900);
        w.add_wins(2, 0, 100);
        w.add_wins(2, 1, 1000);
        w.add_wins(1, 2, 1000);
        const { assert!(2.0 * ESTABLISHED_PER_RIVAL <= 2960.0) };
        let active = [true; 3];
        let view = view_of(&w, &active);
        let layer = DecisionLayer::new(DecisionSettings {
            max_confirmation_share: 1.0,
            ..Default::default()
        });
        let mut rng = BanditRng::seed_from_u64(9);
        for _ in 0..100 {
            let pair = layer.confirmation(&view, &mut rng).expect("established");
            assert!(
                pair == Pair::new(0, 1) || pair == Pair::new(1, 0),
                "{pair:?}"
            );
        }
        // No arm with that many comparisons per rival yet: the policy's steps, all of them.
        let mut few = WinMatrix::new(3);
        few.add_wins(0, 1, 15);
        few.add_wins(1, 0, 14);
        const { assert!(29.0 < 2.0 * ESTABLISHED_PER_RIVAL && 49.0 >= 2.0 * ESTABLISHED_PER_RIVAL) };
        let view = view_of(&few, &active);
        assert!((0..100).all(|_| layer.confirmation(&view, &mut rng).is_none()));
        // Established (arm 0, 49 comparisons): it meets never-compared 2 first.
        few.add_wins(0, 1, 20);
        let view = view_of(&few, &active);
        let pair = layer.confirmation(&view, &mut rng).unwrap();
        assert!(
            pair == Pair::new(0, 2) || pair == Pair::new(2, 0),
            "{pair:?}"
        );
    }

    #[test]
    fn no_confirmation_once_decided() {
        let mut w = undecided();
        w.add_wins(0, 1, 20_000);
        w.add_wins(1, 0, 10_000);
        let active = [true; 3];
        let view = view_of(&w, &active);
        let layer = DecisionLayer::new(DecisionSettings {
            max_confirmation_share: 1.0,
            ..Default::default()
        });
        assert!(layer.condorcet_decided(&view));
        let mut rng = BanditRng::seed_from_u64(1);
        assert!((0..1000).all(|_| layer.confirmation(&view, &mut rng).is_none()));
    }

    /// Plays `n` outcomes between arms `winner` and `loser`, all won by `winner`.
    fn wins(state: &mut BanditState, winner: Arm, loser: Arm, n: usize, rng: &mut BanditRng) {
        for _ in 0..n {
            state
                .record(Pair::new(winner, loser), Outcome::FirstWins, rng)
                .unwrap();
        }
    }

    #[test]
    fn a_decision_is_kept_when_the_counts_even_out_and_survives_a_restore() {
        let mut rng = BanditRng::seed_from_u64(2);
        let spec = PolicySpec::new("rucb");
        let mut state = BanditState::new(&spec, 3, TieRule::Ignore, &mut rng).unwrap();
        // Arm 0 wins all: decided once both bounds clear 1/2.
        for _ in 0..200 {
            wins(&mut state, 0, 1, 1, &mut rng);
            wins(&mut state, 0, 2, 1, &mut rng);
            if state.condorcet_decided() {
                break;
            }
        }
        assert!(state.condorcet_decided());
        assert_eq!(state.decision.decided_champion(), Some(0));
        // Arm 1 wins as many back: the counts decide nothing now, the decision stands.
        let n01 = state.wins.wins(0, 1) as usize;
        wins(&mut state, 1, 0, n01, &mut rng);
        let fresh = decide(&state.view(), &state.decision_settings());
        assert!(!fresh.decided, "{fresh:?}");
        let d = state.decision();
        assert!(
            d.decided && d.champion == Some(0) && d.winners == [0],
            "{d:?}"
        );
        assert_eq!(d.possible_best, fresh.possible_best);
        assert!(state.condorcet_decided());
        // Kept in the persisted state; a state written before (settings only) reads undecided.
        let json = serde_json::to_value(&state).unwrap();
        assert_eq!(json["decision"]["decided_champion"], 0, "{json}");
        let restored: BanditState = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(restored, state);
        assert!(restored.decision().decided);
        let mut old = json;
        old["decision"]
            .as_object_mut()
            .unwrap()
            .remove("decided_champion");
        let old: BanditState = serde_json::from_value(old).unwrap();
        assert!(!old.decision().decided);
        // No confirmation duel once decided, even where the counts would ask for one.
        let mut layer = state.decision.clone();
        layer.set_settings(DecisionSettings {
            max_confirmation_share: 1.0,
            ..Default::default()
        });
        assert_eq!(layer.decided_champion(), Some(0), "same delta and epsilon");
        assert!((0..100).all(|_| { layer.confirmation(&state.view(), &mut rng).is_none() }));
        // Another delta asks another question.
        layer.set_settings(DecisionSettings {
            delta: 0.01,
            ..Default::default()
        });
        assert_eq!(layer.decided_champion(), None);
    }

    /// A state rebuilt from its counts alone (as the service stores it: the counts in their own
    /// tables) holds the kept decision again once it is restored, unless its champion is retired.
    #[test]
    fn a_kept_decision_is_restored_on_counts_that_no_longer_decide_it() {
        let mut rng = BanditRng::seed_from_u64(2);
        let spec = PolicySpec::new("rucb");
        let mut state = BanditState::new(&spec, 3, TieRule::Ignore, &mut rng).unwrap();
        wins(&mut state, 0, 1, 200, &mut rng);
        wins(&mut state, 0, 2, 200, &mut rng);
        assert_eq!(state.decided_champion(), Some(0));
        wins(&mut state, 1, 0, 200, &mut rng);
        let mut counts_only = serde_json::to_value(&state).unwrap();
        counts_only["decision"]
            .as_object_mut()
            .unwrap()
            .remove("decided_champion");
        let mut loaded: BanditState = serde_json::from_value(counts_only).unwrap();
        loaded.warm();
        assert!(
            !loaded.decision().decided,
            "the counts alone decide nothing"
        );
        let mut retired = loaded.clone();
        loaded.restore_decided_champion(0);
        assert_eq!(loaded, state);
        let d = loaded.decision();
        assert!(d.decided && d.champion == Some(0), "{d:?}");
        retired.retire_arm(0).unwrap();
        retired.restore_decided_champion(0);
        assert_eq!(retired.decided_champion(), None);
        assert!(!retired.decision().decided);
    }

    #[test]
    fn a_kept_decision_is_dropped_when_an_arm_is_added_or_the_champion_retired() {
        let mut rng = BanditRng::seed_from_u64(3);
        let spec = PolicySpec::new("rucb");
        let decided = |rng: &mut BanditRng| {
            let mut state = BanditState::new(&spec, 4, TieRule::Ignore, rng).unwrap();
            for rival in 1..4 {
                wins(&mut state, 0, rival, 200, rng);
            }
            assert_eq!(state.decision.decided_champion(), Some(0));
            state
        };
        let mut s = decided(&mut rng);
        s.retire_arm(3).unwrap();
        assert_eq!(s.decision.decided_champion(), Some(0), "a rival retired");
        s.add_arm();
        assert_eq!(s.decision.decided_champion(), None, "an arm never compared");
        assert!(!s.decision().decided);
        let mut s = decided(&mut rng);
        // Arm 1 now beats arm 2 and 3 clearly too, so retiring 0 leaves a decision for 1 only.
        wins(&mut s, 1, 2, 200, &mut rng);
        wins(&mut s, 1, 3, 200, &mut rng);
        s.retire_arm(0).unwrap();
        assert_eq!(s.decision.decided_champion(), Some(1));
    }

    /// Five arms: arm 0 beats every other with probability 0.52, the others are even.
    struct Five;

    impl Five {
        fn k(&self) -> usize {
            5
        }

        fn duel(&self, i: Arm, j: Arm, rng: &mut BanditRng) -> bool {
            let p = if i == 0 {
                0.52
            } else if j == 0 {
                0.48
            } else {
                0.5
            };
            rng.random::<f64>() < p
        }
    }

    /// MergeDTS duels its champion with itself once one batch remains; the layer takes a share
    /// of the steps for confirmations until decided, and a state restored from JSON (tracker not
    /// persisted) chooses exactly the same duels.
    #[test]
    fn a_policy_that_self_duels_reaches_a_decision_and_replays_exactly() {
        let m = Five;
        let spec =
            PolicySpec::parse_cli("merge_dts:alpha=0.262144,batch_size=16,c=400000").unwrap();
        let mut rng = BanditRng::seed_from_u64(11);
        let mut state = BanditState::new(&spec, m.k(), TieRule::Ignore, &mut rng).unwrap();
        let mut plain = state.clone();
        plain.set_decision_settings(DecisionSettings::default().without_confirmation());
        let play = |state: &mut BanditState, rng: &mut BanditRng, steps: usize| {
            for _ in 0..steps {
                let p = state.select(rng);
                let outcome = if p.first == p.second {
                    Outcome::Tie
                } else if m.duel(p.first, p.second, rng) {
                    Outcome::FirstWins
                } else {
                    Outcome::SecondWins
                };
                state.record(p, outcome, rng).unwrap();
            }
        };
        let mut plain_rng = rng.clone();
        play(&mut plain, &mut plain_rng, 20_000);
        assert!(
            !plain.condorcet_decided(),
            "MergeDTS alone gathers too little"
        );
        let mut confirmations = 0;
        for _ in 0..20 {
            play(&mut state, &mut rng, 1_000);
            let restored: BanditState =
                serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
            assert_eq!(restored, state);
            let (mut r1, mut r2) = (BanditRng::seed_from_u64(4), BanditRng::seed_from_u64(4));
            for _ in 0..200 {
                let (a, b) = (state.select(&mut r1), restored.select(&mut r2));
                assert_eq!(a, b);
                confirmations += (a.first != a.second) as usize;
            }
        }
        assert!(confirmations > 0);
        play(&mut state, &mut rng, 100_000);
        let d = state.decision();
        assert!(d.decided && d.champion == Some(0), "{d:?}");
        // Decided: the policy's self-duels are left alone.
        assert!((0..1000).all(|_| {
            let p = state.select(&mut rng);
            p.first == p.second
        }));
    }

    /// A/A at the default delta, as an experiment runs: the default policy (with its
    /// confirmations) on 4 and 16 identical rankers, 20 experiments each, the Condorcet decision
    /// polled after every outcome and the whole decision (Copeland included) every 100. Each
    /// experiment decides with probability at most delta = 0.05, so over 40 the count of decided
    /// ones is at most a Binomial(40, 0.05): above 7 with probability 0.07%. The longer version
    /// (10^6 outcomes) is a `joust simulate --matrix identical:K` command (docs/results.md).
    #[test]
    fn identical_rankers_polled_after_every_outcome_are_rarely_decided() {
        let settings = DecisionSettings::default();
        let mut decided = 0;
        for (k, seeds) in [(4, 0..20), (16, 100..120)] {
            for seed in seeds {
                let mut rng = BanditRng::seed_from_u64(seed);
                let mut state =
                    BanditState::new(&PolicySpec::new("auto"), k, TieRule::Ignore, &mut rng)
                        .unwrap();
                state.set_decision_settings(settings);
                for step in 0..25_000 {
                    let p = state.select(&mut rng);
                    let outcome = if p.first == p.second {
                        Outcome::Tie
                    } else if rng.random::<bool>() {
                        Outcome::FirstWins
                    } else {
                        Outcome::SecondWins
                    };
                    state.record(p, outcome, &mut rng).unwrap();
                    if state.condorcet_decided() || (step % 100 == 0 && state.decision().decided) {
                        decided += 1;
                        break;
                    }
                }
            }
        }
        assert!(decided <= 7, "{decided} of 40 A/A experiments decided");
    }

    /// A/A: every pair is a fair coin. Whatever the policy compares (adaptive sampling), watched
    /// after every outcome (continuous monitoring), a decision is ever made in at most delta of
    /// the experiments (a sampling allowance of 3 standard errors of a binomial at delta).
    #[test]
    fn identical_rankers_are_decided_in_at_most_delta_of_experiments() {
        let delta = 0.2;
        let settings = DecisionSettings {
            delta,
            ..Default::default()
        };
        let experiments = 300;
        let mut decided = 0;
        for seed in 0..experiments {
            let mut rng = BanditRng::seed_from_u64(seed);
            let k = 2 + (seed as usize % 4);
            let policy = ["rucb", "self_sparring"][seed as usize % 2];
            let mut state =
                BanditState::new(&PolicySpec::new(policy), k, TieRule::Ignore, &mut rng).unwrap();
            state.set_decision_settings(settings);
            for _ in 0..3_000 {
                let p = state.select(&mut rng);
                let outcome = if p.first == p.second {
                    Outcome::Tie
                } else if rng.random::<bool>() {
                    Outcome::FirstWins
                } else {
                    Outcome::SecondWins
                };
                state.record(p, outcome, &mut rng).unwrap();
                if state.condorcet_decided() {
                    decided += 1;
                    break;
                }
            }
        }
        let rate = decided as f64 / experiments as f64;
        let se = (delta * (1.0 - delta) / experiments as f64).sqrt();
        assert!(rate <= delta + 3.0 * se, "rate {rate}");
    }
}
