//! What a policy keeps beyond the share every state takes ([`Footprint`]): the one part of an
//! experiment's memory estimate that depends on its policy. Each policy declares its footprint in
//! its own module (the `memory` line of its parameters); the registry reads it by name, and the
//! estimate (`super::memory`) adds it to what every state keeps.
//!
//! A module of its own, importing nothing: the policies and the registry name this type, and the
//! estimate asks the registry, so keeping it beside the estimate would tie the estimate, the
//! registry and the policies into a loop.

/// What a policy keeps beyond every state's share, for its parameters and K rankers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    /// Bytes per pair of rankers (0 for the policies that grow as O(K)).
    pub per_pair: u64,
    /// Bytes per ranker beyond every state's share.
    pub per_ranker: u64,
    /// `O(K)`, `O(K·B)` or `O(K^2)`.
    pub growth: &'static str,
}

impl Footprint {
    /// A few counters per ranker: within every state's share.
    pub const LINEAR: Footprint = Footprint {
        per_pair: 0,
        per_ranker: 0,
        growth: "O(K)",
    };

    /// A value per pair of rankers.
    pub const fn per_pair(bytes: u64) -> Footprint {
        Footprint {
            per_pair: bytes,
            per_ranker: 0,
            growth: "O(K^2)",
        }
    }

    /// Extra bytes per ranker, growing as `growth` says.
    pub const fn per_ranker(bytes: u64, growth: &'static str) -> Footprint {
        Footprint {
            per_pair: 0,
            per_ranker: bytes,
            growth,
        }
    }
}
