//! The API's shapes, in one place: the request and answer bodies the engine takes and returns,
//! the error codes the service sends (with their HTTP statuses), and the JSON-reading helpers
//! that keep serde's messages in the API's words. Plain data: no engine logic and no I/O, so the
//! engine (which takes these bodies as its commands) and the HTTP layer (which reads and writes
//! them) both depend on it, and it on neither.

mod conversions;
mod duels;
mod error_code;
mod experiments;
mod export;
mod interleavings;
mod json_object;
mod json_words;
mod keys;
mod non_null;
mod outcomes;
pub mod rfc3339;
mod settings;

pub use conversions::{ConversionInput, ConversionRecord};
pub use duels::DuelRequest;
pub use error_code::ErrorCode;
pub use experiments::{CreateExperiment, PatchExperiment, Status};
pub use export::{
    ConversionExportRow, DEFAULT_EXPORT_LIMIT, ExportFormat, MAX_EXPORT_LIMIT, OUTCOME_CSV_HEADER,
    csv_field, json_text, write_json_str, write_time, write_uuid,
};
pub use interleavings::{ClickRecord, ClicksInput, InterleaveInput, ShownDocument};
pub use json_object::{Object, objects};
pub use json_words::in_json_words;
pub use keys::{CreateKey, CreateProject, CreatedKey, KeyScope, KeyView, ProjectView};
pub use outcomes::{OutcomeInput, OutcomeRecord, PairOutcome, Rank};
pub use settings::{
    Aggregation, BrowserClicks, DEFAULT_MAX_SEGMENTS, DEFAULT_WINDOW_SECONDS,
    DecisionSettingsInput, InterleavingSpec, MetricInput, SegmentSettings, StopRule, UnitSettings,
    Webhook,
};
