//! Segments on the request path: the index of a duel request's label, registering a new label
//! once (one short transaction that enforces the experiment's `max_segments` across replicas);
//! later duels find it in memory (the replica's segment labels), so the duel path writes nothing.

use crate::engine::settings::{check_label, limit_reached};
use crate::engine::{Engine, EngineError};
use crate::store::counts::segments::{self as store_segments, Registered};

impl Engine {
    /// The index of the experiment's segment `label`, registering a new label if the
    /// experiment has room for it; a label beyond `max_segments` is refused and registers
    /// nothing.
    pub(super) async fn segment_index(
        &self,
        experiment: i64,
        label: &str,
    ) -> Result<u16, EngineError> {
        check_label(label)?;
        if let Some(i) = self.segment_labels.get(experiment, label) {
            return Ok(i);
        }
        self.require_db()?;
        let result = store_segments::register(&self.pool, experiment, label)
            .await
            .map_err(EngineError::from);
        match self.observe(result)? {
            Registered::Known(i, labels) => {
                self.segment_labels.merge(experiment, &labels);
                Ok(i as u16)
            }
            Registered::Full(max) => Err(limit_reached(label, max)),
            Registered::NoExperiment => Err(EngineError::UnknownExperiment(experiment)),
        }
    }
}
