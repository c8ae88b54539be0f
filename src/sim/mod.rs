//! Simulation: preference matrices, scenarios, regret and the runner behind `joust simulate`;
//! click models, LETOR data and preference-matrix estimation behind `joust prefmatrix`.
//!
//! - [`matrix`], [`matrix_file`], [`scenarios`], [`source`]: where the preference matrix comes from;
//! - [`environment`]: what answers a duel: a preference-matrix draw ([`environment`]) or a
//!   simulated user clicking on an interleaving of two feature rankers' lists
//!   ([`click_environment`], from LETOR data prepared by [`letor_source`]);
//! - [`feedback`]: immediate, delayed or batched outcomes;
//! - [`regret`], [`checkpoints`], [`runner`]: one run and what it records;
//! - [`seeds`], [`simulation`]: many runs in parallel, reproducible whatever the thread count;
//! - [`summary`], [`plot`], [`cli`]: the report, its CSV, its figures and `joust simulate`;
//! - [`clicks`], [`letor`], [`synthetic`], [`prefmatrix`], [`prefmatrix_cli`]: simulated users
//!   clicking on interleaved feature rankings of learning-to-rank data.

pub mod checkpoints;
pub mod cli;
pub mod click_environment;
pub mod clicks;
pub mod environment;
pub mod feedback;
pub mod letor;
pub mod letor_source;
pub mod matrix;
pub mod matrix_file;
pub mod multi_runner;
pub mod plot;
pub mod plot_users;
pub mod prefmatrix;
pub mod prefmatrix_cli;
pub mod regret;
pub mod runner;
pub mod scenarios;
pub mod seeds;
pub mod simulation;
pub mod source;
pub mod summary;
pub mod synthetic;
pub mod thread_clock;
pub mod user_measures;

pub use matrix::PrefMatrix;
pub use regret::{Regret, RegretKind};
pub use simulation::Simulation;
pub use summary::Summary;
