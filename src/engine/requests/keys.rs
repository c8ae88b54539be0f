//! Projects and the API keys stored in Postgres: creating, listing and revoking them, within the
//! request's reach ([`Reach`]): a project's admin key manages its project's keys, a global admin
//! key every key and project.
//!
//! A key is `jk_` and 32 random bytes in base64url (256 bits); only its SHA-256 is stored. A fast
//! hash is enough here, unlike for passwords: a slow hash protects guessable secrets, and a
//! 256-bit random key cannot be guessed from its hash whatever the hash's speed, while a fast
//! hash keeps the check on every request at a fraction of a microsecond.

use base64::Engine as _;
use rand::Rng;

use crate::api::{CreateKey, CreatedKey, ErrorCode, KeyScope, KeyView, ProjectView};
use crate::engine::runtime::{Reach, key_hash};
use crate::engine::{Engine, EngineError};
use crate::store;
use crate::store::keys::{KeyRow, NewKey};
use crate::store::projects::{self, DEFAULT_PROJECT, ProjectRow};

/// What every generated key starts with, so that a key found in a file or a log is recognised.
pub const KEY_MARK: &str = "jk_";
/// Characters of a key shown in lists: the mark and 8 random characters (48 bits of 256).
pub const PREFIX_CHARS: usize = KEY_MARK.len() + 8;
/// Longest project or key name, in characters.
pub const MAX_LABEL_LEN: usize = 200;

/// A new random key: [`KEY_MARK`] and 32 random bytes in base64url.
pub fn new_key() -> String {
    let bytes: [u8; 32] = rand::rng().random();
    format!(
        "{KEY_MARK}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

fn unknown_project(name: &str) -> EngineError {
    EngineError::Missing {
        code: ErrorCode::UnknownProject,
        message: format!("there is no project named {name:?}"),
    }
}

fn check_label(what: &str, name: &str) -> Result<(), EngineError> {
    if name.chars().count() > MAX_LABEL_LEN || name.chars().any(char::is_control) {
        return Err(EngineError::invalid(
            ErrorCode::InvalidKey,
            format!("{what} must be at most {MAX_LABEL_LEN} characters without control characters"),
        ));
    }
    Ok(())
}

fn project_view(row: ProjectRow) -> ProjectView {
    ProjectView {
        id: row.id,
        name: row.name,
        created_at: row.created_at,
    }
}

fn key_view(row: KeyRow) -> Result<KeyView, EngineError> {
    Ok(KeyView {
        id: row.id,
        prefix: row.prefix,
        project: row.project,
        scope: KeyScope::parse(&row.scope).ok_or_else(|| {
            EngineError::internal(anyhow::anyhow!("key {}: scope {:?}", row.id, row.scope))
        })?,
        name: row.name,
        created_at: row.created_at,
        expires_at: row.expires_at,
        revoked_at: row.revoked_at,
    })
}

impl Engine {
    /// The project a new experiment or key named `name` goes to: the request's own project
    /// (which a name must then be), or for a global caller the named one, or the default one.
    pub(super) async fn project_for(&self, name: Option<&str>) -> Result<i64, EngineError> {
        let reach = Reach::current();
        let Some(name) = name else {
            return Ok(reach.project().unwrap_or(DEFAULT_PROJECT));
        };
        // A name no project can carry (Postgres text refuses NUL) is unknown without a query.
        if check_label("a project name", name).is_err() {
            return Err(unknown_project(name));
        }
        self.require_db()?;
        let row = self.observe(
            projects::by_name(&self.pool, name)
                .await
                .map_err(EngineError::from),
        )?;
        match row {
            Some(row) if reach.covers(row.id) => Ok(row.id),
            _ => Err(unknown_project(name)),
        }
    }

    /// Creates a project (a global admin's request only).
    pub async fn create_project(&self, name: &str) -> Result<ProjectView, EngineError> {
        if Reach::current() != Reach::All {
            return Err(EngineError::Forbidden(
                "only a global admin key creates projects".into(),
            ));
        }
        if name.trim().is_empty() {
            return Err(EngineError::invalid(
                ErrorCode::InvalidName,
                "a project name must not be blank",
            ));
        }
        check_label("a project name", name).map_err(|_| {
            EngineError::invalid(
                ErrorCode::InvalidName,
                "a project name must be at most 200 characters without control characters",
            )
        })?;
        self.require_db()?;
        let row = self.observe(
            projects::insert(&self.pool, name)
                .await
                .map_err(EngineError::from),
        )?;
        row.map(project_view).ok_or_else(|| {
            EngineError::conflict(
                ErrorCode::ProjectExists,
                format!("a project named {name:?} exists already"),
            )
        })
    }

    /// The projects the request reaches.
    pub async fn list_projects(&self) -> Result<Vec<ProjectView>, EngineError> {
        self.require_db()?;
        let rows = self.observe(
            projects::list(&self.pool, Reach::current().project())
                .await
                .map_err(EngineError::from),
        )?;
        Ok(rows.into_iter().map(project_view).collect())
    }

    /// The name of project `id`.
    pub async fn project_name(&self, id: i64) -> Result<Option<String>, EngineError> {
        self.require_db()?;
        let rows = self.observe(
            projects::list(&self.pool, Some(id))
                .await
                .map_err(EngineError::from),
        )?;
        Ok(rows.into_iter().next().map(|p| p.name))
    }

    /// Creates a key, in force on this replica at once and on the others within
    /// [`crate::engine::KEY_REFRESH`]. A project's key makes keys of its project only; a key
    /// with no project named is global when a global key makes it.
    pub async fn create_key(&self, req: CreateKey) -> Result<CreatedKey, EngineError> {
        let name = req.name.unwrap_or_default();
        check_label("a key name", &name)?;
        if let Some(at) = req.expires_at {
            if at <= chrono::Utc::now() {
                return Err(EngineError::invalid(
                    ErrorCode::InvalidKey,
                    format!("expires_at must be in the future, got {}", at.to_rfc3339()),
                ));
            }
        }
        let project_id = match (&req.project, Reach::current()) {
            (None, Reach::All) => None,
            (name, _) => Some(self.project_for(name.as_deref()).await?),
        };
        let key = new_key();
        self.require_db()?;
        let row = self.observe(
            store::keys::insert(
                &self.pool,
                NewKey {
                    project_id,
                    scope: req.scope.as_str(),
                    name: &name,
                    prefix: &key[..PREFIX_CHARS],
                    hash: &key_hash(&key),
                    expires_at: req.expires_at,
                },
            )
            .await
            .map_err(EngineError::from),
        )?;
        self.reload_keys().await;
        Ok(CreatedKey {
            view: key_view(row)?,
            key,
        })
    }

    /// The keys the request reaches, revoked and expired ones too; never their secrets.
    pub async fn list_keys(&self) -> Result<Vec<KeyView>, EngineError> {
        self.require_db()?;
        let rows = self.observe(
            store::keys::list(&self.pool, Reach::current().project())
                .await
                .map_err(EngineError::from),
        )?;
        rows.into_iter().map(key_view).collect()
    }

    /// Revokes a key: refused on this replica at once, and on the others within
    /// [`crate::engine::KEY_REFRESH`].
    pub async fn revoke_key(&self, id: i64) -> Result<KeyView, EngineError> {
        self.require_db()?;
        let row = self.observe(
            store::keys::revoke(&self.pool, id, Reach::current().project())
                .await
                .map_err(EngineError::from),
        )?;
        let row = row.ok_or_else(|| EngineError::Missing {
            code: ErrorCode::UnknownKey,
            message: format!("there is no key {id}"),
        })?;
        self.reload_keys().await;
        key_view(row)
    }

    async fn reload_keys(&self) {
        if let Err(e) = self.key_ring.reload(&self.pool).await {
            tracing::warn!(error = %e, "could not read the API keys after a change; the loop will");
        }
    }
}
