//! The dueling-bandit policies against preference matrices: each family's papers' scenarios with
//! immediate and delayed feedback, state properties, multi-dueling, and each policy's memory
//! estimate.
//!
//! One binary, so one embedded Postgres, for the group: `cargo test --release --test policies`.

#[path = "../helpers/mod.rs"]
#[allow(dead_code)]
mod helpers;

mod auto_version_4;
mod filter_beat_the_mean_rmed_rex3;
mod memory_estimate;
mod multi_dueling;
mod rucb_and_dts;
mod sparring_and_reductions;
