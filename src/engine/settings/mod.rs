//! Parsing and checking an experiment's settings, as a request gives them and as they are
//! stored, into what the engine computes with. The shapes themselves are the API's
//! (`crate::api`); their checks are here.

mod browser_clicks;
mod decision;
mod interleaving;
mod metrics;
mod segments;
mod stop_rule;
mod units;

pub use decision::from_stored as decision_from_stored;
pub use interleaving::InterleavingConfig;
pub use metrics::{
    CLICK, Credit, Metric, Metrics, Missing, add_cells, matrices as metric_matrices,
};
pub use segments::{check_label, limit_reached};
pub use units::check_unit_and_query;
