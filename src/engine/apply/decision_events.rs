//! What a change of an experiment's decision causes, in the transaction of the change: the stop
//! rule (conclude once decided, with enough outcomes) and the webhook events (`decided`,
//! `champion_changed`, `concluded`) written into the outbox. The outcome writer calls
//! [`after_apply`] once per experiment and group of outcomes; the PATCH of an experiment calls
//! [`after_patch`].
//!
//! Writing the events in the same transaction as the state change means an event exists exactly
//! when its change committed: nothing is announced that did not happen, and nothing that happened
//! goes unannounced, whatever crashes. Delivery is the background task's job
//! (`webhooks::delivery`).

use serde_json::json;
use sqlx::{Postgres, Transaction};
use std::sync::Arc;
use uuid::Uuid;

use crate::bandit::{Arm, Decision};
use crate::store::{experiments, webhooks};

use crate::api::Status;
use crate::engine::EngineError;
use crate::engine::model::Snapshot;
use crate::engine::runtime::now_ms;

/// The events of an experiment's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The decision became decided.
    Decided,
    /// A decided decision now names another champion (or another Copeland set).
    ChampionChanged,
    /// The experiment concluded (by its stop rule or by a PATCH).
    Concluded,
}

impl Event {
    pub fn as_str(self) -> &'static str {
        match self {
            Event::Decided => "decided",
            Event::ChampionChanged => "champion_changed",
            Event::Concluded => "concluded",
        }
    }
}

/// The events a decision causes, given the winners the experiment last announced (`None` when
/// `decided` was never announced): `decided` the first time it is decided, and only then (a
/// decision that lapses and comes back announces nothing more); `champion_changed` when a decided
/// decision names other winners than the last announced.
pub fn decision_events(announced: Option<&[Arm]>, decision: &Decision) -> Vec<Event> {
    match announced {
        _ if !decision.decided => Vec::new(),
        None => vec![Event::Decided],
        Some(w) if w != decision.winners.as_slice() => vec![Event::ChampionChanged],
        Some(_) => Vec::new(),
    }
}

/// After outcomes were applied to `before`, giving `after` (same transaction, not committed):
/// writes the decision's events and, when the stop rule asks, concludes the experiment (setting
/// `after.status` and freezing its decision) and writes `concluded`. A concluded experiment is
/// final: outcomes that still arrive for it (from duels issued before) change neither its status
/// nor its decision, and announce nothing.
pub async fn after_apply(
    tx: &mut Transaction<'_, Postgres>,
    before: &Snapshot,
    after: &mut Snapshot,
) -> Result<(), EngineError> {
    if !acts_after_apply(before, after) {
        return Ok(());
    }
    let decision = after.decision().clone();
    let mut events = if after.webhook_url.is_some() {
        decision_events(after.announced_winners.as_deref(), &decision)
    } else {
        Vec::new()
    };
    if !events.is_empty() {
        let winners: Vec<i32> = decision.winners.iter().map(|&a| a as i32).collect();
        experiments::set_announced_winners(tx, after.id, &winners).await?;
        after.announced_winners = Some(decision.winners.clone());
    }
    if conclude_by_rule(tx, after, &decision).await? {
        events.push(Event::Concluded);
        metrics::counter!("joust_experiments_concluded_by_stop_rule_total").increment(1);
    }
    enqueue(tx, after, &decision, &events).await
}

/// Whether [`after_apply`] may write anything for this application: the experiment had not
/// concluded before it, and something watches its decision.
pub fn acts_after_apply(before: &Snapshot, after: &Snapshot) -> bool {
    before.status != Status::Concluded && watches_decisions(after)
}

/// Whether anything acts on the experiment's decision when outcomes are applied: a stop rule or
/// a webhook. Without either, applying outcomes needs no decision.
pub fn watches_decisions(snap: &Snapshot) -> bool {
    snap.stop_rule.is_some() || snap.webhook_url.is_some()
}

/// Concludes the experiment (in `tx`, and in `after`) when its stop rule is met and it is not
/// concluded yet; returns whether it did.
async fn conclude_by_rule(
    tx: &mut Transaction<'_, Postgres>,
    after: &mut Snapshot,
    decision: &Decision,
) -> Result<bool, EngineError> {
    let met = after
        .stop_rule
        .is_some_and(|rule| rule.concludes(decision.decided, after.outcomes_applied));
    if !met || after.status == Status::Concluded {
        return Ok(false);
    }
    experiments::set_status(tx, after.id, Status::Concluded.as_str()).await?;
    after.status = Status::Concluded;
    freeze(tx, after, decision).await?;
    Ok(true)
}

/// Stores `decision` as the final decision of the concluded experiment `snap` (in `tx`, and in
/// `snap`): what it reports and serves from now on.
async fn freeze(
    tx: &mut Transaction<'_, Postgres>,
    snap: &mut Snapshot,
    decision: &Decision,
) -> Result<(), EngineError> {
    let value = serde_json::to_value(decision).expect("a decision serialises");
    experiments::set_final_decision(tx, snap.id, &value).await?;
    snap.final_decision = Some(Arc::new(decision.clone()));
    Ok(())
}

/// After a PATCH changed an experiment (same transaction, not committed; `after` is the new
/// state and `was` the status before): a stop rule that the experiment already satisfies
/// concludes it now, and a conclusion (asked for, or by the rule) writes `concluded`.
pub async fn after_patch(
    tx: &mut Transaction<'_, Postgres>,
    was: Status,
    after: &mut Snapshot,
) -> Result<(), EngineError> {
    if was == Status::Concluded {
        return Ok(());
    }
    let decision = after.decision().clone();
    conclude_by_rule(tx, after, &decision).await?;
    if after.status == Status::Concluded {
        if after.final_decision.is_none() {
            // Concluded by the PATCH itself.
            freeze(tx, after, &decision).await?;
        }
        enqueue(tx, after, &decision, &[Event::Concluded]).await?;
    }
    Ok(())
}

/// Writes `events` into the outbox when the experiment has a webhook.
async fn enqueue(
    tx: &mut Transaction<'_, Postgres>,
    snap: &Snapshot,
    decision: &Decision,
    events: &[Event],
) -> Result<(), EngineError> {
    if events.is_empty() || snap.webhook_url.is_none() {
        return Ok(());
    }
    let bodies: Vec<(Uuid, Event, String)> = events
        .iter()
        .map(|&e| {
            let id = event_id(snap, e);
            (id, e, body(snap, decision, e, id))
        })
        .collect();
    let rows: Vec<webhooks::NewEvent> = bodies
        .iter()
        .map(|(id, e, body)| webhooks::NewEvent {
            event_id: *id,
            experiment_id: snap.id,
            event: e.as_str(),
            body,
        })
        .collect();
    webhooks::enqueue(tx, &rows).await?;
    for e in events {
        metrics::counter!("joust_webhook_events_total", "event" => e.as_str()).increment(1);
    }
    Ok(())
}

/// An event's id, derived from the experiment, the state version whose change caused it and the
/// event: an application redone after a database crash (applications commit without waiting for
/// their flush) announces the same event under the same id, so a receiver that drops repeated
/// ids (`Joust-Event-Id`) handles it once.
fn event_id(snap: &Snapshot, event: Event) -> Uuid {
    use sha2::{Digest, Sha256};
    let digest = Sha256::new()
        .chain_update(snap.id.to_be_bytes())
        .chain_update(snap.version.to_be_bytes())
        .chain_update(event.as_str().as_bytes())
        .finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}

/// The JSON an event posts.
fn body(snap: &Snapshot, decision: &Decision, event: Event, id: Uuid) -> String {
    let name = |a: usize| snap.names[a].as_str();
    let at = chrono::DateTime::from_timestamp_millis(now_ms()).unwrap_or_default();
    json!({
        "event_id": id.to_string(),
        "event": event.as_str(),
        "experiment_id": snap.id,
        "experiment_name": snap.name,
        "at": at,
        "status": snap.status.as_str(),
        "decided": decision.decided,
        "kind": decision.kind,
        "champion": decision.champion.map(name),
        "winners": decision.winners.iter().map(|&a| name(a)).collect::<Vec<_>>(),
        "outcomes_applied": snap.outcomes_applied,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::DecisionKind;

    fn decision(decided: bool, winners: &[usize]) -> Decision {
        Decision {
            decided,
            kind: DecisionKind::Condorcet,
            champion: if decided && winners.len() == 1 {
                Some(winners[0])
            } else {
                None
            },
            winners: winners.to_vec(),
            possible_best: Vec::new(),
            outcomes_needed: None,
        }
    }

    #[test]
    fn decided_is_announced_once_and_a_new_champion_is_a_change() {
        let open = decision(false, &[]);
        let a = decision(true, &[0]);
        let b = decision(true, &[2]);
        let copeland = decision(true, &[0, 2]);
        let none: Vec<Event> = Vec::new();
        // Never announced: undecided says nothing, decided is `decided`.
        assert_eq!(decision_events(None, &open), none);
        assert_eq!(decision_events(None, &a), [Event::Decided]);
        assert_eq!(decision_events(None, &copeland), [Event::Decided]);
        // Announced 0: the same winners again (also after the decision lapsed, which announces
        // nothing) say nothing; other winners are `champion_changed`, never `decided` again.
        assert_eq!(decision_events(Some(&[0]), &a), none);
        assert_eq!(decision_events(Some(&[0]), &open), none);
        assert_eq!(decision_events(Some(&[0]), &b), [Event::ChampionChanged]);
        assert_eq!(
            decision_events(Some(&[0]), &copeland),
            [Event::ChampionChanged]
        );
        assert_eq!(decision_events(Some(&[0, 2]), &copeland), none);
    }
}
