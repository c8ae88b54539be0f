//! Webhooks: an experiment may register a URL that receives its decision events (`decided`,
//! `champion_changed`, `concluded`) as signed JSON.
//!
//! - [`setting`]: the `webhook` setting of an experiment and its validation.
//! - [`egress`]: which addresses events may be posted to (public ones, and the networks the
//!   operator allows), checked on the address connected to.
//! - [`signature`]: the HMAC-SHA256 signature header a receiver verifies.
//! - [`client`]: the HTTP(S) client that posts them, and the private CAs it may trust.
//! - [`delivery`]: the background task that posts pending events from the outbox, with retries,
//!   exponential backoff and jitter.
//!
//! Events are written into the outbox (`webhook_deliveries`) by
//! `apply::decision_events` in the transaction of the change that caused them, so an event
//! exists exactly when its change committed, and delivery never runs on a request's path.

pub mod client;
pub mod delivery;
pub mod egress;
pub mod receivers;
pub mod setting;
pub mod signature;

pub use client::TrustedRoots;
pub use delivery::RetryPolicy;
pub use egress::{Egress, NameLookup};
pub use receivers::Limits as DeliveryLimits;
