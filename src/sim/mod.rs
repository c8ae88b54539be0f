//! Simulation: preference matrices, scenarios, regret and the runner behind `joust simulate`.

pub mod matrix;
pub mod scenarios;

pub use matrix::PrefMatrix;
