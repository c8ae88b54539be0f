//! Running a simulation: what answers a duel (`environment`), how late outcomes reach the
//! policy (`feedback_timing`), one run and what it records (`duel_run`,
//! `multileave_run`, `checkpoints`, `decision_limit`, `thread_clock`, `regret`, `regret_limit`), and many runs in
//! parallel, reproducible whatever the thread count (`seeds`, `simulation`).

mod checkpoints;
pub mod conversions;
mod decision_limit;
mod decision_options;
mod duel_run;
mod environment;
mod feedback_timing;
mod multileave_run;
mod regret;
mod regret_limit;
mod run_record;
mod seeds;
mod simulation;
mod thread_clock;

pub use decision_limit::DecisionLimit;
pub use decision_options::{DECISION_KEYS, split_decision};
pub(crate) use duel_run::new_state;
pub use environment::{Environment, Outcome};
pub use feedback_timing::{FeedbackQueue, FeedbackTiming};
pub use regret::{Regret, RegretKind};
pub use regret_limit::regret_rate;
pub use run_record::RunRecord;
pub use seeds::run_seed;
pub use simulation::{DuelSource, Simulation};
