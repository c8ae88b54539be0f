//! Every policy joust knows, one module each; [`super::registry`] collects them.

pub mod auto;
pub mod beat_the_mean;
pub mod copeland_sparring;
pub mod doubler;
pub mod dts;
pub mod interleaved_filter;
pub mod mdb;
pub mod merge_dts;
pub mod merge_rucb;
pub mod multi_sbm;
pub mod rex3;
pub mod rmed1;
pub mod rucb;
pub mod self_sparring;
pub mod single_armed;
pub mod sparring;
pub mod ucb_candidates;
pub mod uniform;

pub use dts::{Dts, DtsParams};
