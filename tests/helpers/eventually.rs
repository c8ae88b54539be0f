//! Waiting for something the server does on its own clock (a flush, a history point, a pruning
//! pass): poll for the condition rather than sleep for as long as the clock might take.

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `condition` every 20 ms until it holds; panics, naming `what`, if it still does not
/// after `deadline`.
pub async fn eventually<F, Fut>(what: &str, deadline: Duration, mut condition: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let until = Instant::now() + deadline;
    loop {
        if condition().await {
            return;
        }
        assert!(Instant::now() < until, "{what}: not within {deadline:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
