//! `"units"` of the experiment view: how duel requests naming a unit are treated.

use serde_json::{Value, json};

use crate::engine::Snapshot;

pub fn units(s: &Snapshot) -> Value {
    json!({
        "window_seconds": s.units.window_seconds,
        "aggregation": s.units.aggregation.as_str(),
    })
}
