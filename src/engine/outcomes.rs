//! Recording outcomes: check the token and the winner, hand the outcome to the writer, and answer
//! once it is durable.

use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use super::token::DuelClaims;
use super::writer::{PendingOutcome, WriteRequest, Written};
use super::{Engine, EngineError, Snapshot, now_ms};
use crate::bandit::Arm;
use std::sync::Arc;

/// One outcome as posted.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutcomeInput {
    pub duel_token: String,
    /// A ranker name of that duel, or `"tie"`.
    pub winner: String,
}

/// What was recorded for one outcome.
#[derive(Debug, Clone, Serialize)]
pub struct OutcomeRecord {
    pub duel_id: String,
    pub experiment_id: i64,
    pub winner: String,
    /// `recorded` the first time, `duplicate` for a retry of the same outcome.
    pub status: &'static str,
}

pub const TIE: &str = "tie";

/// Largest batch accepted in one request.
pub const MAX_BATCH: usize = 10_000;

impl Engine {
    /// The experiment of a verified duel, once the duel is known to be within its attribution
    /// window and to name rankers of that experiment.
    pub(super) async fn duel_snapshot(
        &self,
        claims: &DuelClaims,
    ) -> Result<Arc<Snapshot>, EngineError> {
        if now_ms() > claims.expires_at_ms {
            metrics::counter!("joust_outcomes_rejected_total", "reason" => "expired").increment(1);
            return Err(EngineError::ExpiredToken);
        }
        let snap = self.snapshot(claims.experiment_id).await?;
        if claims.first as usize >= snap.names.len() || claims.second as usize >= snap.names.len() {
            return Err(EngineError::InvalidToken);
        }
        Ok(snap)
    }

    /// Checks one outcome and turns it into a pending write.
    async fn prepare(&self, input: &OutcomeInput) -> Result<(PendingOutcome, String), EngineError> {
        let claims = self
            .signer
            .verify(&input.duel_token)
            .ok_or(EngineError::InvalidToken)?;
        let snap = self.duel_snapshot(&claims).await?;
        let (first, second) = (claims.first as usize, claims.second as usize);
        let winner = if input.winner == TIE {
            None
        } else {
            let arm = snap.arm(&input.winner)?;
            if arm != first && arm != second {
                return Err(EngineError::invalid(
                    "winner_not_in_duel",
                    format!(
                        "`{}` is not a ranker of this duel ({} vs {})",
                        input.winner, snap.names[first], snap.names[second]
                    ),
                ));
            }
            Some(arm)
        };
        Ok(pending(&claims, &snap, winner))
    }

    pub(super) async fn write(
        &self,
        items: Vec<PendingOutcome>,
    ) -> Result<Vec<Written>, EngineError> {
        self.require_db()?;
        let result = self.send_to_writer(items).await;
        self.observe(result)
    }

    async fn send_to_writer(
        &self,
        items: Vec<PendingOutcome>,
    ) -> Result<Vec<Written>, EngineError> {
        let (reply, answer) = oneshot::channel();
        self.writer
            .send(WriteRequest { items, reply })
            .await
            .map_err(|_| EngineError::Internal("outcome writer stopped".into()))?;
        answer
            .await
            .map_err(|_| EngineError::Internal("outcome writer stopped".into()))?
    }

    pub(super) fn finish(
        &self,
        pending: &PendingOutcome,
        winner: String,
        written: Written,
    ) -> Result<OutcomeRecord, EngineError> {
        let record = |status| OutcomeRecord {
            duel_id: pending.duel_id.to_string(),
            experiment_id: pending.experiment_id,
            winner: winner.clone(),
            status,
        };
        match written {
            Written::Recorded => {
                metrics::counter!("joust_outcomes_applied_total").increment(1);
                Ok(record("recorded"))
            }
            Written::Duplicate => {
                metrics::counter!("joust_outcomes_rejected_total", "reason" => "duplicate")
                    .increment(1);
                Ok(record("duplicate"))
            }
            Written::Conflict(recorded) => {
                metrics::counter!("joust_outcomes_rejected_total", "reason" => "conflict")
                    .increment(1);
                let names = self.cache.get(pending.experiment_id);
                let recorded = match (recorded, names) {
                    (Some(w), Some(s)) => s.names.get(w).cloned().unwrap_or_else(|| w.to_string()),
                    (Some(w), None) => w.to_string(),
                    (None, _) => TIE.to_string(),
                };
                Err(EngineError::OutcomeConflict { recorded })
            }
            Written::UnknownExperiment => {
                Err(EngineError::UnknownExperiment(pending.experiment_id))
            }
        }
    }

    /// Records one outcome; answers after it is durable.
    pub async fn record_outcome(&self, input: OutcomeInput) -> Result<OutcomeRecord, EngineError> {
        let (pending, winner) = self.prepare(&input).await.inspect_err(count_rejection)?;
        let written = self.write(vec![pending.clone()]).await?;
        self.finish(
            &pending,
            winner,
            written.into_iter().next().expect("one result per outcome"),
        )
    }

    /// Records many outcomes; each gets its own result. Valid outcomes are durable before the
    /// answer even when others in the batch are refused.
    pub async fn record_outcomes(
        &self,
        inputs: Vec<OutcomeInput>,
    ) -> Result<Vec<Result<OutcomeRecord, EngineError>>, EngineError> {
        let mut results: Vec<Option<Result<OutcomeRecord, EngineError>>> =
            Vec::with_capacity(inputs.len());
        let mut pending = Vec::new();
        let mut slots = Vec::new();
        for (i, input) in inputs.iter().enumerate() {
            match self.prepare(input).await {
                Ok((p, w)) => {
                    pending.push(p);
                    slots.push((i, w));
                    results.push(None);
                }
                // An outage is the whole batch's answer: nothing is acknowledged.
                Err(EngineError::Unavailable) => return Err(EngineError::Unavailable),
                Err(e) => {
                    count_rejection(&e);
                    results.push(Some(Err(e)));
                }
            }
        }
        if !pending.is_empty() {
            let written = self.write(pending.clone()).await?;
            for ((p, (i, w)), wr) in pending.iter().zip(slots).zip(written) {
                results[i] = Some(self.finish(p, w, wr));
            }
        }
        Ok(results
            .into_iter()
            .map(|r| r.expect("every outcome has a result"))
            .collect())
    }
}

/// The write of a duel's outcome (`winner` `None` for a tie), and the winner's name.
pub(super) fn pending(
    claims: &DuelClaims,
    snap: &Snapshot,
    winner: Option<Arm>,
) -> (PendingOutcome, String) {
    // A ranker compared with itself cannot beat itself: record a tie.
    let winner = winner.filter(|_| claims.first != claims.second);
    let issued_at =
        chrono::DateTime::from_timestamp_millis(claims.issued_at_ms).unwrap_or_default();
    let winner_name = winner.map_or_else(|| TIE.to_string(), |w| snap.names[w].clone());
    (
        PendingOutcome {
            duel_id: claims.duel_uuid(),
            experiment_id: claims.experiment_id,
            first: claims.first as usize,
            second: claims.second as usize,
            winner,
            issued_at,
        },
        winner_name,
    )
}

pub(super) fn count_rejection(e: &EngineError) {
    let reason = match e {
        EngineError::InvalidToken => "invalid_token",
        EngineError::UnknownRanker(_) | EngineError::Invalid { .. } => "invalid_winner",
        EngineError::UnknownExperiment(_) => "unknown_experiment",
        _ => return,
    };
    metrics::counter!("joust_outcomes_rejected_total", "reason" => reason).increment(1);
}
