//! Simulation: policies against preference matrices or simulated users, as the papers evaluate
//! them; behind `joust simulate`, `joust prefmatrix` and `joust letor-gen`.
//!
//! - `matrix`: where a preference matrix comes from (files, built-in scenarios) and the one
//!   each run plays on;
//! - `letor`: learning-to-rank data, feature rankers, click models, the click environment and
//!   the estimate of a preference matrix from clicks;
//! - `run`: one run and many runs in parallel, reproducible whatever the thread count;
//! - `report`: the summary, its CSV and its figures;
//! - `units`: units with heavy-tailed query counts, and segments with different winners.

pub mod grid;
mod letor;
mod matrix;
mod report;
mod run;
pub mod units;

pub use letor::{
    ClickModel, Estimation, FeatureRankers, LIST_LEN, LetorData, LetorPlan, SyntheticSpec,
    estimate_matrix, ranker_names, synthetic_letor,
};
pub use matrix::families::FAMILIES as MATRIX_FAMILIES;
pub use matrix::{MatrixPlan, PrefMatrix, matrix_text, resolve_matrix, scenarios};
pub use report::{DecisionRatios, Quantiles, Summary, ratio_text, write_plots};
pub use run::conversions;
pub use run::{
    DECISION_KEYS, DuelSource, FeedbackQueue, FeedbackTiming, Regret, RegretKind, Simulation,
    run_seed, split_decision,
};
