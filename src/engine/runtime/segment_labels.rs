//! Each experiment's segment labels known to this replica (label -> index), so that a duel
//! naming a known label writes nothing.

use std::collections::HashMap;
use std::sync::Mutex;

/// Each experiment's labels known to this replica: label -> index.
#[derive(Default)]
pub struct SegmentLabels {
    known: Mutex<HashMap<i64, HashMap<String, u16>>>,
}

impl SegmentLabels {
    pub fn get(&self, experiment: i64, label: &str) -> Option<u16> {
        let known = self.known.lock().expect("segment labels lock");
        known.get(&experiment)?.get(label).copied()
    }

    pub fn merge(&self, experiment: i64, labels: &[(i16, String)]) {
        let mut known = self.known.lock().expect("segment labels lock");
        let map = known.entry(experiment).or_default();
        for (i, l) in labels {
            map.insert(l.clone(), *i as u16);
        }
    }
}
