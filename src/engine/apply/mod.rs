//! The owner's side: the replica that owns an experiment applies its acknowledged outcomes in
//! commit order, with the conversions, units, segments, decision events and history points that
//! come with them, each written application one transaction; most are held in memory and
//! written together at most once per checkpoint interval (`checkpoint`), many experiments' in one
//! statement (`checkpoint_writer`).

mod application;
mod checkpoint;
mod checkpoint_writer;
mod decision_events;
mod fetcher;
mod gatherer;
mod history;
mod metric_outcomes;
mod owners;
mod row_cells;
mod segment_counts;
mod unit_evidence;

pub use checkpoint::DEFAULT_CHECKPOINT_INTERVAL;
pub use decision_events::{after_patch, decision_events};
pub use history::{DEFAULT_INTERVAL as DEFAULT_HISTORY_INTERVAL, HistoryClock};
pub use owners::{DEFAULT_APPLY_PAUSE, Owners};
