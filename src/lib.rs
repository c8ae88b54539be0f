//! joust: online ranker evaluation with dueling bandits.
//!
//! Layers, each importing only downwards (see README "Architecture"):
//! `bandit` (pure policies), `sim` (matrices, simulation), `store` (Postgres).

pub mod bandit;
pub mod engine;
pub mod http;
pub mod serve;
pub mod sim;
pub mod store;
