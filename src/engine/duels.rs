//! Issuing duels: selection from the cached snapshot, a signed token, no database write.

use rand::{Rng, SeedableRng};
use std::cell::RefCell;

use crate::bandit::BanditRng;

use super::offload;
use super::token::DuelClaims;
use super::{Engine, EngineError, Status, now_ms};

thread_local! {
    /// One fast generator per worker thread, seeded from the OS: selections need randomness, not
    /// reproducibility (updates are reproducible; see the writer).
    static RNG: RefCell<BanditRng> = RefCell::new(BanditRng::from_rng(&mut rand::rng()));
}

/// A duel to show.
#[derive(Debug, Clone)]
pub struct IssuedDuel {
    /// `None` for a concluded experiment: there is nothing to report back.
    pub token: Option<String>,
    pub duel_id: Option<String>,
    pub rankers: [String; 2],
    pub expires_at_ms: Option<i64>,
    pub concluded: bool,
}

impl Engine {
    /// Chooses the next duel of a running experiment. A paused experiment refuses; a concluded
    /// one answers its champion on both sides without a token, so a backend can keep serving
    /// the winner with no special case.
    pub async fn issue_duel(&self, id: i64) -> Result<IssuedDuel, EngineError> {
        let snap = self.snapshot(id).await?;
        match snap.status {
            Status::Paused => {
                return Err(EngineError::conflict(
                    "experiment_paused",
                    "the experiment is paused: it issues no duels until it is resumed",
                ));
            }
            Status::Concluded => {
                let k = snap.names.len();
                let s = snap.clone();
                let champion = offload::cpu(k, move || {
                    s.champion()
                        .ranker
                        .or_else(|| s.state.active.iter().position(|a| *a))
                })
                .await
                .expect("an experiment keeps at least two active rankers");
                let name = snap.names[champion].clone();
                return Ok(IssuedDuel {
                    token: None,
                    duel_id: None,
                    rankers: [name.clone(), name],
                    expires_at_ms: None,
                    concluded: true,
                });
            }
            Status::Running => {}
        }
        let issued = now_ms();
        let s = snap.clone();
        let (pair, random) = offload::cpu(snap.names.len(), move || {
            RNG.with(|rng| {
                let mut rng = rng.borrow_mut();
                (s.state.select(&mut *rng), rng.random::<[u8; 16]>())
            })
        })
        .await;
        let nonce = DuelClaims::uuid_v7_nonce(issued, random);
        let claims = DuelClaims {
            experiment_id: id,
            first: pair.first as u32,
            second: pair.second as u32,
            issued_at_ms: issued,
            expires_at_ms: issued + snap.attribution_window_secs * 1000,
            state_version: snap.version,
            nonce,
        };
        self.cache.count_duel(id);
        metrics::counter!("joust_duels_issued_total").increment(1);
        Ok(IssuedDuel {
            token: Some(self.signer.sign(&claims)),
            duel_id: Some(claims.duel_id()),
            rankers: [
                snap.names[pair.first].clone(),
                snap.names[pair.second].clone(),
            ],
            expires_at_ms: Some(claims.expires_at_ms),
            concluded: false,
        })
    }
}
