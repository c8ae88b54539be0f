//! Scoped API keys. `admin` keys may do everything; `ingest` keys ask for duels and post
//! outcomes; `read` keys read experiments. Keys are given to `joust serve` with `--api-keys`
//! (`JOUST_API_KEYS`), as `scope:key` pairs separated by commas; `joust keygen` prints a fresh
//! random key. With no keys configured the API is open, which `joust serve` allows only on a
//! loopback address.

use axum::extract::FromRequestParts;
use axum::http::HeaderMap;
use axum::http::request::Parts;
use std::collections::HashMap;
use std::sync::Arc;

use super::error::ApiError;
use crate::api::ErrorCode;
use crate::engine::Engine;
use crate::http::AppState;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    Admin,
    Ingest,
    Read,
}

impl Scope {
    fn parse(s: &str) -> Option<Scope> {
        match s {
            "admin" => Some(Scope::Admin),
            "ingest" => Some(Scope::Ingest),
            "read" => Some(Scope::Read),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Scope::Admin => "admin",
            Scope::Ingest => "ingest",
            Scope::Read => "read",
        }
    }
}

/// The configured keys.
#[derive(Clone, Default)]
pub struct ApiKeys {
    keys: HashMap<String, Scope>,
}

/// The scopes only: a key must not reach a log through `{:?}`.
impl std::fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.keys.values()).finish()
    }
}

impl ApiKeys {
    /// Parses `scope:key,scope:key`.
    pub fn parse(text: &str) -> Result<ApiKeys, String> {
        let mut keys = HashMap::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (scope, key) = item
                .split_once(':')
                .ok_or_else(|| format!("API key entry `{item}` is not of the form scope:key"))?;
            let scope = Scope::parse(scope.trim()).ok_or_else(|| {
                format!("unknown API key scope `{scope}`; use admin, ingest or read")
            })?;
            if key.len() < 16 {
                return Err(format!(
                    "API keys must be at least 16 characters (scope {})",
                    scope.name()
                ));
            }
            keys.insert(key.to_string(), scope);
        }
        Ok(ApiKeys { keys })
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The scope of the presented key; `None` when no keys are configured (the API is open).
    pub fn identify(&self, headers: &HeaderMap) -> Result<Option<Scope>, ApiError> {
        if self.keys.is_empty() {
            return Ok(None);
        }
        let presented = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        let Some(key) = presented else {
            return Err(ApiError::new(
                ErrorCode::Unauthorized,
                "an API key is required: send `Authorization: Bearer KEY`",
            ));
        };
        match self.keys.get(key) {
            None => Err(ApiError::new(ErrorCode::Unauthorized, "unknown API key")),
            Some(s) => Ok(Some(*s)),
        }
    }

    /// Whether the request presents a key at all (right or wrong).
    pub fn presented(headers: &HeaderMap) -> bool {
        headers.contains_key(axum::http::header::AUTHORIZATION)
    }

    /// Checks that the request's key has scope `needed` (any request when keys are not
    /// configured).
    pub fn check(&self, headers: &HeaderMap, needed: Scope) -> Result<(), ApiError> {
        match self.identify(headers)? {
            None | Some(Scope::Admin) => Ok(()),
            Some(s) if s == needed => Ok(()),
            Some(s) => Err(ApiError::new(
                ErrorCode::Forbidden,
                format!(
                    "this key has scope `{}`; this request needs `{}`",
                    s.name(),
                    needed.name()
                ),
            )),
        }
    }
}

/// `GET /v1/key`: the scope of the presented key (`open` when the server has no keys), so a
/// dashboard shows only the actions the key allows.
pub async fn describe(
    axum::extract::State(app): axum::extract::State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<axum::response::Response, ApiError> {
    use axum::response::IntoResponse;
    let scope = app.keys.identify(&headers)?.map_or("open", Scope::name);
    Ok(axum::Json(serde_json::json!({ "scope": scope })).into_response())
}

/// Declares an extractor that checks the request's key for a scope and hands the handler the
/// engine: every API handler starts with one, so authorisation cannot be forgotten.
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
                state.keys.check(&parts.headers, $scope)?;
                Ok($name(state.engine.clone()))
            }
        }
    };
}

scoped_access!(
    AdminAccess,
    Scope::Admin,
    "The engine, for a request with an admin key (any request when keys are not configured)."
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

    #[test]
    fn parses_scoped_keys_and_refuses_bad_entries() {
        let keys = ApiKeys::parse("admin:aaaaaaaaaaaaaaaa, read:bbbbbbbbbbbbbbbb").unwrap();
        assert_eq!(keys.keys.len(), 2);
        assert!(ApiKeys::parse("root:aaaaaaaaaaaaaaaa").is_err());
        assert!(ApiKeys::parse("admin:short").is_err());
        assert!(ApiKeys::parse("adminaaaaaaaaaaaaaaaa").is_err());
        assert!(ApiKeys::parse("").unwrap().is_empty());
    }
}
