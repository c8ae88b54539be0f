//! Applying acknowledged outcomes to one experiment's state: the policy's updates in apply order,
//! then the state, the counts, the cursor and a history point when one is due, written back in
//! one transaction. Only the experiment's owner calls this ([`super::owners`]); the write is
//! fenced by the state version it started from, so even two replicas that both believed they
//! owned the experiment could not apply an outcome twice.
//!
//! The transaction commits without waiting for its WAL flush (`synchronous_commit = off`): what
//! it writes is derived from outcome rows that are durable already. Should Postgres crash before
//! the flush, it comes back with an earlier state and cursor, consistently (the whole
//! transaction or none of it), and the owner applies those rows again. The rows may be grouped
//! otherwise this time (more have arrived), so a version number the lost state had is written
//! again with other contents; [`Snapshot::write_mark`] tells the two apart. So an application
//! costs no disk flush of its own, and acknowledgements, which do wait for theirs, do not queue
//! behind it.

use std::sync::Arc;

use crate::bandit::{Arm, BanditRng, BanditState, Outcome, Pair};
use crate::store;
use crate::store::apply::{self as store_apply, PendingRow, StateWrite};

use super::checkpoint::{self, Counted, Unwritten};
use super::checkpoint_writer::CheckpointWriter;
use super::history::{self, HistoryClock};
use super::{decision_events, metric_outcomes, segment_counts, unit_evidence};
use crate::engine::EngineError;
use crate::engine::model::{PersistedPolicy, SetResult, Snapshot, update_rng};
use crate::engine::runtime::offload;
use crate::engine::settings::{self, CLICK};

/// What one application did.
pub enum Applied {
    /// The new state, as written and committed.
    Written(Box<Snapshot>),
    /// The new state, applied in memory only ([`super::checkpoint`]): ahead of the stored
    /// version, with what the next write adds.
    Held(Box<Snapshot>, Unwritten),
    /// The state changed since `base` was read (an administrative change, or another replica
    /// that owned the experiment meanwhile): nothing was written; reload and try again.
    Stale,
}

/// Applies `rows` (in apply order, all after `base.applied_through`) to `base` and writes the
/// result back in one transaction, with `held`, the applications made on the stored version in
/// memory since (they made `base`); or, when the application writes nothing but the state and
/// its counts and `interval` allows, holds it in memory too ([`super::checkpoint`]). Such a
/// write, when it cannot be held, goes with other experiments' to `writer`, at once when no
/// interval is allowed (a graceful stop waits for it).
pub async fn apply_outcomes(
    pool: &sqlx::PgPool,
    writer: &CheckpointWriter,
    history: &HistoryClock,
    base: Arc<Snapshot>,
    rows: Vec<PendingRow>,
    held: Option<Unwritten>,
    interval: std::time::Duration,
) -> Result<Applied, EngineError> {
    let Some(through) = rows.last().map(|r| r.at) else {
        return Ok(Applied::Stale);
    };
    let id = base.id;
    let now = std::time::Instant::now();
    let may_hold = checkpoint::may_hold(held.as_ref(), rows.len(), interval, now);
    let n_rows = rows.len();
    // The write is fenced by the stored version the unwritten applications started from.
    let stored = base.stored_tag();
    let from_version = stored.0;
    // A history point at most once per interval, written with the state.
    let with_point = history.claim(id, std::time::Instant::now());
    // Everything that grows with the number of rankers happens here, before the transaction and
    // off the runtime for a large experiment or a large group of rows: copying the state, applying the outcomes,
    // serialising the result and the history point's champion report. The transaction then only
    // writes, so it stays short however large the experiment (while it runs it holds back the
    // horizon below which every experiment's outcomes are applied).
    // The work also grows with the rows: a backlog of thousands after a burst of batches must not
    // hold an async worker that serves requests, so a large group goes to the blocking pool too.
    let size = base.names.len().max(rows.len());
    // The conversion metrics' outcomes of these duels open; their windows close later.
    let to_open = metric_outcomes::to_open(&base, &rows);
    let opens = !to_open.is_empty();
    let (base, mut snap, counted, alone, policy_state, point, segment_cells, unit_compared) =
        offload(size, move || {
            let mut snap = (*base).clone();
            // The decision after the outcomes, for the stop rule and the webhook events below:
            // computed here, off the runtime, since it grows with the number of rankers, and only for
            // an experiment that has either (readers compute a version's decision once, when they
            // first ask, as they do its champion report).
            let watched = decision_events::watches_decisions(&base);
            let mut rng = update_rng(snap.seed, snap.version);
            // The policy learns from the primary metric only: when that is a conversion metric,
            // outcomes are the `click` metric's counts and leave the policy as it is.
            let counted = if base.metrics.click_is_primary() {
                apply(&mut snap.state, &rows, &mut rng)
            } else {
                count_only(&rows)
            };
            let segment_cells = segment_counts::count(&rows);
            let unit_compared = unit_evidence::comparisons(&rows);
            // The next version: the write below is fenced on the stored one, `from_version`.
            snap.version = base.version + 1;
            if base.metrics.click_is_primary() {
                snap.outcomes_applied += counted.applied;
                snap.ties_applied += counted.ties;
            } else {
                let mut matrices = (*snap.metric_wins).clone();
                if let Some(w) = matrices.get_mut(CLICK) {
                    settings::add_cells(w, &counted.win_cells(), &counted.tie_cells());
                }
                snap.metric_wins = Arc::new(matrices);
            }
            snap.applied_through = through;
            snap.updated_at = Snapshot::write_time();
            let point = with_point.then(|| history::point_of(&snap));
            if watched {
                snap.decision();
            }
            // Most applications write the state row and its counts only: held in memory while
            // the interval allows, else one statement, its own transaction. Anything more
            // (another metric's counts, conversions to open, segment or unit counts, the
            // decision's events, a history point) goes in one transaction with it.
            let alone = base.metrics.click_is_primary()
                && !opens
                && segment_cells.is_empty()
                && unit_evidence::evidence_to_add(&snap, &unit_compared).is_none()
                && !decision_events::acts_after_apply(&base, &snap)
                && point.is_none();
            // A held application writes nothing yet, so its state is not serialised.
            let policy_state =
                (!(alone && may_hold)).then(|| PersistedPolicy::to_json(&snap.state));
            (
                base,
                snap,
                counted,
                alone,
                policy_state,
                point,
                segment_cells,
                unit_compared,
            )
        })
        .await;

    let learned = base.metrics.click_is_primary();
    let Some(policy_state) = policy_state else {
        snap.ahead_of = Some(stored);
        let mut held = held.unwrap_or_else(|| Unwritten::starting(now));
        held.add(&snap, n_rows, counted);
        return Ok(Applied::Held(Box::new(snap), held));
    };
    // What the held applications counted, and this one's counts when the policy learned them
    // (otherwise they are the `click` metric's, written below).
    let mut applications = Vec::new();
    let mut carried = Counted::default();
    if let Some(held) = held {
        applications = held.applications;
        carried = held.counted;
    }
    applications.push((snap.version, through));
    let (metric_wins, metric_ties) = (counted.win_cells(), counted.tie_cells());
    if learned {
        carried.merge(counted);
    }
    let (wins, ties) = (carried.win_cells(), carried.tie_cells());
    snap.ahead_of = None;
    let write = StateWrite {
        experiment: id,
        from_version,
        applications,
        policy_state,
        applied: carried.applied,
        ties: carried.ties,
        at: snap.updated_at,
        win_cells: wins,
        tie_cells: ties,
    };
    if alone {
        return Ok(match writer.write(write, interval.is_zero()).await? {
            Some(_) => Applied::Written(Box::new(snap)),
            None => Applied::Stale,
        });
    }
    let mut tx = store_apply::begin_without_flush(pool).await?;
    // The state row first: its lock orders this write after any other, and a stale base stops
    // here, before anything else is written.
    if store_apply::write_state(&mut tx, &write).await?.is_none() {
        tx.rollback().await.map_err(store::StoreError::from)?;
        return Ok(Applied::Stale);
    }
    if !learned {
        store::counts::metrics::add(&mut tx, id, CLICK, &metric_wins, &metric_ties).await?;
    }
    store::counts::metrics::open(&mut tx, id, &to_open).await?;
    segment_counts::add_counts(&mut tx, &mut snap, &segment_cells).await?;
    unit_evidence::add_votes(&mut tx, &mut snap, &unit_compared).await?;
    // The stop rule and the webhook events, in this same transaction.
    decision_events::after_apply(&mut tx, &base, &mut snap).await?;
    if let Some(point) = &point {
        store::history::record(&mut tx, id, history.interval().as_secs_f64(), point).await?;
    }
    tx.commit().await.map_err(store::StoreError::from)?;
    Ok(Applied::Written(Box::new(snap)))
}

/// Writes the applications `held` in memory since the stored version `from_version`: `base` is
/// the snapshot the last of them made. Its version and write time are written as they are, so
/// answers tagged with them stay current. `None` when the stored version changed meanwhile:
/// nothing was written. The write goes with other experiments' to `writer`; `urgent` when
/// something waits for it.
pub async fn write_held(
    writer: &CheckpointWriter,
    base: Arc<Snapshot>,
    from_version: i64,
    held: Unwritten,
    urgent: bool,
) -> Result<Option<Box<Snapshot>>, EngineError> {
    let (mut snap, policy_state) = offload(base.names.len(), move || {
        let policy_state = PersistedPolicy::to_json(&base.state);
        ((*base).clone(), policy_state)
    })
    .await;
    snap.ahead_of = None;
    let (wins, ties) = (held.counted.win_cells(), held.counted.tie_cells());
    let write = StateWrite {
        experiment: snap.id,
        from_version,
        applications: held.applications,
        policy_state,
        applied: held.counted.applied,
        ties: held.counted.ties,
        at: snap.updated_at,
        win_cells: wins,
        tie_cells: ties,
    };
    let written = writer.write(write, urgent).await?;
    Ok(written.map(|_| Box::new(snap)))
}

/// The cells of the rows, for an experiment whose policy does not learn from them.
fn count_only(rows: &[PendingRow]) -> Counted {
    let mut c = Counted::default();
    for row in rows {
        c.add(row);
    }
    c
}

/// Applies the rows in order. A row the state refuses (it was checked against the experiment
/// when acknowledged, so only a bug gets here) changes nothing, is logged and is passed over:
/// one bad row must not stop every later outcome of the experiment.
fn apply(state: &mut BanditState, rows: &[PendingRow], rng: &mut BanditRng) -> Counted {
    let mut c = Counted::default();
    for row in rows {
        let recorded = match &row.set {
            Some((rankers, results)) => {
                let set = SetResult {
                    rankers: rankers.iter().map(|&r| r as Arm).collect(),
                    results: results.clone(),
                };
                state.record_set(&set.rankers, &set.to_outcome(), rng)
            }
            None => {
                let (first, second) = (row.first as Arm, row.second as Arm);
                // The token kept the duel in the order it was selected, so the policy learns
                // the sides.
                let outcome = match row.winner {
                    Some(w) if w == row.first => Outcome::FirstWins,
                    Some(_) => Outcome::SecondWins,
                    None => Outcome::Tie,
                };
                state.record(Pair::new(first, second), outcome, rng)
            }
        };
        match recorded {
            Ok(()) => c.add(row),
            Err(e) => {
                metrics::counter!("joust_outcomes_unapplied_total").increment(1);
                tracing::error!(duel = %row.at.1, error = %e, "an acknowledged outcome could not be applied");
            }
        }
    }
    c
}
