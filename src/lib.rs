//! joust: online ranker evaluation with dueling bandits.
//!
//! Layers, each importing only downwards (see docs/architecture.md):
//! `bandit` and `interleave` (pure), `sim` (simulation), `store` (Postgres), `api` (the API's
//! request and answer shapes and error codes), `engine` (cached experiments and the outcome
//! pipeline, by stage), `http` (the API's routes, views and server stack), `service` (the
//! service's configuration and startup), `cli` (the command line).

pub mod api;
pub mod bandit;
pub mod cli;
pub mod engine;
pub mod http;
pub mod interleave;
pub mod service;
pub mod sim;
pub mod store;
