//! Duels for a unit: the same unit and query get the same duel, and so the same interleaved
//! list, within one window of the experiment, on any replica, with no database write per duel.
//!
//! - The unit id is never kept: it is replaced at once by its keyed hash (HMAC-SHA256 under a
//!   secret shared by the replicas through the settings table, 128 bits kept), which is what
//!   tokens and outcome rows carry.
//! - The duel's randomness is derived, not drawn: HMAC(secret, experiment, window, unit hash,
//!   query) seeds the selection's generator and gives the duel id (so the interleaving, seeded
//!   by the duel id, follows too).
//! - Every replica selects from the same state: the bandit state pinned for the window, written
//!   once per experiment and window by the first replica that needs it and read by the others
//!   (`store::unit_windows`). The live state keeps learning; unit duels catch up at the next
//!   window. The cost is staleness: within a window, unit traffic is selected as if its outcomes
//!   came back in one batch at the window's end (docs/units-and-segments.md).

use hmac::{Hmac, Mac};
use rand::SeedableRng;
use sha2::Sha256;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::bandit::{BanditRng, BanditState, Chooser};
use crate::store;

use crate::engine::model::{DuelRankers, Snapshot, UNIT_HASH_LEN};
use crate::engine::runtime::offload;
use crate::engine::{Engine, EngineError};

type HmacSha256 = Hmac<Sha256>;

/// The key of units' hashes and duel seeds.
#[derive(Clone)]
pub struct UnitKey {
    /// HMAC already keyed: keying hashes two blocks (the padded key, inner and outer), half the
    /// work of a unit duel's two MACs, so each MAC starts from a copy of this state instead.
    keyed: HmacSha256,
}

impl UnitKey {
    pub fn new(secret: &[u8]) -> Self {
        UnitKey {
            keyed: HmacSha256::new_from_slice(secret).expect("HMAC takes keys of any length"),
        }
    }

    fn mac(&self) -> HmacSha256 {
        self.keyed.clone()
    }

    /// The keyed hash of a unit id: what joust keeps instead of the id.
    pub fn unit_hash(&self, unit: &str) -> [u8; UNIT_HASH_LEN] {
        let mut mac = self.mac();
        mac.update(b"unit\0");
        mac.update(unit.as_bytes());
        let out = mac.finalize().into_bytes();
        out[..UNIT_HASH_LEN].try_into().expect("16 of 32 bytes")
    }

    /// The seed of one unit's duel for one query in one window of one experiment.
    pub fn duel_seed(
        &self,
        experiment: i64,
        epoch: i64,
        unit: &[u8; UNIT_HASH_LEN],
        query: &str,
    ) -> [u8; 32] {
        let mut mac = self.mac();
        mac.update(b"duel\0");
        mac.update(&experiment.to_be_bytes());
        mac.update(&epoch.to_be_bytes());
        mac.update(unit);
        mac.update(query.as_bytes());
        mac.finalize().into_bytes().into()
    }
}

/// A state pinned for one window.
struct Pinned {
    epoch: i64,
    state: Arc<BanditState>,
}

/// This replica's copy of each experiment's pinned state for the current window.
#[derive(Default)]
pub struct WindowStates {
    pinned: Mutex<HashMap<i64, Arc<Pinned>>>,
    /// One load at a time per experiment: the first request of a window reads (or writes) the
    /// pinned state, the others wait for it rather than all asking the database.
    loading: Mutex<HashMap<i64, Arc<tokio::sync::Mutex<()>>>>,
}

impl WindowStates {
    fn get(&self, experiment: i64, epoch: i64) -> Option<Arc<BanditState>> {
        let pinned = self.pinned.lock().expect("window states lock");
        pinned
            .get(&experiment)
            .filter(|p| p.epoch == epoch)
            .map(|p| p.state.clone())
    }

    fn put(&self, experiment: i64, epoch: i64, state: Arc<BanditState>) {
        let mut pinned = self.pinned.lock().expect("window states lock");
        if pinned.get(&experiment).is_none_or(|p| p.epoch <= epoch) {
            pinned.insert(experiment, Arc::new(Pinned { epoch, state }));
        }
    }

    fn load_lock(&self, experiment: i64) -> Arc<tokio::sync::Mutex<()>> {
        let mut loading = self.loading.lock().expect("window loads lock");
        loading.entry(experiment).or_default().clone()
    }
}

/// What a unit's duel is: its rankers, the random bytes of its duel id, and the unit's hash.
pub struct UnitChoice {
    pub rankers: DuelRankers,
    /// Which layer chose them.
    pub chosen_by: Chooser,
    pub random: [u8; 16],
    pub unit: [u8; UNIT_HASH_LEN],
    /// When the window began: the duel id's time, so the id is the same whenever it is asked.
    pub window_start_ms: i64,
}

/// Selects from `state` with `rng` as the experiment's duels are selected; says which layer
/// chose the duel.
pub fn select(
    state: &BanditState,
    rankers_per_query: usize,
    rng: &mut BanditRng,
) -> Result<(DuelRankers, Chooser), EngineError> {
    Ok(if rankers_per_query > 2 {
        let (set, chooser) = state
            .select_set_chosen(rankers_per_query, rng)
            .map_err(EngineError::internal)?;
        (
            DuelRankers::Set(set.into_iter().map(|a| a as u32).collect()),
            chooser,
        )
    } else {
        let (pair, chooser) = state.select_chosen(rng);
        (
            DuelRankers::Pair {
                first: pair.first as u32,
                second: pair.second as u32,
            },
            chooser,
        )
    })
}

impl Engine {
    /// The duel of `unit` for `query` now: the same on every replica within the window.
    pub(super) async fn unit_choice(
        &self,
        snap: &Arc<Snapshot>,
        unit: &str,
        query: &str,
        now_ms: i64,
    ) -> Result<UnitChoice, EngineError> {
        let unit_hash = self.unit_key.unit_hash(unit);
        let epoch = snap.units.epoch(now_ms);
        let seed = self.unit_key.duel_seed(snap.id, epoch, &unit_hash, query);
        let pinned = self.window_state(snap, epoch).await;
        let live = snap.clone();
        let (rankers, chosen_by) = offload(snap.names.len(), move || {
            let rng_seed = u64::from_le_bytes(seed[16..24].try_into().expect("8 bytes"));
            let chosen = select(
                &pinned,
                live.rankers_per_query,
                &mut BanditRng::seed_from_u64(rng_seed),
            )?;
            // A ranker retired since the window began is not shown: such a duel is selected
            // from the live state instead (the same on every replica that saw the retirement).
            let retired = |r: &u32| !live.state.active.get(*r as usize).copied().unwrap_or(false);
            let any_retired = match &chosen.0 {
                DuelRankers::Pair { first, second } => retired(first) || retired(second),
                DuelRankers::Set(set) => set.iter().any(retired),
            };
            if any_retired {
                return select(
                    &live.state,
                    live.rankers_per_query,
                    &mut BanditRng::seed_from_u64(rng_seed),
                );
            }
            Ok(chosen)
        })
        .await?;
        Ok(UnitChoice {
            rankers,
            chosen_by,
            random: seed[..16].try_into().expect("16 bytes"),
            unit: unit_hash,
            window_start_ms: snap.units.epoch_start_ms(epoch),
        })
    }

    /// The state pinned for the experiment's window `epoch`: from memory, else from the
    /// database (pinning this replica's state if no replica did yet). While the database is
    /// unreachable, the live state (the same duel on this replica, maybe not on others).
    async fn window_state(&self, snap: &Arc<Snapshot>, epoch: i64) -> Arc<BanditState> {
        if let Some(state) = self.window_states.get(snap.id, epoch) {
            return state;
        }
        let lock = self.window_states.load_lock(snap.id);
        let _loading = lock.lock().await;
        if let Some(state) = self.window_states.get(snap.id, epoch) {
            return state;
        }
        match self.pin_window(snap, epoch).await {
            Ok(state) => {
                self.window_states.put(snap.id, epoch, state.clone());
                state
            }
            Err(e) => {
                tracing::warn!(experiment = snap.id, error = %e,
                    "could not read the window's pinned state; selecting from the live state");
                Arc::new(snap.state.clone())
            }
        }
    }

    async fn pin_window(
        &self,
        snap: &Arc<Snapshot>,
        epoch: i64,
    ) -> Result<Arc<BanditState>, EngineError> {
        self.require_db()?;
        let k = snap.names.len();
        let s = snap.clone();
        let own = offload(k, move || {
            serde_json::to_value(&s.state).expect("a bandit state serialises")
        })
        .await;
        let result = store::unit_windows::pin(&self.pool, snap.id, epoch, snap.version, || own)
            .await
            .map_err(EngineError::from);
        let (_, value) = self.observe(result)?;
        offload(k, move || {
            let mut state: BanditState =
                serde_json::from_value(value).map_err(EngineError::internal)?;
            state.warm();
            Ok(Arc::new(state))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_and_seeds_depend_on_every_input() {
        let k = UnitKey::new(b"secret");
        let u = k.unit_hash("alice");
        assert_eq!(u, k.unit_hash("alice"));
        assert_ne!(u, k.unit_hash("bob"));
        assert_ne!(u, UnitKey::new(b"other").unit_hash("alice"));
        let s = k.duel_seed(1, 10, &u, "shoes");
        assert_eq!(s, k.duel_seed(1, 10, &u, "shoes"));
        assert_ne!(s, k.duel_seed(2, 10, &u, "shoes"));
        assert_ne!(s, k.duel_seed(1, 11, &u, "shoes"));
        assert_ne!(s, k.duel_seed(1, 10, &k.unit_hash("bob"), "shoes"));
        assert_ne!(s, k.duel_seed(1, 10, &u, "boots"));
    }
}
