//! The per-process cache of experiment snapshots, and the duels issued from them that are not yet
//! flushed to the database.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use crate::engine::model::Snapshot;

struct Entry {
    snapshot: Arc<Snapshot>,
    unflushed_duels: Arc<AtomicU64>,
}

/// What the refresh compares with the database ([`Cache::versions`]).
pub struct CachedVersion {
    pub id: i64,
    pub version: i64,
    pub stored: (i64, i64),
    pub ahead: bool,
}

#[derive(Default)]
pub struct Cache {
    entries: RwLock<HashMap<i64, Entry>>,
}

impl Cache {
    pub fn get(&self, id: i64) -> Option<Arc<Snapshot>> {
        self.entries
            .read()
            .unwrap()
            .get(&id)
            .map(|e| e.snapshot.clone())
    }

    /// Installs a snapshot unless a newer version is already cached (a refresh and a write may
    /// race; the higher version always wins). A cached version the owner has not written yet
    /// ([`Snapshot::ahead_of`]) counts as the stored version it was applied on: a version
    /// written since (an administrative change, or the owner's own write) replaces it.
    pub fn put(&self, snapshot: Snapshot) {
        let mut entries = self.entries.write().unwrap();
        match entries.get_mut(&snapshot.id) {
            Some(e) => {
                let newer = match e.snapshot.ahead_of {
                    Some((stored, _)) => snapshot.version > stored,
                    None => snapshot.version >= e.snapshot.version,
                };
                if newer {
                    e.snapshot = Arc::new(snapshot);
                }
            }
            None => {
                entries.insert(
                    snapshot.id,
                    Entry {
                        snapshot: Arc::new(snapshot),
                        unflushed_duels: Arc::default(),
                    },
                );
            }
        }
    }

    /// Installs a version applied in memory on `base` only if `base` is still the cached one:
    /// anything installed meanwhile (a version written by an administrative change) is newer
    /// than what it was applied on. Returns whether it was installed.
    pub fn put_on(&self, base: &Arc<Snapshot>, snapshot: Snapshot) -> bool {
        let mut entries = self.entries.write().unwrap();
        match entries.get_mut(&snapshot.id) {
            Some(e) if Arc::ptr_eq(&e.snapshot, base) => {
                e.snapshot = Arc::new(snapshot);
                true
            }
            _ => false,
        }
    }

    /// Installs a snapshot read from the database in place of the cached one, as
    /// [`Cache::replace`] does, but only if the cached version is still `cached`: the refresh
    /// loop found the database behind the cache (or that version written again), and a write
    /// installed meanwhile is newer than what it read. Never removes the entry: a read waiting for
    /// its outcomes to be applied takes a missing entry for a deleted experiment and stops waiting.
    pub fn replace_version(&self, cached: i64, snapshot: Snapshot) {
        let mut entries = self.entries.write().unwrap();
        if let Some(e) = entries.get_mut(&snapshot.id)
            && e.snapshot.version == cached
        {
            e.snapshot = Arc::new(snapshot);
        }
    }

    /// Installs a snapshot read from the database even if the cached one has a higher version:
    /// after Postgres lost its last asynchronously committed applications in a crash (see
    /// `engine::apply::application`), the database's state is the truth and the cache must follow
    /// it back.
    pub fn replace(&self, snapshot: Snapshot) {
        let mut entries = self.entries.write().unwrap();
        match entries.get_mut(&snapshot.id) {
            Some(e) => e.snapshot = Arc::new(snapshot),
            None => {
                entries.insert(
                    snapshot.id,
                    Entry {
                        snapshot: Arc::new(snapshot),
                        unflushed_duels: Arc::default(),
                    },
                );
            }
        }
    }

    pub fn remove(&self, id: i64) {
        self.entries.write().unwrap().remove(&id);
    }

    /// Each cached experiment: its id, the version cached, the stored version and write mark it
    /// is or was applied on ([`Snapshot::stored_tag`]), and whether it is ahead of that.
    pub fn versions(&self) -> Vec<CachedVersion> {
        self.entries
            .read()
            .unwrap()
            .iter()
            .map(|(id, e)| CachedVersion {
                id: *id,
                version: e.snapshot.version,
                stored: e.snapshot.stored_tag(),
                ahead: e.snapshot.ahead_of.is_some(),
            })
            .collect()
    }

    /// Counts one duel issued from this process.
    pub fn count_duel(&self, id: i64) {
        if let Some(e) = self.entries.read().unwrap().get(&id) {
            e.unflushed_duels.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn unflushed_duels(&self, id: i64) -> u64 {
        self.entries
            .read()
            .unwrap()
            .get(&id)
            .map_or(0, |e| e.unflushed_duels.load(Ordering::Relaxed))
    }

    /// Takes the unflushed duel counts (to write them); `restore` puts them back on failure.
    pub fn take_unflushed(&self) -> Vec<(i64, i64)> {
        self.entries
            .read()
            .unwrap()
            .iter()
            .filter_map(|(id, e)| {
                let n = e.unflushed_duels.swap(0, Ordering::Relaxed);
                (n > 0).then_some((*id, n as i64))
            })
            .collect()
    }

    pub fn restore_unflushed(&self, counts: &[(i64, i64)]) {
        let entries = self.entries.read().unwrap();
        for (id, n) in counts {
            if let Some(e) = entries.get(id) {
                e.unflushed_duels.fetch_add(*n as u64, Ordering::Relaxed);
            }
        }
    }
}
