//! Running joust: the embedded Postgres, how an application commits, reading many experiments'
//! rows at once, checkpoints of held applications, startup errors, durability and replicas,
//! ownership moving when a replica dies, database outages (and the applications a crash of
//! Postgres loses), connection limits, logs, outcome retention, the memory budget, heavy work
//! beside light requests, one experiment's application beside another's outcomes, TLS to
//! Postgres and HTTPS serving, and the compose and Docker configuration.
//!
//! One binary, so one embedded Postgres, for the group: `cargo test --release --test operations`.

#[path = "../helpers/mod.rs"]
#[allow(dead_code)]
mod helpers;

mod application_commit;
mod apply_isolation;
mod apply_reads;
mod checkpoints;
mod compose_config;
mod connections;
mod database_outage;
mod durability;
mod embedded_postgres;
mod heavy_work;
mod logs;
mod lost_application;
mod memory_budget;
mod outcome_retention;
mod ownership;
mod startup_errors;
mod tls;
