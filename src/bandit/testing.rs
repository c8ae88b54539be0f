//! What the unit tests of the policies share: views over a win matrix, a fresh set of arms,
//! and random outcomes fed the way [`super::BanditState`] feeds them.

use rand::Rng;

use rand::SeedableRng;

use super::registry::PolicyKind;
use super::{Arm, BanditRng, Pair, Policy, TieRule, View, Win, WinMatrix};

/// The view of `w` and `active` with ties ignored.
pub fn view_of<'a>(w: &'a WinMatrix, active: &'a [bool]) -> View<'a> {
    View::new(w, active, TieRule::Ignore)
}

/// A win matrix of `k` arms with `wins` as (winner, loser, count).
pub fn wins_of(k: usize, wins: &[(Arm, Arm, u32)]) -> WinMatrix {
    let mut w = WinMatrix::new(k);
    for &(winner, loser, n) in wins {
        w.add_wins(winner, loser, n);
    }
    w
}

/// A fresh policy of `params` for `k` arms, and the RNG it was built with, seeded with `seed`.
pub fn seeded<P: PolicyKind>(params: P, k: usize, seed: u64) -> (P::Policy, BanditRng) {
    let mut rng = BanditRng::seed_from_u64(seed);
    let policy = params.build(k, &mut rng);
    (policy, rng)
}

/// `k` active arms with no comparisons yet.
pub struct Fresh {
    wins: WinMatrix,
    active: Vec<bool>,
}

impl Fresh {
    pub fn new(k: usize) -> Self {
        Fresh {
            wins: WinMatrix::new(k),
            active: vec![true; k],
        }
    }

    pub fn view(&self, ties: TieRule) -> View<'_> {
        View::new(&self.wins, &self.active, ties)
    }
}

/// Feeds `policy` `steps` outcomes between random distinct arms of `w` (under half-win ties, a
/// fifth of them ties), recording each in `w` before the policy hears of it.
pub fn feed_random<P: Policy>(
    policy: &mut P,
    w: &mut WinMatrix,
    active: &[bool],
    ties: TieRule,
    steps: usize,
    rng: &mut BanditRng,
) {
    let k = active.len();
    for _ in 0..steps {
        let a = rng.random_range(0..k);
        let b = (a + rng.random_range(1..k)) % k;
        if ties == TieRule::HalfWin && rng.random::<f64>() < 0.2 {
            w.record_tie(a, b);
            policy.tie(&View::new(w, active, ties), a, b, rng);
        } else {
            w.record_win(a, b);
            policy.update(
                &View::new(w, active, ties),
                Win::of(Pair::new(a, b), true),
                rng,
            );
        }
    }
}
