//! Learning-to-rank data and simulated users: LETOR files and synthetic data sets, one ranker per
//! feature, click models, the click environment behind `joust simulate --letor`, and the
//! estimate of a preference matrix from clicks behind `joust prefmatrix`.

mod click_environment;
mod click_models;
mod feature_rankers;
mod letor_data;
mod letor_plan;
mod matrix_estimate;
mod synthetic;
mod user_measures;

pub use click_environment::ClickEnvironment;
pub use click_models::ClickModel;
pub use feature_rankers::{FeatureRankers, ranker_names};
pub use letor_data::{LIST_LEN, LetorData};
pub use letor_plan::LetorPlan;
pub use matrix_estimate::{Estimation, estimate_matrix};
pub use synthetic::{SyntheticSpec, synthetic_letor};
