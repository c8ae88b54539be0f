//! joust: online ranker evaluation with dueling bandits.
//!
//! Layers, each importing only downwards (see README "Architecture"):
//! `bandit` (pure policies), `sim` (matrices, simulation), `store` (Postgres).

pub mod bandit;
pub mod interleave;
pub mod sim;
pub mod store;
