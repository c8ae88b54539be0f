//! Projects and API keys: `POST/GET /v1/projects`, `POST/GET /v1/keys`,
//! `DELETE /v1/keys/{key_id}`.

use serde::{Deserialize, Serialize};

use super::non_null::non_null;

/// What a key may do: `admin` everything within its reach, `ingest` ask for duels and post
/// outcomes, clicks and conversions, `read` read experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyScope {
    Admin,
    Ingest,
    Read,
}

impl KeyScope {
    pub fn parse(s: &str) -> Option<KeyScope> {
        match s {
            "admin" => Some(KeyScope::Admin),
            "ingest" => Some(KeyScope::Ingest),
            "read" => Some(KeyScope::Read),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            KeyScope::Admin => "admin",
            KeyScope::Ingest => "ingest",
            KeyScope::Read => "read",
        }
    }
}

/// `POST /v1/projects`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateProject {
    pub name: String,
}

/// A project as answered.
#[derive(Debug, Serialize)]
pub struct ProjectView {
    pub id: i64,
    pub name: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

/// `POST /v1/keys`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateKey {
    pub scope: KeyScope,
    /// The project's name; omitted: the caller's project, or a global key for a global caller.
    #[serde(default, deserialize_with = "non_null")]
    pub project: Option<String>,
    /// A label for people (who holds the key).
    #[serde(default, deserialize_with = "non_null")]
    pub name: Option<String>,
    /// When the key stops working; omitted: never.
    #[serde(default, deserialize_with = "non_null")]
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// A key as listed: never its secret.
#[derive(Debug, Serialize)]
pub struct KeyView {
    pub id: i64,
    pub prefix: String,
    /// The project's name; `None` for a global key.
    pub project: Option<String>,
    pub scope: KeyScope,
    pub name: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
    pub revoked_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// A key just created: the only answer that carries the key itself.
#[derive(Debug, Serialize)]
pub struct CreatedKey {
    #[serde(flatten)]
    pub view: KeyView,
    pub key: String,
}
