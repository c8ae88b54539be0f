//! Recording outcomes: check the token and the winner, hand the outcome to the writer, and answer
//! once it is durable.

use std::collections::{BTreeMap, HashMap};
use tokio::sync::oneshot;

use crate::api::{ErrorCode, OutcomeInput, OutcomeRecord, PairOutcome, Rank};
use crate::bandit::Arm;
use crate::engine::ingest::{PendingOutcome, Posting, WriteRequest, Written};
use crate::engine::model::{DuelClaims, DuelRankers, SetResult, Snapshot, TIE};
use crate::engine::runtime::now_ms;
use crate::engine::{Engine, EngineError};
use crate::store::outcomes::PostedAs;
use std::sync::Arc;

/// An outcome's one result field, once the body has exactly one.
enum OutcomeForm<'a> {
    Winner(&'a str),
    Credits(&'a HashMap<String, f64>),
    Ordering(&'a [Rank]),
}

impl OutcomeInput {
    /// The checks the documented schema states for one outcome, which need no token or
    /// experiment: exactly one result field, and no empty group of tied rankers. A batch runs
    /// them on every item before recording any, so a body that breaks the schema is refused
    /// whole, as a body with a wrong type already is.
    fn form(&self) -> Result<OutcomeForm<'_>, EngineError> {
        let form = match (&self.winner, &self.credits, &self.ordering) {
            (Some(winner), None, None) => OutcomeForm::Winner(winner),
            (None, Some(credits), None) => OutcomeForm::Credits(credits),
            (None, None, Some(ordering)) => OutcomeForm::Ordering(ordering),
            _ => {
                return Err(EngineError::invalid(
                    ErrorCode::InvalidOutcome,
                    "give exactly one of `winner` (a ranker of the duel or \"tie\"), `credits` \
                     (every ranker of the duel with a number) and `ordering` (every ranker of the \
                     duel once, best first; a list of names is a tied group)",
                ));
            }
        };
        if let OutcomeForm::Ordering(ordering) = form {
            // An empty group is no place: accepting it would make later places' numbers depend
            // on filler, and the body would not say what the client meant.
            if let Some(p) = ordering
                .iter()
                .position(|rank| matches!(rank, Rank::Tied(group) if group.is_empty()))
            {
                return Err(EngineError::invalid(
                    ErrorCode::RankersMismatch,
                    format!(
                        "`ordering[{p}]` is an empty group: a group of tied rankers names one or more"
                    ),
                ));
            }
        }
        Ok(form)
    }
}

/// How an outcome is answered: a two-ranker duel's winner, or a query's pair results.
#[derive(Debug, Clone)]
pub(super) enum Answer {
    Winner(String),
    Pairs(Vec<PairOutcome>),
}

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
        if claims
            .ranker_indices()
            .iter()
            .any(|&r| r as usize >= snap.names.len())
        {
            return Err(EngineError::InvalidToken);
        }
        Ok(snap)
    }

    /// Checks one outcome and turns it into a pending write.
    async fn prepare(&self, input: &OutcomeInput) -> Result<(PendingOutcome, Answer), EngineError> {
        let claims = self
            .signer
            .verify(&input.duel_token)
            .ok_or(EngineError::InvalidToken)?;
        let snap = self.duel_snapshot(&claims).await?;
        let (scores, posting) = match input.form()? {
            OutcomeForm::Winner(winner) => return self.prepare_winner(&claims, &snap, winner),
            OutcomeForm::Credits(credits) => {
                let scores = credit_scores(&claims, &snap, credits)?;
                // In name order: the posted object's own order is not kept by its parse.
                let sorted: BTreeMap<&String, &f64> = credits.iter().collect();
                (scores, posted(PostedAs::Credits, &sorted))
            }
            OutcomeForm::Ordering(ordering) => (
                ordering_scores(&claims, &snap, ordering)?,
                posted(PostedAs::Ordering, ordering),
            ),
        };
        let arms: Vec<Arm> = claims.ranker_indices().iter().map(|&r| r as Arm).collect();
        match claims.rankers {
            DuelRankers::Pair { .. } => {
                // A pair's credits or ordering name its winner, or a tie.
                let winner = match scores[0].partial_cmp(&scores[1]) {
                    Some(std::cmp::Ordering::Greater) => Some(arms[0]),
                    Some(std::cmp::Ordering::Less) => Some(arms[1]),
                    _ => None,
                };
                let (pending, name) = pending(&claims, &snap, winner, posting);
                Ok((pending, Answer::Winner(name)))
            }
            DuelRankers::Set(_) => {
                let set = SetResult::from_scores(arms, &scores);
                Ok(pending_set(&claims, &snap, set, posting))
            }
        }
    }

    /// A two-ranker duel's `winner`.
    fn prepare_winner(
        &self,
        claims: &DuelClaims,
        snap: &Snapshot,
        winner: &str,
    ) -> Result<(PendingOutcome, Answer), EngineError> {
        let DuelRankers::Pair { first, second } = claims.rankers else {
            return Err(EngineError::invalid(
                ErrorCode::InvalidOutcome,
                "this duel compares several rankers at once: post `credits` (every ranker with a \
                 number) or `ordering` (every ranker, best first) instead of `winner`",
            ));
        };
        let (first, second) = (first as usize, second as usize);
        let winner = if winner == TIE {
            None
        } else {
            let arm = snap.arm(winner)?;
            if arm != first && arm != second {
                return Err(EngineError::invalid(
                    ErrorCode::WinnerNotInDuel,
                    format!(
                        "`{}` is not a ranker of this duel ({} vs {})",
                        winner, snap.names[first], snap.names[second]
                    ),
                ));
            }
            Some(arm)
        };
        let (pending, name) = pending(claims, snap, winner, Posting::winner());
        Ok((pending, Answer::Winner(name)))
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
            .map_err(|_| EngineError::internal(anyhow::anyhow!("the outcome writer stopped")))?;
        answer
            .await
            .map_err(|_| EngineError::internal(anyhow::anyhow!("the outcome writer stopped")))?
    }

    pub(super) fn finish(
        &self,
        pending: &PendingOutcome,
        answer: Answer,
        written: Written,
    ) -> Result<OutcomeRecord, EngineError> {
        let (winner, outcomes) = match answer {
            Answer::Winner(w) => (Some(w), None),
            Answer::Pairs(p) => (None, Some(p)),
        };
        let record = |status| OutcomeRecord {
            duel_id: pending.duel_id.to_string(),
            experiment_id: pending.experiment_id,
            winner: winner.clone(),
            outcomes: outcomes.clone(),
            status,
        };
        match written {
            Written::Recorded => {
                // Durable, not applied yet: the owner counts `joust_outcomes_applied_total`.
                metrics::counter!("joust_outcomes_acknowledged_total").increment(1);
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
            Written::SetConflict => {
                metrics::counter!("joust_outcomes_rejected_total", "reason" => "conflict")
                    .increment(1);
                Err(EngineError::PairResultsConflict)
            }
            Written::UnknownExperiment => {
                Err(EngineError::UnknownExperiment(pending.experiment_id))
            }
        }
    }

    /// Records one outcome; answers after it is durable.
    pub async fn record_outcome(&self, input: OutcomeInput) -> Result<OutcomeRecord, EngineError> {
        let (pending, answer) = self.prepare(&input).await.inspect_err(count_rejection)?;
        let written = self.write(vec![pending.clone()]).await?;
        self.finish(
            &pending,
            answer,
            written.into_iter().next().expect("one result per outcome"),
        )
    }

    /// Records many outcomes; each gets its own result. Valid outcomes are durable before the
    /// answer even when others in the batch are refused.
    pub async fn record_outcomes(
        &self,
        inputs: Vec<OutcomeInput>,
    ) -> Result<Vec<Result<OutcomeRecord, EngineError>>, EngineError> {
        for (i, input) in inputs.iter().enumerate() {
            if let Err(EngineError::Invalid { code, message }) = input.form() {
                return Err(EngineError::invalid(
                    code,
                    format!("outcomes[{i}]: {message}"),
                ));
            }
        }
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

/// How an outcome was posted, with its posted value as JSON.
pub(super) fn posted<T: serde::Serialize + ?Sized>(posted_as: PostedAs, value: &T) -> Posting {
    Posting {
        posted_as,
        value: Some(serde_json::to_string(value).expect("posted values serialise")),
        method: None,
    }
}

/// The write of a duel's outcome (`winner` `None` for a tie), and the winner's name.
pub(super) fn pending(
    claims: &DuelClaims,
    snap: &Snapshot,
    winner: Option<Arm>,
    mut posting: Posting,
) -> (PendingOutcome, String) {
    // A ranker compared with itself cannot beat itself: record a tie (and keep the posted
    // winner, which the recorded result no longer says).
    let indices = claims.ranker_indices();
    let (first, second) = (indices[0] as Arm, indices[1] as Arm);
    if first == second
        && posting.posted_as == PostedAs::Winner
        && let Some(w) = winner
    {
        posting.value = Some(serde_json::Value::from(snap.names[w].as_str()).to_string());
    }
    let winner = winner.filter(|_| first != second);
    let winner_name = winner.map_or_else(|| TIE.to_string(), |w| snap.names[w].clone());
    (
        PendingOutcome {
            duel_id: claims.duel_uuid(),
            experiment_id: claims.experiment_id,
            first,
            second,
            winner,
            issued_at: issued_at(claims),
            set: None,
            unit: claims.unit,
            segment: claims.segment,
            posting,
            chosen_by: claims.chosen_by,
        },
        winner_name,
    )
}

/// The write of a multi-ranker query's results, and its answer.
pub(super) fn pending_set(
    claims: &DuelClaims,
    snap: &Snapshot,
    set: SetResult,
    posting: Posting,
) -> (PendingOutcome, Answer) {
    let named = set.named(&snap.names);
    let first = set.rankers[0];
    let second = *set.rankers.get(1).unwrap_or(&first);
    (
        PendingOutcome {
            duel_id: claims.duel_uuid(),
            experiment_id: claims.experiment_id,
            first,
            second,
            winner: None,
            issued_at: issued_at(claims),
            set: Some(set),
            unit: claims.unit,
            segment: claims.segment,
            posting,
            chosen_by: claims.chosen_by,
        },
        Answer::Pairs(named),
    )
}

fn issued_at(claims: &DuelClaims) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_millis(claims.issued_at_ms).unwrap_or_default()
}

/// The duel's rankers by name, in token order, with their positions.
fn duel_names<'a>(claims: &DuelClaims, snap: &'a Snapshot) -> Vec<&'a str> {
    claims
        .ranker_indices()
        .iter()
        .map(|&r| snap.names[r as usize].as_str())
        .collect()
}

/// A refusal naming the duel's rankers.
fn not_the_duels_rankers(what: &str, names: &[&str]) -> EngineError {
    let mut distinct: Vec<&str> = names.to_vec();
    distinct.dedup();
    EngineError::invalid(
        ErrorCode::RankersMismatch,
        format!(
            "{what} must name exactly this duel's rankers, each once: {}",
            distinct.join(", ")
        ),
    )
}

/// Each ranker's credit, in token order; every ranker of the duel exactly once.
fn credit_scores(
    claims: &DuelClaims,
    snap: &Snapshot,
    credits: &HashMap<String, f64>,
) -> Result<Vec<f64>, EngineError> {
    let names = duel_names(claims, snap);
    let distinct: std::collections::HashSet<&str> = names.iter().copied().collect();
    if credits.len() != distinct.len() || names.iter().any(|n| !credits.contains_key(*n)) {
        return Err(not_the_duels_rankers("`credits`", &names));
    }
    if let Some((name, c)) = credits.iter().find(|(_, c)| !c.is_finite()) {
        return Err(EngineError::invalid(
            ErrorCode::InvalidCredits,
            format!("the credit of `{name}` must be a finite number, got {c}"),
        ));
    }
    Ok(names.iter().map(|n| credits[*n]).collect())
}

/// Minus each ranker's place in the ordering, in token order; every ranker exactly once.
fn ordering_scores(
    claims: &DuelClaims,
    snap: &Snapshot,
    ordering: &[Rank],
) -> Result<Vec<f64>, EngineError> {
    let names = duel_names(claims, snap);
    let mut place: BTreeMap<&str, usize> = BTreeMap::new();
    let mut listed = 0;
    for (p, rank) in ordering.iter().enumerate() {
        let group: &[String] = match rank {
            Rank::One(name) => std::slice::from_ref(name),
            Rank::Tied(group) => group,
        };
        for name in group {
            listed += 1;
            place.insert(name.as_str(), p);
        }
    }
    let distinct: std::collections::HashSet<&str> = names.iter().copied().collect();
    if listed != distinct.len()
        || place.len() != listed
        || names.iter().any(|n| !place.contains_key(n))
    {
        return Err(not_the_duels_rankers("`ordering`", &names));
    }
    Ok(names.iter().map(|n| -(place[n] as f64)).collect())
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
