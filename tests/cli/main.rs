//! The command line through the binary: `joust simulate`, `joust grid`, `joust prefmatrix`, and every shell
//! example of the docs run as pasted.
//!
//! One binary, so one embedded Postgres, for the group: `cargo test --release --test cli`.

#[path = "../helpers/mod.rs"]
#[allow(dead_code)]
mod helpers;

mod docs_examples;
mod grid;
mod prefmatrix;
mod simulate;
mod simulate_multileave;
