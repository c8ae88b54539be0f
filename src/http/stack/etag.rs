//! Conditional GETs: the read endpoints tag each answer with an `ETag` derived from the state
//! version, and answer `304 Not Modified` with no body when the client already has it. A
//! dashboard polling an unchanged experiment then costs neither JSON encoding nor a champion
//! computation.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// A strong entity tag, quoted as HTTP wants it.
pub struct ETag(String);

impl ETag {
    /// A tag from the parts that determine an answer (e.g. experiment id, version).
    pub fn of(parts: std::fmt::Arguments<'_>) -> ETag {
        ETag(format!("\"{parts}\""))
    }

    /// A short tag for answers determined by many parts (a page of experiments): their FNV-1a
    /// hash, which is the same on every replica.
    pub fn hashed(parts: impl IntoIterator<Item = i64>) -> ETag {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for part in parts {
            for b in part.to_le_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
        ETag(format!("\"{h:016x}\""))
    }

    /// Whether `If-None-Match` names this tag (or is `*`). Weak comparison, as RFC 9110 asks
    /// for `If-None-Match`: a `W/` prefix is ignored.
    pub fn matches(&self, headers: &HeaderMap) -> bool {
        headers
            .get_all(header::IF_NONE_MATCH)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .any(|t| t == "*" || t.strip_prefix("W/").unwrap_or(t) == self.0)
    }

    /// `304 Not Modified` when the client has this version; otherwise the answer `body` builds.
    pub fn respond(self, headers: &HeaderMap, body: impl FnOnce() -> Response) -> Response {
        if self.matches(headers) {
            self.tagged(StatusCode::NOT_MODIFIED.into_response())
        } else {
            self.tagged(body())
        }
    }

    /// Adds the tag to an answer. `no-cache` makes browsers and proxies revalidate every poll.
    pub fn tagged(self, mut response: Response) -> Response {
        let value = HeaderValue::from_str(&self.0).expect("tags are ASCII");
        let h = response.headers_mut();
        h.insert(header::ETAG, value);
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(inm: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::IF_NONE_MATCH, HeaderValue::from_str(inm).unwrap());
        h
    }

    #[test]
    fn matches_listed_weak_and_any_tags_only() {
        let tag = ETag::of(format_args!("e1-v2"));
        assert!(tag.matches(&with("\"e1-v2\"")));
        assert!(tag.matches(&with("W/\"e1-v2\"")));
        assert!(tag.matches(&with("\"x\", \"e1-v2\"")));
        assert!(tag.matches(&with("*")));
        assert!(!tag.matches(&with("\"e1-v3\"")));
        assert!(!tag.matches(&HeaderMap::new()));
        assert_ne!(ETag::hashed([1, 2]).0, ETag::hashed([2, 1]).0);
    }
}
