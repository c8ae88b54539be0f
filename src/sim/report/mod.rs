//! The simulation report: `summary.json`, `curves.csv` and the figures.

mod figure;
mod plot;
mod plot_decisions;
mod plot_users;
mod summary;

pub use plot::write_plots;
pub use summary::{LetorSummary, PolicySummary, RankerNdcg, Summary, Timing};
