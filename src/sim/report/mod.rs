//! The simulation report: `summary.json`, `curves.csv` and the figures.

mod decision_ratios;
mod figure;
mod plot;
mod plot_decisions;
mod plot_users;
mod regret_bound;
mod summary;

pub use decision_ratios::{DecisionRatios, Quantiles, ratio_text};
pub use plot::write_plots;
pub use summary::{LetorSummary, PolicySummary, RankerNdcg, Summary, Timing};
