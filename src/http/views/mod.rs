//! The JSON answers: an experiment's views (its detail, decision, metrics, units, segments and
//! history), rendered from what the engine computed, and the hot paths' answers written
//! straight into one buffer.

pub mod answer;
pub mod batch_answer;
pub mod decision;
pub mod detail_body;
pub mod experiment;
pub mod metrics;
pub mod segments;
pub mod timestamp;
pub mod units;
