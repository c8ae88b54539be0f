//! `sparring_ucb`, `sparring_ts`, `sparring_exp3`: Sparring (Ailon, Karnin and Joachims 2014,
//! Algorithm 4). Two single-armed boxes, left and right, each propose an arm; the duel is their
//! two proposals; the box whose arm won gets reward 1 and the other 0. Each box thus plays a
//! bandit whose rewards are "beat the other box's arm", and in the utility-based setting the best
//! arm maximises that reward whatever the other box plays, so both boxes converge to it and the
//! policy ends up comparing the best arm with itself (zero regret). The paper proves no bound
//! for it (it is a conjecture backed by its experiments); with EXP3 boxes it inherits the
//! adversarial guarantee of EXP3 (section 6).
//!
//! What joust does where the paper assumes each outcome follows its own selection:
//! - `select` asks both boxes and changes nothing; the boxes learn only in `update`.
//! - Outcomes do not say which side each arm was on. The side is inferred from the boxes
//!   themselves ([`super::sides`]): (left = winner, right = loser) against the swapped reading,
//!   at odds given by how likely each box is to propose each arm. EXP3 boxes know these
//!   probabilities exactly; UCB and Thompson boxes do not, and their sides are a fair coin. The
//!   left box is then credited with its arm (reward 1 if it won, 0 if it lost) and the right box
//!   with the other. With the coin each box hears of a random half of the outcomes, whichever
//!   box proposed them; an arm's reward is still "beat an arm the boxes propose", which the best
//!   arm maximises, so both boxes still converge to it.
//! - A tie between two different arms (only when ties count as half a win) gives each box
//!   reward 1/2, sides inferred the same way.
//! - A self-duel (both boxes proposed the same arm) has no winner and reaches the policy only
//!   through the win matrix's self-tie counts. Each is one pull with reward 1/2 in both boxes
//!   (the paper's fair coin, without its noise): the counts not yet absorbed are read at
//!   selection (so a UCB box cannot propose the same self-duel forever) and absorbed into the
//!   boxes at the next update (EXP3 needs them in its weights: without them a box that rarely
//!   proposes the best arm, which the other box always proposes, never hears that it is better).
//!
//! `belief`: the arm the boxes favour most, i.e. with the most feedback summed over both boxes
//! (self-duels count in both). Added arms join both boxes with no pulls; retired arms are never
//! proposed again.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::sides::a_was_left;
use super::single_armed::{BoxRule, SingleArmed};
use super::spec::{PolicyParams, check_range};
use super::{Arm, BanditRng, Pair, Policy, View};

/// Parameters of `sparring_ucb`: the exploration parameter of the paper's Algorithm 1 UCB.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SparringUcbParams {
    /// Index width `sqrt((alpha + 2) ln t / (2 n))`; the default 2 is Auer et al.'s UCB1.
    pub alpha: f64,
}

impl Default for SparringUcbParams {
    fn default() -> Self {
        SparringUcbParams { alpha: 2.0 }
    }
}

impl PolicyParams for SparringUcbParams {
    fn validate(&self, _k: usize) -> Result<(), String> {
        check_range("alpha", self.alpha, 0.0, 100.0, false)
    }
}

/// Parameters of `sparring_ts`: none (Beta(1, 1) priors).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SparringTsParams {}

impl PolicyParams for SparringTsParams {
    fn validate(&self, _k: usize) -> Result<(), String> {
        Ok(())
    }
}

/// Parameters of `sparring_exp3`: EXP3's exploration rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SparringExp3Params {
    /// Share of uniform exploration, also EXP3's learning rate (Auer et al. 2002). joust has no
    /// horizon to tune it from, so it is fixed; 0.1 keeps exploration at 10%.
    pub gamma: f64,
}

impl Default for SparringExp3Params {
    fn default() -> Self {
        SparringExp3Params { gamma: 0.1 }
    }
}

impl PolicyParams for SparringExp3Params {
    fn validate(&self, _k: usize) -> Result<(), String> {
        check_range("gamma", self.gamma, 0.0, 1.0, false)
    }
}

impl From<SparringUcbParams> for BoxRule {
    fn from(p: SparringUcbParams) -> Self {
        BoxRule::Ucb { alpha: p.alpha }
    }
}

impl From<SparringTsParams> for BoxRule {
    fn from(_: SparringTsParams) -> Self {
        BoxRule::Thompson
    }
}

impl From<SparringExp3Params> for BoxRule {
    fn from(p: SparringExp3Params) -> Self {
        BoxRule::Exp3 { gamma: p.gamma }
    }
}

/// Sparring's state: the two boxes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sparring {
    pub left: SingleArmed,
    pub right: SingleArmed,
    /// Self-duels per arm already absorbed into both boxes.
    pub self_duels_absorbed: Vec<u32>,
}

impl Sparring {
    pub fn new(params: impl Into<BoxRule>, k: usize, _rng: &mut BanditRng) -> Self {
        let rule = params.into();
        Sparring {
            left: SingleArmed::new(rule, k),
            right: SingleArmed::new(rule, k),
            self_duels_absorbed: vec![0; k],
        }
    }

    /// Self-duels of `arm` in the win matrix that the boxes have not absorbed yet.
    fn pending_self_duels(&self, view: &View, arm: Arm) -> f64 {
        if arm >= view.k() {
            return 0.0;
        }
        let seen = self.self_duels_absorbed.get(arm).copied().unwrap_or(0);
        view.wins.ties(arm, arm).saturating_sub(seen) as f64
    }

    /// Records every pending self-duel as reward 1/2 in both boxes.
    fn absorb_self_duels(&mut self, view: &View) {
        self.self_duels_absorbed.resize(view.k(), 0);
        for arm in 0..view.k() {
            let now = view.wins.ties(arm, arm);
            for _ in self.self_duels_absorbed[arm]..now {
                self.left.record(arm, 0.5, view.active);
                self.right.record(arm, 0.5, view.active);
            }
            self.self_duels_absorbed[arm] = now;
        }
    }

    /// Credits the outcome of a duel between `a` and `b`: `reward_a` for `a` (1 win, 0 loss,
    /// 1/2 tie), `1 - reward_a` for `b`, each to the box inferred to have proposed it.
    fn credit<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, reward_a: f64, rng: &mut R) {
        let active = view.active;
        let a_left = self.left.play_weight(a, active) * self.right.play_weight(b, active);
        let b_left = self.left.play_weight(b, active) * self.right.play_weight(a, active);
        if a_was_left(a_left, b_left, rng) {
            self.left.record(a, reward_a, active);
            self.right.record(b, 1.0 - reward_a, active);
        } else {
            self.left.record(b, 1.0 - reward_a, active);
            self.right.record(a, reward_a, active);
        }
    }
}

impl Policy for Sparring {
    fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Pair {
        let pending = |a| self.pending_self_duels(view, a);
        let left = self.left.choose(view.active, pending, rng);
        let right = self.right.choose(view.active, pending, rng);
        Pair::new(left, right)
    }

    fn update<R: Rng + ?Sized>(&mut self, view: &View, winner: Arm, loser: Arm, rng: &mut R) {
        self.absorb_self_duels(view);
        if winner != loser {
            self.credit(view, winner, loser, 1.0, rng);
        }
    }

    fn tie<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, rng: &mut R) {
        // A self-duel is in the tie counts, which this absorbs.
        self.absorb_self_duels(view);
        if a != b {
            self.credit(view, a, b, 0.5, rng);
        }
    }

    fn arm_added(&mut self, _view: &View, _arm: Arm) {
        self.left.add_arm();
        self.right.add_arm();
        self.self_duels_absorbed.push(0);
    }

    fn arm_retired(&mut self, _view: &View, _arm: Arm) {
        // The boxes choose among active arms only; the arm's statistics stay for the record.
    }

    fn belief(&self, view: &View) -> Option<Arm> {
        let played = |a: Arm| {
            self.left.pulls(a) + self.right.pulls(a) + 2.0 * self.pending_self_duels(view, a)
        };
        let mut best: Option<(Arm, f64)> = None;
        for a in view.active_arms() {
            let n = played(a);
            if n > 0.0 && best.is_none_or(|(_, m)| n > m) {
                best = Some((a, n));
            }
        }
        best.map(|(a, _)| a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::{TieRule, WinMatrix};
    use rand::SeedableRng;

    fn view_of<'a>(w: &'a WinMatrix, active: &'a [bool]) -> View<'a> {
        View {
            wins: w,
            active,
            ties: TieRule::HalfWin,
        }
    }

    #[test]
    fn winner_box_gets_one_and_loser_box_zero() {
        let mut rng = BanditRng::seed_from_u64(1);
        let w = WinMatrix::new(3);
        let active = [true; 3];
        let view = view_of(&w, &active);
        for _ in 0..200 {
            let mut s = Sparring::new(SparringTsParams {}, 3, &mut rng);
            s.update(&view, 2, 0, &mut rng);
            // Exactly one box heard of arm 2 with reward 1 and the other of arm 0 with reward 0.
            let (win_box, lose_box) = if s.left.pulls(2) > 0.0 {
                (&s.left, &s.right)
            } else {
                (&s.right, &s.left)
            };
            assert_eq!(win_box.mean(2), Some(1.0));
            assert_eq!(win_box.total_pulls(), 1.0);
            assert_eq!(lose_box.mean(0), Some(0.0));
            assert_eq!(lose_box.total_pulls(), 1.0);
        }
    }

    #[test]
    fn outcome_goes_to_the_exp3_box_that_favours_the_arm() {
        // The left box's log-weights favour arm 0 and the right box's arm 1 by 10 (gamma = 0.1,
        // 3 arms): p_left(0) = 0.9 * e^10 / (e^10 + 2) + 0.1 / 3 ~ 0.933, p_left(1) ~ 0.0334,
        // the same for the right box mirrored. An outcome between 0 and 1 is read as (left 0,
        // right 1) with odds 0.933^2 : 0.0334^2 ~ 780 : 1.
        let mut rng = BanditRng::seed_from_u64(2);
        let w = WinMatrix::new(3);
        let active = [true; 3];
        let view = view_of(&w, &active);
        let mut s = Sparring::new(SparringExp3Params::default(), 3, &mut rng);
        while s.left.play_weight(0, &active) < 0.93 {
            s.left.record(0, 1.0, &active);
        }
        while s.right.play_weight(1, &active) < 0.93 {
            s.right.record(1, 1.0, &active);
        }
        let mut right_credited = 0;
        for _ in 0..100 {
            let mut t = s.clone();
            let before = t.right.pulls(1);
            t.update(&view, 1, 0, &mut rng);
            if t.right.pulls(1) > before {
                right_credited += 1;
            }
        }
        // P(at most 95 of 100 at 780/781 each) is below 1e-6.
        assert!(right_credited > 95, "{right_credited}");
    }

    #[test]
    fn a_tie_gives_each_box_one_half() {
        let mut rng = BanditRng::seed_from_u64(3);
        let w = WinMatrix::new(2);
        let active = [true; 2];
        let view = view_of(&w, &active);
        let mut s = Sparring::new(SparringExp3Params::default(), 2, &mut rng);
        s.tie(&view, 0, 1, &mut rng);
        let means: Vec<f64> = [&s.left, &s.right]
            .iter()
            .flat_map(|b| (0..2).filter_map(|a| b.mean(a)))
            .collect();
        assert_eq!(means, vec![0.5, 0.5]);
        // A self-duel (already in the tie counts when `tie` is called) is one pull with reward
        // 1/2 in each box, absorbed once.
        let mut w = WinMatrix::new(2);
        w.record_tie(1, 1);
        let view = view_of(&w, &active);
        assert_eq!(s.pending_self_duels(&view, 1), 1.0);
        s.tie(&view, 1, 1, &mut rng);
        s.tie(&view, 0, 1, &mut rng);
        assert_eq!(s.pending_self_duels(&view, 1), 0.0);
        assert_eq!(s.left.total_pulls() + s.right.total_pulls(), 6.0);
        assert_eq!(s.left.pulls(1), 3.0 - s.left.pulls(0));
    }

    #[test]
    fn params_are_validated() {
        assert!(SparringUcbParams { alpha: 0.0 }.validate(3).is_err());
        assert!(SparringExp3Params { gamma: 1.5 }.validate(3).is_err());
        assert!(SparringExp3Params { gamma: 1.0 }.validate(3).is_ok());
        let err = SparringUcbParams { alpha: f64::NAN }
            .validate(3)
            .unwrap_err();
        assert!(err.contains("alpha"), "{err}");
    }
}
