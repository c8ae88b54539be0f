//! Every replica's in-memory set of the origins some live experiment lists for browser clicks,
//! which answers CORS preflights without the database. It is fed by what replicas already do:
//! each snapshot this process loads (so a change made here shows at once), and the refresh poll
//! of state versions (so a change made by another replica shows within a refresh interval),
//! which reads the origins of the experiments whose version moved.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};
use std::time::Instant;

/// What a replica knows of one experiment's origins, and at which state version.
struct Known {
    version: i64,
    origins: Option<Arc<[String]>>,
    noted: Instant,
}

#[derive(Default)]
struct Inner {
    by_experiment: HashMap<i64, Known>,
    /// Every origin some live experiment lists.
    any: HashSet<String>,
}

/// The origins every live experiment of the database lists, as far as this replica knows: kept
/// for CORS preflights, which carry no token and so cannot name their experiment.
#[derive(Default)]
pub struct OriginRegistry {
    inner: RwLock<Inner>,
}

impl OriginRegistry {
    /// Whether some live experiment lists `origin`.
    pub fn contains(&self, origin: &str) -> bool {
        self.inner.read().unwrap().any.contains(origin)
    }

    /// Records an experiment's origins at `version`, unless a later version is already known.
    pub fn note(&self, id: i64, version: i64, origins: Option<Arc<[String]>>) {
        let mut inner = self.inner.write().unwrap();
        if note(&mut inner, id, version, origins) {
            rebuild(&mut inner);
        }
    }

    /// Records that an experiment was deleted at `version`.
    pub fn forget(&self, id: i64, version: i64) {
        self.note(id, version, None);
    }

    /// The live experiments (`live`: id -> state version) whose origins this replica has not
    /// read at their current version.
    pub fn stale(&self, live: &HashMap<i64, i64>) -> Vec<i64> {
        let inner = self.inner.read().unwrap();
        live.iter()
            .filter(|&(id, &v)| inner.by_experiment.get(id).is_none_or(|k| k.version < v))
            .map(|(&id, _)| id)
            .collect()
    }

    /// Takes in a poll begun at `started`: `live` are the versions of every live experiment,
    /// `rows` the origins read for the stale ones. Experiments no longer live are dropped, unless
    /// noted after the poll began (created here meanwhile).
    pub fn merge(
        &self,
        started: Instant,
        live: &HashMap<i64, i64>,
        rows: Vec<(i64, i64, Option<Vec<String>>)>,
    ) {
        let mut inner = self.inner.write().unwrap();
        let mut changed = false;
        for (id, version, origins) in rows {
            changed |= note(&mut inner, id, version, origins.map(Into::into));
        }
        let before = inner.by_experiment.len();
        let mut dropped_origins = false;
        inner.by_experiment.retain(|id, k| {
            let keep = live.contains_key(id) || k.noted >= started;
            dropped_origins |= !keep && k.origins.is_some();
            keep
        });
        if changed || dropped_origins || before != inner.by_experiment.len() {
            rebuild(&mut inner);
        }
    }
}

/// Records one experiment's origins; says whether the set of origins may have changed.
fn note(inner: &mut Inner, id: i64, version: i64, origins: Option<Arc<[String]>>) -> bool {
    let noted = Instant::now();
    match inner.by_experiment.get_mut(&id) {
        Some(k) if k.version > version => false,
        Some(k) => {
            let changed = k.origins != origins;
            *k = Known {
                version,
                origins,
                noted,
            };
            changed
        }
        None => {
            let changed = origins.is_some();
            inner.by_experiment.insert(
                id,
                Known {
                    version,
                    origins,
                    noted,
                },
            );
            changed
        }
    }
}

fn rebuild(inner: &mut Inner) {
    inner.any = inner
        .by_experiment
        .values()
        .filter_map(|k| k.origins.as_deref())
        .flatten()
        .cloned()
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_follows_versions_and_deletions() {
        let r = OriginRegistry::default();
        let list = |o: &str| Some(Arc::<[String]>::from(vec![o.to_string()]));
        let started = Instant::now();
        r.note(1, 2, list("https://a.example"));
        assert!(r.contains("https://a.example"));
        // A poll that began before the experiment was created does not drop it...
        r.merge(started, &HashMap::new(), vec![]);
        assert!(r.contains("https://a.example"));
        // ...nor does an older version read by a poll overwrite it.
        let live = HashMap::from([(1, 2)]);
        r.merge(Instant::now(), &live, vec![(1, 1, None)]);
        assert!(r.contains("https://a.example"));
        assert!(r.stale(&live).is_empty());
        assert_eq!(r.stale(&HashMap::from([(1, 3), (2, 1)])).len(), 2);
        // Another replica turned it off (version 3).
        r.merge(Instant::now(), &HashMap::from([(1, 3)]), vec![(1, 3, None)]);
        assert!(!r.contains("https://a.example"));
        r.note(1, 4, list("https://b.example"));
        assert!(r.contains("https://b.example"));
        // Deleted elsewhere: gone from the live list of a later poll.
        std::thread::sleep(std::time::Duration::from_millis(2));
        r.merge(Instant::now(), &HashMap::new(), vec![]);
        assert!(!r.contains("https://b.example"));
    }
}
