//! joust: online ranker evaluation with dueling bandits.
//!
//! Layers, each importing only downwards (see docs/architecture.md):
//! `bandit` and `interleave` (pure), `sim` (simulation), `store` (Postgres), `engine` (cached
//! experiments and the outcome pipeline), `http` (the API), `serve` (the service's startup),
//! `cli` (the command line).

pub mod api;
pub mod bandit;
pub mod cli;
pub mod engine;
pub mod http;
pub mod interleave;
pub mod service;
pub mod sim;
pub mod store;
