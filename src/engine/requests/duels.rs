//! Issuing duels: selection from the cached snapshot, a signed token, no database write.

use rand::{Rng, SeedableRng};
use std::cell::RefCell;
use std::sync::Arc;

use crate::bandit::{BanditRng, Chooser};

use super::unit_duels::select;
use crate::api::{DuelRequest, ErrorCode, Status};
use crate::engine::model::{DuelClaims, DuelRankers, Snapshot};
use crate::engine::runtime::{now_ms, offload};
use crate::engine::settings::{check_label, check_unit_and_query};
use crate::engine::{Engine, EngineError};

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
    /// A pairwise experiment's duel names two rankers (the same one twice for a self-duel); a
    /// multi-ranker experiment's query names 1 to `rankers_per_query` distinct ones.
    pub rankers: Vec<String>,
    pub expires_at_ms: Option<i64>,
    pub concluded: bool,
}

impl Engine {
    /// Chooses the next duel of a running experiment. A paused experiment refuses; a concluded
    /// one answers its (decided) champion without a token (on both sides of a pairwise duel, alone for a
    /// multi-ranker experiment), so a backend can keep serving the winner with no special case.
    pub async fn issue_duel(&self, id: i64, req: &DuelRequest) -> Result<IssuedDuel, EngineError> {
        check_unit_and_query(req.unit.as_deref(), req.query.as_deref())?;
        if let Some(label) = &req.segment {
            check_label(label)?;
        }
        let snap = self.snapshot(id).await?;
        match snap.status {
            Status::Paused => {
                return Err(EngineError::conflict(
                    ErrorCode::ExperimentPaused,
                    "the experiment is paused: it issues no duels until it is resumed",
                ));
            }
            Status::Concluded => {
                // The champion is a read of the counts: it reflects the outcomes this replica
                // acknowledged, as the experiment's view does.
                let snap = self.owners.await_applied(snap.clone()).await;
                let k = snap.names.len();
                let s = snap.clone();
                let champion = offload(k, move || {
                    // The decided champion (the first of a decided Copeland set); for an
                    // experiment concluded before its decision, the champion report's.
                    let decision = s.decision();
                    decision
                        .decided
                        .then(|| decision.champion.or(decision.winners.first().copied()))
                        .flatten()
                        .or(s.champion().ranker)
                        .or_else(|| s.state.active.iter().position(|a| *a))
                })
                .await
                .expect("an experiment keeps at least two active rankers");
                let name = snap.names[champion].clone();
                let rankers = if snap.rankers_per_query > 2 {
                    vec![name]
                } else {
                    vec![name.clone(), name]
                };
                return Ok(IssuedDuel {
                    token: None,
                    duel_id: None,
                    rankers,
                    expires_at_ms: None,
                    concluded: true,
                });
            }
            Status::Running => {}
        }
        let issued = now_ms();
        let segment = match &req.segment {
            Some(label) => Some(self.segment_index(id, label).await?),
            None => None,
        };
        let (rankers, chosen_by, nonce, unit) = match &req.unit {
            Some(unit) => {
                let query = req.query.as_deref().unwrap_or("");
                let choice = self.unit_choice(&snap, unit, query, issued).await?;
                // The duel id is derived too: asked again in the window, it is the same duel,
                // whose outcome is recorded once.
                let nonce = DuelClaims::uuid_v7_nonce(choice.window_start_ms, choice.random);
                (choice.rankers, choice.chosen_by, nonce, Some(choice.unit))
            }
            None => {
                let ((rankers, chosen_by), random) = self.random_choice(&snap).await?;
                let nonce = DuelClaims::uuid_v7_nonce(issued, random);
                (rankers, chosen_by, nonce, None)
            }
        };
        let claims = DuelClaims {
            experiment_id: id,
            rankers,
            issued_at_ms: issued,
            expires_at_ms: issued + snap.attribution_window_secs * 1000,
            state_version: snap.version,
            nonce,
            unit,
            segment,
            chosen_by: Some(chosen_by),
        };
        self.cache.count_duel(id);
        metrics::counter!("joust_duels_issued_total").increment(1);
        Ok(IssuedDuel {
            token: Some(self.signer.sign(&claims)),
            duel_id: Some(claims.duel_id()),
            rankers: claims
                .ranker_indices()
                .into_iter()
                .map(|r| snap.names[r as usize].clone())
                .collect(),
            expires_at_ms: Some(claims.expires_at_ms),
            concluded: false,
        })
    }

    /// A fresh selection from the live state, and the random bytes of a fresh duel id.
    async fn random_choice(
        &self,
        snap: &Arc<Snapshot>,
    ) -> Result<((DuelRankers, Chooser), [u8; 16]), EngineError> {
        let s = snap.clone();
        offload(snap.names.len(), move || {
            RNG.with(|rng| {
                let mut rng = rng.borrow_mut();
                let rankers = select(&s.state, s.rankers_per_query, &mut rng)?;
                Ok::<_, EngineError>((rankers, rng.random::<[u8; 16]>()))
            })
        })
        .await
    }
}
