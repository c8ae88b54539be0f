//! CPU-heavy work off the async runtime's workers.
//!
//! Selecting a pair with some policies, building a champion report and (de)serialising a state
//! grow with the number of rankers K (up to O(K^2): seconds for a 10,000-ranker experiment). On
//! an async worker that time would stall every other request queued on it, health checks and
//! other tenants' duels included. So the work of a large experiment runs on tokio's blocking pool,
//! whose threads the OS schedules beside the workers. Small experiments stay inline: handing work
//! to another thread costs more than selecting among a few dozen rankers.

/// Experiments with more rankers than this do their heavy work on the blocking pool. At 64, every
/// duel of the benchmark's 136-ranker MergeDTS experiment went through the pool and duels/s fell
/// to 0.44x (benches/bench-http against the previous release, same session); 256 keeps such
/// experiments inline while a 256-ranker O(K^2) selection still takes only a few milliseconds.
pub const INLINE_MAX_RANKERS: usize = 256;

/// Runs `work` for an experiment of `rankers` rankers: inline when it is small, else on the
/// blocking pool. A panic in `work` propagates to the caller as if it had run inline.
pub async fn cpu<T, F>(rankers: usize, work: F) -> T
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    if rankers <= INLINE_MAX_RANKERS {
        return work();
    }
    match tokio::task::spawn_blocking(work).await {
        Ok(value) => value,
        Err(e) => match e.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            // Only when the runtime itself is shutting down.
            Err(e) => panic!("blocking work was cancelled: {e}"),
        },
    }
}
