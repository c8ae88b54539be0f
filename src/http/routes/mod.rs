//! The handlers, one module per resource of the API. Each parses its request, checks the key's
//! scope, calls one engine method and renders the answer with `views`.

pub mod clicks;
pub mod clock;
pub mod conversions;
pub mod duels;
pub mod experiments;
pub mod export;
pub mod health;
pub mod history;
pub mod interleavings;
pub mod keys;
pub mod outcomes;
pub mod projects;
