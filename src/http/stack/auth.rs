//! API keys. A key is `admin` (everything within its reach), `ingest` (duels, interleavings,
//! outcomes, clicks, conversions) or `read` (reads of experiments); it reaches one project's
//! experiments, or every project's for a global key. Keys come from two places:
//!
//! - configured: `--api-keys`/`JOUST_API_KEYS` or `--api-keys-file`, as `scope:key` pairs
//!   separated by commas or lines; these are global keys;
//! - stored: made through `POST /v1/keys` or `joust keys create`, kept in Postgres as hashes
//!   with a project, a scope and an expiry (`engine::KeyRing`).
//!
//! With no key configured and none ever stored the API is open, which `joust serve` allows only
//! on a loopback address.
//!
//! The front layer ([`super::front`]) identifies the request's key once, before routing: it
//! names the key in the access log, runs the request within the key's reach
//! ([`crate::engine::Reach`]: the engine answers another project's experiment as unknown), and
//! leaves the [`Identified`] caller in the request for the extractors below, one of which every
//! API handler starts with. They check the scope and, on every route under
//! `/v1/experiments/{id}`, that the experiment is the key's project's: a route added there is
//! checked without a line of its own.

use axum::extract::{FromRequestParts, MatchedPath};
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderMap};
use std::collections::HashMap;
use std::sync::Arc;

use super::error::ApiError;
use crate::api::ErrorCode;
use crate::engine::{Engine, EngineError, KeyHash, KeyRing, Reach, key_hash};
use crate::http::AppState;

pub use crate::api::KeyScope as Scope;

/// The entropy a configured key must have at least, by [`estimated_bits`].
pub const MIN_KEY_BITS: f64 = 128.0;

/// Which key a request came with, as the access log names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyLabel {
    /// No key: the server is open.
    Open,
    /// The n-th configured key (from 1).
    Configured(usize),
    /// A stored key, by its id.
    Stored(i64),
}

impl std::fmt::Display for KeyLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyLabel::Open => f.write_str("open"),
            KeyLabel::Configured(n) => write!(f, "config-{n}"),
            KeyLabel::Stored(id) => write!(f, "{id}"),
        }
    }
}

/// Who sent a request: its key, the key's scope and reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    pub key: KeyLabel,
    pub scope: Scope,
    pub reach: Reach,
}

impl Caller {
    const OPEN: Caller = Caller {
        key: KeyLabel::Open,
        scope: Scope::Admin,
        reach: Reach::All,
    };

    /// Refuses a caller whose scope is neither `needed` nor admin.
    pub fn require(&self, needed: Scope) -> Result<(), ApiError> {
        if self.scope == Scope::Admin || self.scope == needed {
            return Ok(());
        }
        Err(ApiError::new(
            ErrorCode::Forbidden,
            format!(
                "this key has scope `{}`; this request needs `{}`",
                self.scope.as_str(),
                needed.as_str()
            ),
        ))
    }
}

/// Why a request's key was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    NoKey,
    UnknownKey,
    Expired,
}

impl From<Refusal> for ApiError {
    fn from(r: Refusal) -> ApiError {
        let message = match r {
            Refusal::NoKey => "an API key is required: send `Authorization: Bearer KEY`",
            Refusal::UnknownKey => "unknown API key",
            Refusal::Expired => "this API key has expired",
        };
        ApiError::new(ErrorCode::Unauthorized, message)
    }
}

/// The front layer's finding about a request's key, left in its extensions.
#[derive(Debug, Clone, Copy)]
pub struct Identified(pub Result<Caller, Refusal>);

/// The configured keys, and whether `/metrics` needs a key.
#[derive(Clone, Default)]
pub struct ApiKeys {
    configured: HashMap<KeyHash, (usize, Scope)>,
    metrics_need_key: bool,
}

/// A rough count of a key's bits: its length times the bits of a character drawn from the
/// classes it uses (lower case, upper case, digits, other), or of twice its distinct characters
/// when that is fewer (so a key that repeats a few characters counts little). A floor against short or patterned keys, not a measure of
/// randomness: `joust keygen` makes keys of 256 random bits.
pub fn estimated_bits(key: &str) -> f64 {
    let mut alphabet = 0u32;
    if key.chars().any(|c| c.is_ascii_lowercase()) {
        alphabet += 26;
    }
    if key.chars().any(|c| c.is_ascii_uppercase()) {
        alphabet += 26;
    }
    if key.chars().any(|c| c.is_ascii_digit()) {
        alphabet += 10;
    }
    if key.chars().any(|c| !c.is_ascii_alphanumeric()) {
        alphabet += 32;
    }
    let distinct = key.chars().collect::<std::collections::HashSet<_>>().len() as u32;
    let per_char = f64::from(alphabet.min(distinct.max(1) * 2)).log2();
    key.chars().count() as f64 * per_char
}

/// The scopes only: neither a key nor its hash reaches a log through `{:?}`.
impl std::fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeys")
            .field(
                "scopes",
                &self
                    .configured
                    .values()
                    .map(|(_, s)| *s)
                    .collect::<Vec<_>>(),
            )
            .field("metrics_need_key", &self.metrics_need_key)
            .finish()
    }
}

impl ApiKeys {
    /// Parses `scope:key` pairs separated by commas or line breaks (blank lines and lines
    /// starting with `#` are skipped), refusing keys of less than [`MIN_KEY_BITS`].
    pub fn parse(text: &str) -> Result<ApiKeys, String> {
        let mut configured = HashMap::new();
        let items = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with('#'))
            .flat_map(|l| l.split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty());
        for item in items {
            let (scope, key) = item
                .split_once(':')
                .ok_or_else(|| "an API key entry is not of the form scope:key".to_string())?;
            let scope = Scope::parse(scope.trim()).ok_or_else(|| {
                format!("unknown API key scope `{scope}`; use admin, ingest or read")
            })?;
            let key = key.trim();
            if estimated_bits(key) < MIN_KEY_BITS {
                return Err(format!(
                    "an API key of scope {} is too weak (about {:.0} bits, at least {MIN_KEY_BITS} \
                     needed): make keys with `joust keygen`",
                    scope.as_str(),
                    estimated_bits(key)
                ));
            }
            let n = configured.len() + 1;
            configured.insert(key_hash(key), (n, scope));
        }
        Ok(ApiKeys {
            configured,
            metrics_need_key: false,
        })
    }

    /// These keys, with `/metrics` answered only to a global read or admin key when `needed`.
    pub fn with_metrics_key(mut self, needed: bool) -> ApiKeys {
        self.metrics_need_key = needed;
        self
    }

    pub fn metrics_need_key(&self) -> bool {
        self.metrics_need_key
    }

    /// Whether no key is configured.
    pub fn is_empty(&self) -> bool {
        self.configured.is_empty()
    }

    /// Whether the API is open: no key configured and none ever stored.
    pub fn is_open(&self, ring: &KeyRing) -> bool {
        self.configured.is_empty() && ring.none_stored()
    }

    /// The caller of a request with these headers.
    pub fn identify(&self, ring: &KeyRing, headers: &HeaderMap) -> Result<Caller, Refusal> {
        if self.is_open(ring) {
            return Ok(Caller::OPEN);
        }
        let key = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .ok_or(Refusal::NoKey)?;
        let hash = key_hash(key);
        if let Some(&(n, scope)) = self.configured.get(&hash) {
            return Ok(Caller {
                key: KeyLabel::Configured(n),
                scope,
                reach: Reach::All,
            });
        }
        let grant = ring.find(&hash).ok_or(Refusal::UnknownKey)?;
        if grant
            .expires_at_ms
            .is_some_and(|at| at <= chrono::Utc::now().timestamp_millis())
        {
            return Err(Refusal::Expired);
        }
        Ok(Caller {
            key: KeyLabel::Stored(grant.id),
            scope: grant.scope,
            reach: grant.project.map_or(Reach::All, Reach::Project),
        })
    }

    /// Whether the request presents a key at all (right or wrong).
    pub fn presented(headers: &HeaderMap) -> bool {
        headers.contains_key(axum::http::header::AUTHORIZATION)
    }
}

/// The caller of a request: as the front layer identified it, or identified now (a router
/// served without the front layer, as in unit tests).
pub fn caller(
    extensions: &Extensions,
    headers: &HeaderMap,
    app: &AppState,
) -> Result<Caller, ApiError> {
    match extensions.get::<Identified>() {
        Some(Identified(found)) => Ok((*found)?),
        None => Ok(app.keys.identify(app.engine.key_ring(), headers)?),
    }
}

/// On a route under `/v1/experiments/{id}`, refuses a caller of one project with the answer
/// for an experiment that does not exist unless the experiment is its project's.
async fn check_experiment(parts: &Parts, engine: &Engine, caller: &Caller) -> Result<(), ApiError> {
    let Reach::Project(project) = caller.reach else {
        return Ok(());
    };
    let under_experiment = parts
        .extensions
        .get::<MatchedPath>()
        .is_some_and(|p| p.as_str().starts_with("/v1/experiments/{id}"));
    if !under_experiment {
        return Ok(());
    }
    // Checked whatever the handler does with the id: one that is not a plain number is refused
    // here rather than left for the handler to read some other way.
    let id = parts
        .uri
        .path()
        .split('/')
        .nth(3)
        .and_then(|s| s.parse::<i64>().ok());
    let Some(id) = id else {
        return Err(ApiError::new(
            ErrorCode::UnknownExperiment,
            "no such experiment",
        ));
    };
    let snap = engine.snapshot(id).await?;
    if snap.project_id != project {
        return Err(EngineError::UnknownExperiment(id).into());
    }
    Ok(())
}

/// `GET /v1/key`: the scope, id and project of the presented key (`open` when the server has no
/// keys), so a dashboard shows only the actions the key allows.
pub async fn describe(
    axum::extract::State(app): axum::extract::State<Arc<AppState>>,
    parts: Parts,
) -> Result<axum::response::Response, ApiError> {
    use axum::response::IntoResponse;
    let caller = caller(&parts.extensions, &parts.headers, &app)?;
    let scope = match caller.key {
        KeyLabel::Open => "open",
        _ => caller.scope.as_str(),
    };
    let project = match caller.reach.project() {
        Some(p) => app.engine.project_name(p).await?,
        None => None,
    };
    let key_id = match caller.key {
        KeyLabel::Stored(id) => Some(id),
        _ => None,
    };
    Ok(axum::Json(serde_json::json!({
        "scope": scope,
        "key_id": key_id,
        "project": project,
    }))
    .into_response())
}

/// Declares an extractor that checks the request's key for a scope (and, under
/// `/v1/experiments/{id}`, for the experiment's project) and hands the handler the engine: every
/// API handler starts with one, so authorisation cannot be forgotten.
macro_rules! scoped_access {
    ($name:ident, $scope:expr, $doc:literal) => {
        #[doc = $doc]
        pub struct $name(pub Arc<Engine>);

        impl FromRequestParts<Arc<AppState>> for $name {
            type Rejection = ApiError;

            async fn from_request_parts(
                parts: &mut Parts,
                state: &Arc<AppState>,
            ) -> Result<Self, ApiError> {
                let caller = caller(&parts.extensions, &parts.headers, state)?;
                caller.require($scope)?;
                check_experiment(parts, &state.engine, &caller).await?;
                Ok($name(state.engine.clone()))
            }
        }
    };
}

scoped_access!(
    AdminAccess,
    Scope::Admin,
    "The engine, for a request with an admin key (any request when the API is open)."
);
scoped_access!(
    IngestAccess,
    Scope::Ingest,
    "The engine, for a request with an ingest or admin key."
);
scoped_access!(
    ReadAccess,
    Scope::Read,
    "The engine, for a request with a read or admin key."
);

#[cfg(test)]
mod tests {
    use super::*;

    const STRONG: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn parses_scoped_keys_and_refuses_bad_entries() {
        let keys = ApiKeys::parse(&format!("admin:{STRONG}, read:{STRONG}x")).unwrap();
        assert_eq!(keys.configured.len(), 2);
        let keys =
            ApiKeys::parse(&format!("# a file\nadmin:{STRONG}\n\nread:{STRONG}x\n")).unwrap();
        assert_eq!(keys.configured.len(), 2);
        assert!(ApiKeys::parse(&format!("root:{STRONG}")).is_err());
        assert!(ApiKeys::parse("admin:short").is_err());
        assert!(ApiKeys::parse(&format!("admin{STRONG}")).is_err());
        assert!(ApiKeys::parse("").unwrap().is_empty());
    }

    #[test]
    fn weak_keys_are_refused_and_generated_ones_pass() {
        // 16 characters passed once; they are at most about 100 bits.
        assert!(ApiKeys::parse("admin:aaaaaaaaaaaaaaaa").is_err());
        assert!(ApiKeys::parse("admin:admin-key-0123456789").is_err());
        assert!(ApiKeys::parse(&format!("admin:{}", "a".repeat(64))).is_err());
        assert!(ApiKeys::parse(&format!("admin:{}", crate::engine::new_key())).is_ok());
        // `joust keygen`'s 48 hex digits.
        assert!(estimated_bits("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822c") >= MIN_KEY_BITS);
    }
}
