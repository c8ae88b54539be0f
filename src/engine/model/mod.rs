//! One experiment as data: the cached snapshot of its settings and state at one version, what
//! is derived from it once per version (champion, decision, estimates, per-metric verdicts),
//! the result of one query, segment counts, and the signed tokens a duel carries.

mod derived;
mod export_cursor;
mod metric_verdicts;
mod pair_results;
mod segment_counts;
mod segment_verdicts;
mod snapshot;
mod token;

pub use derived::MAX_MATRIX_RANKERS;
pub use export_cursor::ExportCursor;
pub use metric_verdicts::{agree, verdicts};
pub use pair_results::{SetResult, TIE};
pub use segment_counts::SegmentCells;
pub use segment_verdicts::{SegmentVerdict, segment_verdicts};
pub use snapshot::{PersistedPolicy, Snapshot, VersionTag, tie_rule_str, update_rng};
pub use token::{DuelClaims, DuelRankers, InterleavingClaims, TokenSigner, UNIT_HASH_LEN};
