//! Request ids: a random per-process prefix and a counter. Unique across replicas (with
//! overwhelming probability) and far cheaper than a random UUID per request. While a request is
//! handled its id is also at hand ([`current`]), so that a 500 can name the log line of its cause.

use axum::http::{HeaderValue, Request};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::task::futures::TaskLocalFuture;
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
        // Written into a buffer on the stack: `format!` costs an allocation per request more.
        let mut buf = [0u8; 12 + 1 + 16];
        let prefix = self.prefix.as_bytes();
        buf[..prefix.len()].copy_from_slice(prefix);
        buf[prefix.len()] = b'-';
        let digits = (64 - n.leading_zeros()).div_ceil(4).max(1) as usize;
        let start = prefix.len() + 1;
        for i in 0..digits {
            let nibble = (n >> (4 * (digits - 1 - i))) & 0xf;
            buf[start + i] = b"0123456789abcdef"[nibble as usize];
        }
        HeaderValue::from_bytes(&buf[..start + digits])
            .ok()
            .map(RequestId::new)
    }
}

tokio::task_local! {
    static CURRENT: Option<HeaderValue>;
}

/// Runs `handling` with `id` as the current request id (a named future type, so the access log
/// can hold it without boxing).
pub fn within<F: Future>(
    id: Option<HeaderValue>,
    handling: F,
) -> TaskLocalFuture<Option<HeaderValue>, F> {
    CURRENT.scope(id, handling)
}

/// The id of the request being handled, if any.
pub fn current() -> Option<String> {
    CURRENT
        .try_with(|id| id.as_ref()?.to_str().ok().map(str::to_owned))
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_the_prefix_and_a_hex_counter() {
        let mut ids = SequentialIds::default();
        let request = Request::new(());
        let prefix = ids.prefix.clone();
        for n in [0u64, 1, 15, 16, 255, 4096, u64::MAX] {
            ids.next.store(n, Ordering::Relaxed);
            let id = ids.make_request_id(&request).unwrap();
            assert_eq!(
                id.header_value().to_str().unwrap(),
                format!("{prefix}-{n:x}")
            );
        }
    }
}
