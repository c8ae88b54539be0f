//! Decisions with a guarantee: anytime-valid confidence sequences per pair
//! ([`confidence`]), the decision they support ([`verdict`]), and the confirmation layer that
//! gathers the evidence a decision lacks over any policy ([`layer`], counted by [`tracker`]).
//! Pure: no I/O, no async.

mod beaters;
mod confidence;
mod layer;
mod row_minima;
mod settings;
mod tracker;
mod verdict;

pub use confidence::Boundary;
pub use layer::DecisionLayer;
pub use settings::{DEFAULT_DELTA, DEFAULT_MAX_CONFIRMATION_SHARE, DecisionSettings};
pub use tracker::KEPT_BOUNDS;
pub use verdict::{Contender, Decision, DecisionKind, MissingEvidence, decide};
