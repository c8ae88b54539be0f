//! The mathematics and data structures the policies share: Beta sampling and tails, confidence
//! bounds, Bernoulli relative entropy, the normal CDF, argmax helpers, tables of pairwise duels, upper Copeland scores, Thompson argmax
//! sampling and the batch tournament of the Merge policies. Nothing here is a policy.

pub mod argbest;
pub mod beta;
pub mod beta_tail;
pub mod cached;
pub mod duel_table;
pub mod kl;
pub mod normal;
pub mod thompson_argmax;
pub mod tournament;
pub mod ucb;
pub mod upper_copeland;

pub use tournament::Tournament;
pub use ucb::ucb;
