//! Self-Sparring's m-way selection (Sui, Zhuang, Burdick and Yue, "Multi-dueling Bandits with
//! Dependent Arms", UAI 2017, Algorithm 1 with independent arms): m independent Thompson draws
//! from the per-arm Beta posteriors of [`super::self_sparring`], the distinct arms drawn being the
//! set one query compares.
//!
//! - The draws come from the policy's own `select`, which makes two independent draws per call,
//!   so the m-way choice uses whatever sampler the policy has and m = 2 is `select` itself.
//!   For odd m the last call's second draw is discarded.
//! - Arms drawn more than once are shown once: a multileaved list of one ranker twice carries no
//!   more than one copy does (in Sui et al. duplicates only meet in coin-flip self-duels). The
//!   set is in order of first draw, so fewer than m arms are shown once the posteriors
//!   concentrate, and a single arm (a self-duel) once every draw picks the same one.
//! - Learning needs nothing new: each pairwise result of the query is one `update` (a win for
//!   the winner's Beta, a loss for the loser's) or `tie`, exactly as Sui et al. update every
//!   observed pair; the default [`crate::bandit::Policy::update_set`] does that. A self-duel still counts
//!   half a win and half a loss at selection, through the win matrix's self-tie counts.

use rand::Rng;

use super::SelfSparring;
use crate::bandit::{Arm, Policy, View};

/// The distinct arms of `m` independent Thompson draws, in order of first draw.
pub fn thompson_set<R: Rng + ?Sized>(
    policy: &SelfSparring,
    view: &View,
    m: usize,
    rng: &mut R,
) -> Vec<Arm> {
    let mut set = Vec::with_capacity(m);
    let mut drawn = 0;
    while drawn < m {
        let pair = policy.select(view, rng);
        for arm in [pair.first, pair.second].into_iter().take(m - drawn) {
            drawn += 1;
            if !set.contains(&arm) {
                set.push(arm);
            }
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::TieRule;
    use crate::bandit::policies::self_sparring::SelfSparringParams;
    use crate::bandit::testing::{Fresh, seeded};

    #[test]
    fn flat_posteriors_spread_the_draws_and_sharp_ones_collapse_them() {
        let (mut s, mut rng) = seeded(SelfSparringParams {}, 16, 3);
        let arms = Fresh::new(16);
        let view = arms.view(TieRule::Ignore);
        // Uniform posteriors: each draw is a uniform arm, so the expected number of distinct
        // arms in 7 draws is 16 (1 - (15/16)^7) = 5.82. A set's size varies by less than one arm
        // (sd < 1), so the mean of 2,000 sets has sd < 0.023; allow 5 sd, 0.12.
        let mut total = 0usize;
        for _ in 0..2_000 {
            let set = thompson_set(&s, &view, 7, &mut rng);
            assert!((1..=7).contains(&set.len()));
            let mut sorted = set.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), set.len(), "repeated arm in {set:?}");
            total += set.len();
        }
        let mean = total as f64 / 2_000.0;
        assert!((mean - 5.82).abs() < 0.12, "mean set size {mean}");
        // Arm 4 at Beta(1001, 1), the rest at Beta(1, 1001): every draw picks arm 4.
        s.wins[4] = 1001.0;
        for a in (0..16).filter(|&a| a != 4) {
            s.losses[a] = 1001.0;
        }
        for _ in 0..100 {
            assert_eq!(thompson_set(&s, &view, 8, &mut rng), vec![4]);
        }
    }
}
