//! The engine's operations, one file per resource of the API. Each file is an `impl Engine`
//! block: check the request, read the cached snapshot, and either answer from it (duels,
//! interleavings) or hand the work on (outcomes to the ingest, changes to the database).

mod conversions;
mod duels;
mod experiments;
mod export;
mod export_priority;
mod health;
mod history;
mod interleavings;
mod keys;
mod outcomes;
mod segments;
mod telemetry;
mod unit_duels;

pub use conversions::{MAX_CONVERSION_BATCH, check_batch};
pub use duels::IssuedDuel;
pub use export::{ExportLabels, ExportPage, export_page, kind_name};
pub use history::MAX_POINTS;
pub use interleavings::IssuedInterleaving;
pub use keys::{KEY_MARK, new_key};
pub use outcomes::MAX_BATCH;
pub use telemetry::{DEFAULT_MAX_EXPERIMENTS, ExperimentCounters, MetricCounters};
pub use unit_duels::{UnitKey, WindowStates};
