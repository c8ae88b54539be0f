//! `uniform`: a uniformly random pair of distinct active arms at every step. The baseline every
//! other policy should beat; it explores forever and never concentrates.

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::bandit::params::policy_params;
use crate::bandit::{Arm, BanditRng, Pair, Policy, View, Win};

policy_params! {
    /// `uniform` has no parameters.
    pub struct UniformParams for Uniform {}
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Uniform {}

impl Uniform {
    pub fn new(_params: UniformParams, _k: usize, _rng: &mut BanditRng) -> Self {
        Uniform {}
    }
}

impl Policy for Uniform {
    fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Pair {
        let arms: Vec<Arm> = view.active_arms().collect();
        let a = rng.random_range(0..arms.len());
        if arms.len() == 1 {
            return Pair::new(arms[0], arms[0]);
        }
        // Draw the second among the others so the pair is always of two distinct arms.
        let mut b = rng.random_range(0..arms.len() - 1);
        if b >= a {
            b += 1;
        }
        Pair::new(arms[a], arms[b])
    }

    fn update<R: Rng + ?Sized>(&mut self, _: &View, _: Win, _: &mut R) {}

    fn arm_added(&mut self, _: &View, _: Arm) {}

    fn arm_retired(&mut self, _: &View, _: Arm) {}
}
