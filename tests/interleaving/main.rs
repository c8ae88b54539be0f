//! Interleaving and multileaving methods: hand-worked cases, fidelity under clicks that do not
//! depend on the documents, and options.
//!
//! One binary, so one embedded Postgres, for the group: `cargo test --release --test interleaving`.

#[path = "../helpers/mod.rs"]
#[allow(dead_code)]
mod helpers;

mod fidelity;
mod methods;
mod multileave;
