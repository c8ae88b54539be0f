//! What one replica keeps running beside the requests: the snapshot cache and its refresh from
//! the database, the database's health, the service clock, the retention pruner, the memory
//! budget, the origins and segment labels it knows, the API keys stored, the reach of the request
//! being handled, and the pool for CPU-heavy work.

mod cache;
mod clock;
mod db_health;
mod key_ring;
mod memory_budget;
mod offload;
mod origins;
mod reach;
mod refresh;
mod retention;
mod segment_labels;

pub use cache::Cache;
pub use clock::{Clock, MAX_OFFSET_SECS, now_ms};
pub use db_health::{DbHealth, observe, probe_loop};
pub use key_ring::{KEY_REFRESH, KeyGrant, KeyHash, KeyRing, key_hash, key_refresh_loop};
pub use memory_budget::{DEFAULT_BUDGET_BYTES, check as check_memory_budget};
pub use offload::cpu as offload;
pub use origins::OriginRegistry;
pub use reach::Reach;
pub use refresh::refresh_loop;
pub use retention::{Retention, spawn as spawn_retention};
pub use segment_labels::SegmentLabels;
