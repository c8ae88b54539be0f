//! Simulation: preference matrices, scenarios, regret and the runner behind `joust simulate`.

pub mod clicks;
pub mod letor;
pub mod matrix;
pub mod prefmatrix;
pub mod prefmatrix_cli;
pub mod scenarios;
pub mod synthetic;

pub use matrix::PrefMatrix;
