//! Request ids: a random per-process prefix and a counter. Unique across replicas (with
//! overwhelming probability) and far cheaper than a random UUID per request. While a request is
//! handled its id is also at hand ([`current`]), so that a 500 can name the log line of its cause.

use axum::http::{HeaderValue, Request};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tower_http::request_id::{MakeRequestId, RequestId};

#[derive(Clone)]
pub struct SequentialIds {
    prefix: Arc<str>,
    next: Arc<AtomicU64>,
}

impl Default for SequentialIds {
    fn default() -> Self {
        SequentialIds {
            prefix: format!("{:012x}", rand::random::<u64>() >> 16).into(),
            next: Arc::default(),
        }
    }
}

impl MakeRequestId for SequentialIds {
    fn make_request_id<B>(&mut self, _: &Request<B>) -> Option<RequestId> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        HeaderValue::from_str(&format!("{}-{n:x}", self.prefix))
            .ok()
            .map(RequestId::new)
    }
}

tokio::task_local! {
    static CURRENT: Option<HeaderValue>;
}

/// Runs `handling` with `id` as the current request id.
pub async fn within<F: Future>(id: Option<HeaderValue>, handling: F) -> F::Output {
    CURRENT.scope(id, handling).await
}

/// The id of the request being handled, if any.
pub fn current() -> Option<String> {
    CURRENT
        .try_with(|id| id.as_ref()?.to_str().ok().map(str::to_owned))
        .ok()
        .flatten()
}
