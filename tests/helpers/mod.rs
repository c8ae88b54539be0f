//! What the test binaries share. Each binary includes this folder whole (`#[path]` in its
//! `main.rs`), so a helper one binary does not use is dead code there: hence the `allow` on the
//! `mod helpers` lines.

/// Headless Chromium driven through chromedriver, for the dashboard's tests.
pub mod browser;
/// Polling for a condition with a deadline, instead of sleeping for a fixed time.
pub mod eventually;
/// Heavy requests on a large experiment beside a light client.
pub mod heavy_load;
/// A joust server in the test process on a fresh database, and a client for its API.
pub mod http_server;
/// A policy run against a preference matrix, with immediate or delayed, batched feedback.
pub mod policy_run;
/// The embedded Postgres shared by one test binary, and a fresh database per test.
pub mod postgres;
/// `joust serve` as a child process.
pub mod process;
/// The bytes a policy state holds, counted by a global allocator.
pub mod state_memory;
