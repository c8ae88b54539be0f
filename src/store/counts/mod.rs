//! The count tables of an experiment: each metric's win and tie counts, each segment's (with
//! the segment labels), the unit-level votes and wins, all added by one upsert (`upsert`) and
//! read back together in one statement (`cells`).

pub mod cells;
pub mod metrics;
pub mod segments;
pub mod unit_votes;
pub mod upsert;
