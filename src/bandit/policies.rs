//! The registry of policies: one enum over every policy, dispatching the [`Policy`] contract
//! without dynamic calls (the simulator's hot loop), and serialising each policy's state under
//! its snake_case name.
//!
//! To add a policy: write its module with a state type implementing [`Policy`], a parameter
//! type implementing [`PolicyParams`], and a constructor `new(params, k, rng)`; then add one line
//! to the `policies!` invocation below.

use rand::Rng;
use serde::{Deserialize, Serialize};

#[allow(unused_imports)]
use super::spec::PolicyParams;
use super::{Arm, BanditRng, Pair, Policy, PolicySpec, SetError, SetUpdate, SpecError, View, Win};

macro_rules! policies {
    ($( $name:literal => $variant:ident($ty:path, $params:path) ),* $(,)?) => {
        /// Any policy joust knows, by name.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "name", content = "state")]
        pub enum AnyPolicy {
            $( #[serde(rename = $name)] $variant($ty), )*
        }

        /// Names of every policy, as the API and the command line take them.
        pub const POLICY_NAMES: &[&str] = &[$($name),*];

        impl AnyPolicy {
            /// Builds a fresh policy for `k` arms from a spec, validating its parameters.
            pub fn build(spec: &PolicySpec, k: usize, rng: &mut BanditRng) -> Result<Self, SpecError> {
                match spec.name.as_str() {
                    $( $name => {
                        let params: $params = spec.params(k)?;
                        Ok(AnyPolicy::$variant(<$ty>::new(params, k, rng)))
                    } )*
                    other => Err(SpecError::UnknownPolicy {
                        name: other.to_string(),
                        known: POLICY_NAMES.join(", "),
                    }),
                }
            }

            /// The policy's snake_case name.
            pub fn name(&self) -> &'static str {
                match self { $( AnyPolicy::$variant(_) => $name, )* }
            }
        }

        impl Policy for AnyPolicy {
            #[inline]
            fn select<R: Rng + ?Sized>(&self, view: &View, rng: &mut R) -> Pair {
                match self { $( AnyPolicy::$variant(p) => p.select(view, rng), )* }
            }
            #[inline]
            fn update<R: Rng + ?Sized>(&mut self, view: &View, win: Win, rng: &mut R) {
                match self { $( AnyPolicy::$variant(p) => p.update(view, win, rng), )* }
            }
            fn tie<R: Rng + ?Sized>(&mut self, view: &View, a: Arm, b: Arm, rng: &mut R) {
                match self { $( AnyPolicy::$variant(p) => p.tie(view, a, b, rng), )* }
            }
            fn self_duel<R: Rng + ?Sized>(&mut self, view: &View, arm: Arm, rng: &mut R) {
                match self { $( AnyPolicy::$variant(p) => p.self_duel(view, arm, rng), )* }
            }
            fn warm(&mut self, view: &View) {
                match self { $( AnyPolicy::$variant(p) => p.warm(view), )* }
            }
            fn arm_added(&mut self, view: &View, arm: Arm) {
                match self { $( AnyPolicy::$variant(p) => p.arm_added(view, arm), )* }
            }
            fn arm_retired(&mut self, view: &View, arm: Arm) {
                match self { $( AnyPolicy::$variant(p) => p.arm_retired(view, arm), )* }
            }
            fn contenders(&self, view: &View) -> Option<Vec<Arm>> {
                match self { $( AnyPolicy::$variant(p) => p.contenders(view), )* }
            }
            fn belief(&self, view: &View) -> Option<Arm> {
                match self { $( AnyPolicy::$variant(p) => p.belief(view), )* }
            }
            fn max_rankers_per_query(&self) -> usize {
                match self { $( AnyPolicy::$variant(p) => p.max_rankers_per_query(), )* }
            }
            fn select_set<R: Rng + ?Sized>(&self, view: &View, m: usize, rng: &mut R) -> Result<Vec<Arm>, SetError> {
                match self { $( AnyPolicy::$variant(p) => p.select_set(view, m, rng), )* }
            }
            fn update_set<R: Rng + ?Sized>(&mut self, view: &View, heard: &SetUpdate, rng: &mut R) {
                match self { $( AnyPolicy::$variant(p) => p.update_set(view, heard, rng), )* }
            }
        }
    };
}

policies! {
    "uniform" => Uniform(super::uniform::Uniform, super::uniform::UniformParams),
    "interleaved_filter" => InterleavedFilter(super::interleaved_filter::InterleavedFilter, super::interleaved_filter::InterleavedFilterParams),
    "beat_the_mean" => BeatTheMean(super::beat_the_mean::BeatTheMean, super::beat_the_mean::BeatTheMeanParams),
    "rmed1" => Rmed1(super::rmed1::Rmed1, super::rmed1::Rmed1Params),
    "rex3" => Rex3(super::rex3::Rex3, super::rex3::Rex3Params),
    "sparring_ucb" => SparringUcb(super::sparring::Sparring, super::sparring::SparringUcbParams),
    "sparring_ts" => SparringTs(super::sparring::Sparring, super::sparring::SparringTsParams),
    "sparring_exp3" => SparringExp3(super::sparring::Sparring, super::sparring::SparringExp3Params),
    "self_sparring" => SelfSparring(super::self_sparring::SelfSparring, super::self_sparring::SelfSparringParams),
    "doubler" => Doubler(super::doubler::Doubler, super::doubler::DoublerParams),
    "multi_sbm" => MultiSbm(super::multi_sbm::MultiSbm, super::multi_sbm::MultiSbmParams),
    "rucb" => Rucb(super::rucb::Rucb, super::rucb::RucbParams),
    "merge_dts" => MergeDts(super::merge_dts::MergeDts, super::merge_dts::MergeDtsParams),
    "merge_rucb" => MergeRucb(super::merge_rucb::MergeRucb, super::merge_rucb::MergeRucbParams),
    "dts" => Dts(super::dts::Dts, super::dts::DtsParams),
    "mdb" => Mdb(super::mdb::Mdb, super::mdb::MdbParams),
    "ucb_candidates" => UcbCandidates(super::ucb_candidates::UcbCandidates, super::ucb_candidates::UcbCandidatesParams),
    "auto" => Auto(super::auto::Auto, super::auto::AutoParams),
}
