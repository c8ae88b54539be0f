//! The registry of policies: one enum over every policy, dispatching the [`Policy`] contract
//! without dynamic calls (the simulator's hot loop), serialising each policy's state under its
//! snake_case name, and answering what the rest of joust asks about a policy by name
//! ([`PolicyInfo`]): the rankers per query it takes, its memory, how its spec is recorded.
//!
//! To add a policy: write its module with a state type implementing [`Policy`] and a constructor
//! `new(params, k, rng)`, declare its parameters and what the registry must know of it with
//! [`super::params::policy_params!`], then add one line to the `policies!` invocation below.

use rand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::footprint::Footprint;
use super::params::PolicyParams;
use super::policies::{
    auto, beat_the_mean, doubler, dts, interleaved_filter, mdb, merge_dts, merge_rucb, multi_sbm,
    rex3, rmed1, rucb, self_sparring, sparring, ucb_candidates, uniform,
};
use super::{Arm, BanditRng, Pair, Policy, PolicySpec, SetChoice, SetUpdate, SpecError, View, Win};

/// What the registry knows of one policy, declared once in the policy's module by its parameter
/// type (see [`super::params::policy_params!`]).
pub trait PolicyKind: PolicyParams {
    /// The policy's state.
    type Policy: Policy;
    /// The most rankers one query may compare ([`super::ANY_NUMBER`] for any number).
    const MAX_RANKERS_PER_QUERY: usize = 2;
    /// Whether the policy is meant for many rankers: the memory budget suggests it when it
    /// refuses another.
    const FOR_MANY_RANKERS: bool = false;

    /// A fresh state for `k` arms.
    fn build(self, k: usize, rng: &mut BanditRng) -> Self::Policy;

    /// What the policy keeps beyond every state's share, with these parameters and `k` rankers.
    fn footprint(&self, k: usize) -> Footprint {
        let _ = k;
        Footprint::LINEAR
    }

    /// Writes into the parameters of a spec about to be stored what the stored spec must pin,
    /// so that it replays the same way after the defaults change. Most policies pin nothing.
    fn record(params: &mut Map<String, Value>) {
        let _ = params;
    }
}

/// What joust knows of one policy, by name.
#[derive(Debug, Clone, Copy)]
pub struct PolicyInfo {
    /// The policy's snake_case name, as the API and the command line take it.
    pub name: &'static str,
    /// The most rankers one query may compare ([`super::ANY_NUMBER`] for any number).
    pub max_rankers_per_query: usize,
    /// Whether the policy is meant for many rankers (suggested when the memory budget refuses
    /// another).
    pub for_many_rankers: bool,
    footprint: fn(&PolicySpec, usize) -> Result<Footprint, SpecError>,
    record: fn(&mut Map<String, Value>),
}

impl PolicyInfo {
    const fn of<P: PolicyKind>(name: &'static str) -> Self {
        PolicyInfo {
            name,
            max_rankers_per_query: P::MAX_RANKERS_PER_QUERY,
            for_many_rankers: P::FOR_MANY_RANKERS,
            footprint: footprint_of::<P>,
            record: P::record,
        }
    }

    /// Whether one query may compare more than two rankers.
    pub fn takes_many_rankers_per_query(&self) -> bool {
        self.max_rankers_per_query > 2
    }

    /// What the policy keeps beyond every state's share, with `spec`'s parameters (validated)
    /// and `k` rankers.
    pub fn footprint(&self, spec: &PolicySpec, k: usize) -> Result<Footprint, SpecError> {
        (self.footprint)(spec, k)
    }

    /// Writes into `params` what the stored spec must pin.
    pub fn record(&self, params: &mut Map<String, Value>) {
        (self.record)(params)
    }
}

fn footprint_of<P: PolicyKind>(spec: &PolicySpec, k: usize) -> Result<Footprint, SpecError> {
    Ok(spec.params::<P>(k)?.footprint(k))
}

/// Every policy joust knows, in the order the API lists them.
pub fn registry() -> &'static [PolicyInfo] {
    REGISTRY
}

/// The policy named `name`, or the error that lists the known ones.
pub fn policy_info(name: &str) -> Result<&'static PolicyInfo, SpecError> {
    REGISTRY
        .iter()
        .find(|info| info.name == name)
        .ok_or_else(|| SpecError::UnknownPolicy {
            name: name.to_string(),
            known: POLICY_NAMES.join(", "),
        })
}

/// The names of the policies that take more than two rankers per query, in registry order.
pub fn multi_ranker_policies() -> impl Iterator<Item = &'static str> {
    REGISTRY
        .iter()
        .filter(|info| info.takes_many_rankers_per_query())
        .map(|info| info.name)
}

/// `names` as prose: "a, b or c" with `last` as the final joining word.
pub fn list_names<'a>(names: impl IntoIterator<Item = &'a str>, last: &str) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    match names.split_last() {
        None => String::new(),
        Some((only, [])) => only.to_string(),
        Some((end, rest)) => format!("{} {last} {end}", rest.join(", ")),
    }
}

macro_rules! policies {
    ($( $name:literal => $variant:ident($params:ty) ),* $(,)?) => {
        /// Any policy joust knows, by name.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "name", content = "state")]
        pub enum AnyPolicy {
            $( #[serde(rename = $name)] $variant(<$params as PolicyKind>::Policy), )*
        }

        static REGISTRY: &[PolicyInfo] = &[$(PolicyInfo::of::<$params>($name)),*];

        /// Names of every policy, as the API and the command line take them.
        pub const POLICY_NAMES: &[&str] = &[$($name),*];

        impl AnyPolicy {
            /// Builds a fresh policy for `k` arms from a spec, validating its parameters.
            pub fn build(spec: &PolicySpec, k: usize, rng: &mut BanditRng) -> Result<Self, SpecError> {
                match spec.name.as_str() {
                    $( $name => {
                        let params: $params = spec.params(k)?;
                        Ok(AnyPolicy::$variant(params.build(k, rng)))
                    } )*
                    other => Err(policy_info(other).expect_err("every registered name is matched")),
                }
            }

            /// The policy's snake_case name.
            pub fn name(&self) -> &'static str {
                match self { $( AnyPolicy::$variant(_) => $name, )* }
            }

            /// Whether the confirmation layer may take some of this policy's steps. Not for the
            /// reductions of Ailon et al. (Sparring, Doubler, MultiSBM): they credit each side's
            /// learner with the arm on its side, so a duel they did not choose would reward a
            /// learner for an arm it never picked (measured: MultiSBM then misses the winner of
            /// `utility:1good:linear` under delayed feedback in 4 of 6 runs).
            pub fn accepts_confirmations(&self) -> bool {
                !matches!(
                    self.name(),
                    "sparring_ucb" | "sparring_ts" | "sparring_exp3" | "doubler" | "multi_sbm"
                )
            }

            /// The most rankers one query may compare ([`super::ANY_NUMBER`] for any number).
            pub fn max_rankers_per_query(&self) -> usize {
                match self { $( AnyPolicy::$variant(_) => <$params as PolicyKind>::MAX_RANKERS_PER_QUERY, )* }
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
            fn select_set<R: Rng + ?Sized>(&self, view: &View, m: usize, rng: &mut R) -> SetChoice {
                match self { $( AnyPolicy::$variant(p) => p.select_set(view, m, rng), )* }
            }
            fn update_set<R: Rng + ?Sized>(&mut self, view: &View, heard: &SetUpdate, rng: &mut R) {
                match self { $( AnyPolicy::$variant(p) => p.update_set(view, heard, rng), )* }
            }
        }
    };
}

policies! {
    "uniform" => Uniform(uniform::UniformParams),
    "interleaved_filter" => InterleavedFilter(interleaved_filter::InterleavedFilterParams),
    "beat_the_mean" => BeatTheMean(beat_the_mean::BeatTheMeanParams),
    "rmed1" => Rmed1(rmed1::Rmed1Params),
    "rex3" => Rex3(rex3::Rex3Params),
    "sparring_ucb" => SparringUcb(sparring::SparringUcbParams),
    "sparring_ts" => SparringTs(sparring::SparringTsParams),
    "sparring_exp3" => SparringExp3(sparring::SparringExp3Params),
    "self_sparring" => SelfSparring(self_sparring::SelfSparringParams),
    "doubler" => Doubler(doubler::DoublerParams),
    "multi_sbm" => MultiSbm(multi_sbm::MultiSbmParams),
    "rucb" => Rucb(rucb::RucbParams),
    "merge_dts" => MergeDts(merge_dts::MergeDtsParams),
    "merge_rucb" => MergeRucb(merge_rucb::MergeRucbParams),
    "dts" => Dts(dts::DtsParams),
    "mdb" => Mdb(mdb::MdbParams),
    "ucb_candidates" => UcbCandidates(ucb_candidates::UcbCandidatesParams),
    "auto" => Auto(auto::AutoParams),
}

/// The policy of an experiment that names none: `auto`, whose current version is the policy with
/// the smallest worst case over the family grid (its module docs, docs/results.md).
pub const DEFAULT_POLICY: &str = "auto";

/// The policy of an experiment that names none and compares more than two rankers per query:
/// `auto` is pairwise, and Self-Sparring had the least regret of the multi-ranker policies at
/// every m measured (docs/results.md).
pub const DEFAULT_MULTI_POLICY: &str = "self_sparring";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_registered_once_and_the_defaults_are_registered() {
        let mut names: Vec<&str> = registry().iter().map(|info| info.name).collect();
        assert_eq!(names, POLICY_NAMES);
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), POLICY_NAMES.len());
        assert!(policy_info(DEFAULT_POLICY).is_ok());
        assert!(
            policy_info(DEFAULT_MULTI_POLICY)
                .unwrap()
                .takes_many_rankers_per_query()
        );
    }

    #[test]
    fn an_unknown_name_lists_the_known_ones() {
        let err = policy_info("nope").unwrap_err().to_string();
        assert!(err.contains("unknown policy `nope`"), "{err}");
        assert!(err.contains(&POLICY_NAMES.join(", ")), "{err}");
    }

    #[test]
    fn names_read_as_prose() {
        assert_eq!(list_names(["a"], "or"), "a");
        assert_eq!(list_names(["a", "b", "c"], "or"), "a, b or c");
        assert_eq!(list_names([], "or"), "");
    }
}
