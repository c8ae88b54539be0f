//! Running joust: the embedded Postgres, startup errors, durability and replicas, database outages,
//! connection limits, logs, outcome retention, the memory budget, heavy work beside light requests,
//! and the compose and Docker configuration.
//!
//! One binary, so one embedded Postgres, for the group: `cargo test --release --test operations`.

#[path = "../helpers/mod.rs"]
#[allow(dead_code)]
mod helpers;

mod compose_config;
mod connections;
mod database_outage;
mod durability;
mod embedded_postgres;
mod heavy_work;
mod logs;
mod memory_budget;
mod outcome_retention;
mod startup_errors;
