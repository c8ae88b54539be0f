//! The `joust simulate` and `joust prefmatrix` commands through the binary.
//!
//! One binary, so one embedded Postgres, for the group: `cargo test --release --test cli`.

#[path = "../helpers/mod.rs"]
#[allow(dead_code)]
mod helpers;

mod prefmatrix;
mod simulate;
mod simulate_multileave;
