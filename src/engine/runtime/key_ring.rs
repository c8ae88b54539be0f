//! The API keys stored in Postgres, as this replica checks them: a map from each live key's
//! SHA-256 to what it grants, read again every [`KEY_REFRESH`] (and at once after a key is
//! created or revoked here), so a key created or revoked on any replica takes effect on every
//! replica within about a second, without a restart. Keys are read whole each time: there are
//! few, and a full read needs no change tracking that could miss a revocation.
//!
//! When the database does not answer, the last keys read stay in force: a key cannot be
//! revoked meanwhile anyway (revoking writes to the database), and an expiry is checked against
//! the clock on every request.

use sha2::{Digest, Sha256};
use sqlx::PgPool;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{RwLock, Weak};
use std::time::Duration;

use crate::api::KeyScope;
use crate::store::{self, StoreError};

/// How often every replica reads the stored keys again.
pub const KEY_REFRESH: Duration = Duration::from_secs(1);

/// The SHA-256 of a key, as stored and looked up.
pub type KeyHash = [u8; 32];

pub fn key_hash(key: &str) -> KeyHash {
    Sha256::digest(key.as_bytes()).into()
}

/// What a stored key grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyGrant {
    pub id: i64,
    /// `None`: a global key.
    pub project: Option<i64>,
    pub scope: KeyScope,
    /// Milliseconds since the epoch after which the key is refused.
    pub expires_at_ms: Option<i64>,
}

#[derive(Default)]
pub struct KeyRing {
    keys: RwLock<HashMap<KeyHash, KeyGrant>>,
    /// Whether any key was ever stored (revoked ones included): a server that had none and no
    /// configured keys is open, and one that had some never opens again.
    any_stored: AtomicBool,
    /// Whether the keys were read once: until then nothing is open.
    loaded: AtomicBool,
    /// One reload at a time: a periodic reload that read the keys before a key was created
    /// must not overwrite, after it, the keys the creating request read (its key would be
    /// unknown until the next reload).
    reloading: tokio::sync::Mutex<()>,
}

impl KeyRing {
    /// The grant of the key with this hash, if it is live (`now_ms`: the current time).
    pub fn find(&self, hash: &KeyHash) -> Option<KeyGrant> {
        let keys = self.keys.read().unwrap_or_else(|e| e.into_inner());
        keys.get(hash).copied()
    }

    /// Whether the keys were read and none was ever stored.
    pub fn none_stored(&self) -> bool {
        self.loaded.load(Ordering::Acquire) && !self.any_stored.load(Ordering::Acquire)
    }

    /// Reads the live keys again.
    pub async fn reload(&self, pool: &PgPool) -> Result<(), StoreError> {
        let _one_at_a_time = self.reloading.lock().await;
        let (rows, any) = store::keys::active(pool).await?;
        let keys: HashMap<KeyHash, KeyGrant> = rows
            .into_iter()
            .filter_map(|row| {
                let hash: KeyHash = row.hash.as_slice().try_into().ok()?;
                Some((
                    hash,
                    KeyGrant {
                        id: row.id,
                        project: row.project_id,
                        scope: KeyScope::parse(&row.scope)?,
                        expires_at_ms: row.expires_at.map(|t| t.timestamp_millis()),
                    },
                ))
            })
            .collect();
        *self.keys.write().unwrap_or_else(|e| e.into_inner()) = keys;
        if any {
            self.any_stored.store(true, Ordering::Release);
        }
        self.loaded.store(true, Ordering::Release);
        Ok(())
    }
}

/// Reads the keys every [`KEY_REFRESH`] until the engine is dropped.
pub async fn key_refresh_loop(engine: Weak<crate::engine::Engine>) {
    let mut tick = tokio::time::interval(KEY_REFRESH);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(engine) = engine.upgrade() else {
            return;
        };
        if let Err(e) = engine.key_ring().reload(engine.pool()).await {
            tracing::debug!(error = %e, "could not read the API keys; the last ones read stay");
        }
    }
}
