//! Preference matrices: the matrix itself, its file format, the built-in scenarios of the papers,
//! and the matrix every run plays on (`--matrix`, optionally `--subset`).

pub mod families;
mod matrix_file;
mod matrix_plan;
mod preference_matrix;
pub mod scenarios;

pub use matrix_file::matrix_text;
pub use matrix_plan::{MatrixPlan, resolve_matrix};
pub use preference_matrix::PrefMatrix;
