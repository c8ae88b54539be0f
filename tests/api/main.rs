//! The HTTP API against a real server and Postgres: experiments, duels and outcomes, the OpenAPI
//! document, history and ETags, interleavings and clicks, multi-ranker queries, monitoring, the
//! dashboard in a browser, and convergence driven over HTTP.
//!
//! One binary, so one embedded Postgres, for the group: `cargo test --release --test api`.

#[path = "../helpers/mod.rs"]
#[allow(dead_code)]
mod helpers;

mod apply_pause;
mod browser_clicks;
mod convergence;
mod dashboard_browser;
mod decisions;
mod experiments;
mod export;
mod history_and_etags;
mod interleavings_and_clicks;
mod metrics_and_conversions;
mod metrics_browser;
mod monitoring;
mod multi_ranker;
mod openapi;
mod projects;
mod protocol_errors;
mod segments_browser;
mod units_and_segments;
mod webhook_delivery;
mod webhook_egress;
mod webhooks_https;
