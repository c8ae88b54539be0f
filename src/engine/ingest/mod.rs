//! The acknowledgement: outcomes from every request queue to one writer per process, which
//! inserts them in groups, one commit each, and answers each request once its group is durable.
//! It reports what it acknowledged through a callback, so it knows nothing of who applies them.

mod connections;
mod fine_timer;
mod pace;
mod writer;

pub use writer::{PendingOutcome, Posting, WriteRequest, WriterHandle, Written, spawn};
