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
//! - Every outcome says which side won: the service keeps the duel's order in its token
//!   ([`crate::bandit::Outcome`]). The left box is credited with the first arm (reward 1 if it won, 0 if
//!   it lost) and the right box with the second, as in the paper, however late the outcome.
//! - A tie between two different arms (only when ties count as half a win) gives each box
//!   reward 1/2.
//! - A self-duel (both boxes proposed the same arm) has no winner. As in the paper, where the
//!   user's choice between two copies of one arm is a fair coin, it gives reward 1 to one box
//!   and 0 to the other, the box drawn by a coin, as soon as the policy hears of it (`self_duel`
//!   when ties are ignored, `tie` when they count). The coin matters: two UCB boxes are
//!   deterministic, so with equal histories they propose the same arms. Crediting both with 1/2
//!   kept their histories equal: they explored a suboptimal arm in the same step, duelled it
//!   with itself, read reward 1/2 for it (it earns ~0.2 against the best arm) and went on doing
//!   so; on 1good:linear the regret grew linearly, ~0.09 per step. Crediting at once, not at
//!   the next update, keeps both boxes' counts current at every selection: when the boxes have
//!   settled on the best arm, nearly every duel is a self-duel and updates are rare.
//!
//! `belief`: the arm the boxes favour most, i.e. with the most feedback summed over both boxes
//! (self-duels count in both). Added arms join both boxes with no pulls; retired arms are never
//! proposed again.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::single_armed::{BoxRule, SingleArmed};
use crate::bandit::params::{Open, policy_params};
use crate::bandit::{Arm, BanditRng, Pair, Policy, View, Win};

policy_params! {
    /// Parameters of `sparring_ucb`: the exploration parameter of the paper's Algorithm 1 UCB.
    pub struct SparringUcbParams for Sparring {
        /// Index width `sqrt((alpha + 2) ln t / (2 n))`; the default 2 is Auer et al.'s UCB1.
        pub alpha: f64 = 2.0, Open(0.0, 100.0);
    }
}

policy_params! {
    /// Parameters of `sparring_ts`: none (Beta(1, 1) priors).
    pub struct SparringTsParams for Sparring {}
}

policy_params! {
    /// Parameters of `sparring_exp3`: EXP3's exploration rate.
    pub struct SparringExp3Params for Sparring {
        /// Share of uniform exploration, also EXP3's learning rate (Auer et al. 2002). joust has
        /// no horizon to tune it from, so it is fixed; 0.1 keeps exploration at 10%.
        pub gamma: f64 = 0.1, Open(0.0, 1.0);
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
}

impl Sparring {
    pub fn new(params: impl Into<BoxRule>, k: usize, _rng: &mut BanditRng) -> Self {
        let rule = params.into();
        Sparring {
            left: SingleArmed::new(rule, k),
            right: SingleArmed::new(rule, k),
        }
    }

    /// A self-duel of `arm`: reward 1 for the box a fair coin picks, 0 for the other.
    fn credit_self_duel<R: Rng + ?Sized>(&mut self, view: &View, arm: Arm, rng: &mut R) {
        let left_reward = if rng.random::<bool>() { 1.0 } else { 0.0 };
        self.credit(view, arm, arm, left_reward);
    }

    /// Credits a duel: the left box with its `first` arm and reward `reward_first` (1 win, 0
    /// loss, 1/2 tie), the right box with its `second` arm and `1 - reward_first`.
    fn credit(&mut self, view: &View, first: Arm, second: Arm, reward_first: f64) {
        self.left.record(first, reward_first, view.active);
        self.right.record(second, 1.0 - reward_first, view.active);
    }
}

impl Policy for Sparring {
    fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Pair {
        // Every self-duel is already in the boxes (`self_duel`, `tie`): none to add here.
        let left = self.left.choose(view.active, |_| 0.0, rng);
        let right = self.right.choose(view.active, |_| 0.0, rng);
        Pair::new(left, right)
    }

    fn update<R: Rng + ?Sized>(&mut self, view: &View, win: Win, _rng: &mut R) {
        let duel = win.duel();
        let reward_first = if win.winner_first { 1.0 } else { 0.0 };
        self.credit(view, duel.first, duel.second, reward_first);
    }

    fn tie<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, rng: &mut R) {
        if a == b {
            self.credit_self_duel(view, a, rng);
        } else {
            self.credit(view, a, b, 0.5);
        }
    }

    fn self_duel<R: Rng + ?Sized>(&mut self, view: &View, arm: Arm, rng: &mut R) {
        self.credit_self_duel(view, arm, rng);
    }

    fn arm_added(&mut self, _view: &View, _arm: Arm) {
        self.left.add_arm();
        self.right.add_arm();
    }

    fn arm_retired(&mut self, _view: &View, _arm: Arm) {
        // The boxes choose among active arms only; the arm's statistics stay for the record.
    }

    fn belief(&self, view: &View) -> Option<Arm> {
        crate::bandit::stats::argbest::highest_positive(view.active_arms(), |a| {
            self.left.pulls(a) + self.right.pulls(a)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::params::PolicyParams;
    use crate::bandit::{TieRule, WinMatrix};
    use rand::SeedableRng;

    #[test]
    fn each_box_is_credited_with_its_own_side() {
        let mut rng = BanditRng::seed_from_u64(1);
        let w = WinMatrix::new(3);
        let active = [true; 3];
        let view = View::new(&w, &active, TieRule::HalfWin);
        for first_won in [true, false] {
            let mut s = Sparring::new(SparringTsParams {}, 3, &mut rng);
            // The duel (left 2, right 0), won by the left arm or by the right one.
            s.update(&view, Win::of(Pair::new(2, 0), first_won), &mut rng);
            let (left_reward, right_reward) = if first_won { (1.0, 0.0) } else { (0.0, 1.0) };
            assert_eq!(s.left.mean(2), Some(left_reward));
            assert_eq!(s.left.total_pulls(), 1.0);
            assert_eq!(s.right.mean(0), Some(right_reward));
            assert_eq!(s.right.total_pulls(), 1.0);
        }
    }

    #[test]
    fn a_tie_gives_each_box_one_half() {
        let mut rng = BanditRng::seed_from_u64(3);
        let w = WinMatrix::new(2);
        let active = [true; 2];
        let view = View::new(&w, &active, TieRule::HalfWin);
        let mut s = Sparring::new(SparringExp3Params::default(), 2, &mut rng);
        s.tie(&view, 0, 1, &mut rng);
        assert_eq!((s.left.mean(0), s.left.total_pulls()), (Some(0.5), 1.0));
        assert_eq!((s.right.mean(1), s.right.total_pulls()), (Some(0.5), 1.0));
        // A self-duel heard as a tie (ties counting) is one pull of the arm in each box, its
        // rewards adding up to one.
        s.tie(&view, 1, 1, &mut rng);
        assert_eq!((s.left.total_pulls(), s.right.total_pulls()), (2.0, 2.0));
        // The right box already had arm 1 from the tie, with reward 1/2.
        assert_eq!((s.left.pulls(1), s.right.pulls(1)), (1.0, 2.0));
        let right_self_duel = 2.0 * s.right.mean(1).unwrap() - 0.5;
        assert_eq!(s.left.mean(1).unwrap() + right_self_duel, 1.0);
    }

    /// A self-duel is the paper's fair coin: one box gets 1 and the other 0. Over n = 2,000
    /// self-duels the left box's mean is 1/2 with standard deviation sqrt(1/4 / n) = 0.0112;
    /// 5 standard deviations is 0.056.
    #[test]
    fn a_self_duel_rewards_one_box_picked_by_a_coin() {
        let mut rng = BanditRng::seed_from_u64(4);
        let active = [true; 2];
        let w = WinMatrix::new(2);
        let view = View::new(&w, &active, TieRule::HalfWin);
        let mut s = Sparring::new(SparringUcbParams::default(), 2, &mut rng);
        let n = 2_000;
        for _ in 0..n {
            s.self_duel(&view, 1, &mut rng);
        }
        assert_eq!((s.left.pulls(1), s.right.pulls(1)), (n as f64, n as f64));
        let (left, right) = (s.left.mean(1).unwrap(), s.right.mean(1).unwrap());
        assert!((left + right - 1.0).abs() < 1e-12, "{left} + {right}");
        assert!((left - 0.5).abs() < 0.056, "{left}");
        // The two boxes no longer share a history, which is what keeps two UCB boxes from
        // exploring the same arm in the same step.
        assert_ne!(s.left, s.right);
    }

    /// States written while Sparring kept a count of absorbed self-duels still load.
    #[test]
    fn states_with_the_old_self_duel_counts_still_load() {
        let mut rng = BanditRng::seed_from_u64(5);
        let s = Sparring::new(SparringUcbParams::default(), 2, &mut rng);
        let mut old = serde_json::to_value(&s).unwrap();
        old["self_duels_absorbed"] = serde_json::json!([3, 0]);
        assert_eq!(serde_json::from_value::<Sparring>(old).unwrap(), s);
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
