//! Simulation: preference matrices, scenarios, regret and the runner behind `joust simulate`.

pub mod matrix;
pub mod scenarios;
pub mod clicks;
pub mod letor;
pub mod prefmatrix;
pub mod prefmatrix_cli;
pub mod synthetic;

pub use matrix::PrefMatrix;
