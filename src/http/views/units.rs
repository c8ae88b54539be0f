//! `"units"` of the experiment view: how duel requests naming a unit are treated and, for an
//! experiment that aggregates by unit, how much unit-level evidence its champion and decision
//! read (each unit's first decisive comparison of a pair, counted once).

use serde_json::{Value, json};

use crate::engine::Snapshot;

pub fn units(s: &Snapshot) -> Value {
    json!({
        "window_seconds": s.units.window_seconds,
        "aggregation": s.units.aggregation.as_str(),
        "votes_counted": s.unit_wins.as_ref().map(|w| w.total_wins()),
    })
}
