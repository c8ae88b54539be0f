//! Request ids: a random per-process prefix and a counter. Unique across replicas (with
//! overwhelming probability) and far cheaper than a random UUID per request. A request that
//! arrives with an `x-request-id` keeps it (the front layer, [`super::front`]). While a request is
//! handled its id is also at hand ([`current`]), so that a 500 can name the log line of its cause.

use axum::http::HeaderValue;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::task::futures::TaskLocalFuture;

/// The process's request ids: one shared counter behind one reference count (the front layer is
/// cloned for every request).
#[derive(Clone)]
pub struct SequentialIds(Arc<Ids>);

struct Ids {
    prefix: String,
    next: AtomicU64,
}

impl Default for SequentialIds {
    fn default() -> Self {
        SequentialIds(Arc::new(Ids {
            prefix: format!("{:012x}", rand::random::<u64>() >> 16),
            next: AtomicU64::new(0),
        }))
    }
}

impl SequentialIds {
    /// The next id: the prefix, `-`, the counter in hex.
    pub fn next_id(&self) -> HeaderValue {
        let n = self.0.next.fetch_add(1, Ordering::Relaxed);
        // Written into a buffer on the stack: `format!` costs an allocation per request more.
        let mut buf = [0u8; 12 + 1 + 16];
        let prefix = self.0.prefix.as_bytes();
        buf[..prefix.len()].copy_from_slice(prefix);
        buf[prefix.len()] = b'-';
        let digits = (64 - n.leading_zeros()).div_ceil(4).max(1) as usize;
        let start = prefix.len() + 1;
        for i in 0..digits {
            let nibble = (n >> (4 * (digits - 1 - i))) & 0xf;
            buf[start + i] = b"0123456789abcdef"[nibble as usize];
        }
        HeaderValue::from_bytes(&buf[..start + digits]).expect("hex digits and a dash")
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
        let ids = SequentialIds::default();
        let prefix = ids.0.prefix.clone();
        for n in [0u64, 1, 15, 16, 255, 4096, u64::MAX] {
            ids.0.next.store(n, Ordering::Relaxed);
            let id = ids.next_id();
            assert_eq!(id.to_str().unwrap(), format!("{prefix}-{n:x}"));
        }
    }
}
