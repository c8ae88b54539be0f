//! Applying conversions and closing windows: each conversion metric's outcome of a duel, decided
//! once by the experiment's owner, after the outcomes it has applied ([`super::owners`]).
//!
//! - A metric credited by the **first** event is decided when that event's conversion is
//!   applied: the method credits one click on its document.
//! - A metric credited by **all** events or by **value** is decided when its window closes
//!   ([`CLOSE_GRACE`] after its end, by the service clock): the method credits every converted
//!   document (weighted by the events' values for `value`).
//! - A window that closes with no event is a tie for a metric with `missing: tie` (for a duel
//!   whose outcome was reported: reporting it is what opens it), and counts nothing otherwise.
//!
//! Exactly once: conversions are taken after the experiment's conversion cursor and below the
//! horizon, as outcome rows are, and the transaction that counts them moves the cursor only if
//! it is still where the application read it; every decision is written with
//! `decided_at IS NULL` as its condition, and the transaction rolls back if any was decided
//! meanwhile. Cursor, decisions and counts commit together or not at all. When the primary
//! metric is a conversion metric, the policy learns here, and the state write is fenced by its
//! version like an application of outcomes.

use rand::SeedableRng;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use crate::bandit::{Arm, BanditRng, Outcome, Pair};
use crate::interleave::{Interleaving, Outcome as Side, SoftOutcome};
use crate::store;
use crate::store::apply::{self as store_apply, PendingRow, StateWrite};
use crate::store::conversions::{self, PendingConversion};
use crate::store::counts::metrics::{self as metric_counts, MetricDuel};

use crate::engine::EngineError;
use crate::engine::model::{PersistedPolicy, Snapshot, update_rng};
use crate::engine::runtime::offload;
use crate::engine::settings::{Credit, Metric, Missing, add_cells};

/// How long after a window's end it is closed: conversions acknowledged just before the end
/// (their transaction still committing) are in by then.
pub const CLOSE_GRACE: Duration = Duration::from_secs(30);
/// Most conversions, and most closing windows, taken by one application.
const MAX_TAKEN: i64 = 5_000;

/// What one metric step did.
pub enum MetricStep {
    /// Nothing to apply or close now.
    Idle,
    /// Applied: the new snapshot, as written.
    Written(Box<Snapshot>),
    /// Another application got there first: nothing was written; reload and try again.
    Stale,
}

/// The conversion metrics' outcomes that applying these outcome rows opens.
pub fn to_open(base: &Snapshot, rows: &[PendingRow]) -> Vec<MetricDuel> {
    let mut out = Vec::new();
    for m in base.metrics.conversion_metrics() {
        for row in rows.iter().filter(|r| r.set.is_none()) {
            out.push(open_of(m, row.at.1, row.first, row.second, row.issued_at));
        }
    }
    out
}

fn open_of(
    m: &Metric,
    duel: uuid::Uuid,
    first: i32,
    second: i32,
    issued_at: chrono::DateTime<chrono::Utc>,
) -> MetricDuel {
    MetricDuel {
        metric: m.name.clone(),
        duel,
        first,
        second,
        closes_at: issued_at + chrono::Duration::seconds(m.window_seconds.unwrap_or(0)),
    }
}

/// A count cell: (winner, loser, n) or (a, b, n) for ties.
type Cell = (i32, i32, i64);
/// One metric's win and tie cells of an application.
type MetricCells = (String, Vec<Cell>, Vec<Cell>);

/// One decided metric outcome: 1 the first ranker won, -1 the second, 0 a tie, `None` nothing.
struct Decided {
    metric: String,
    duel: uuid::Uuid,
    first: i32,
    second: i32,
    result: Option<i16>,
}

/// Applies the experiment's pending conversions and closes its windows that ended before `now`.
pub async fn step(
    pool: &sqlx::PgPool,
    base: Arc<Snapshot>,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<MetricStep, EngineError> {
    if base.metrics.conversion_metrics().next().is_none() {
        return Ok(MetricStep::Idle);
    }
    let id = base.id;
    let from = base.conversions_through;
    let pending = conversions::pending(pool, id, from, MAX_TAKEN).await?;
    let grace = chrono::Duration::from_std(CLOSE_GRACE).expect("a short duration");
    let due = metric_counts::due(pool, id, now - grace, MAX_TAKEN).await?;
    if pending.is_empty() && due.is_empty() {
        return Ok(MetricStep::Idle);
    }
    let through = pending.last().map_or(from, |c| c.at);

    let mut to_open = Vec::new();
    let mut seen = HashSet::new();
    let mut firsts: Vec<&PendingConversion> = Vec::new();
    for c in &pending {
        let Some(m) = base.metrics.get(&c.metric) else {
            continue;
        };
        if seen.insert((c.metric.clone(), c.duel_id)) {
            to_open.push(open_of(m, c.duel_id, c.first, c.second, c.issued_at));
            if m.credit == Credit::First {
                firsts.push(c);
            }
        }
    }
    let keys: Vec<(String, uuid::Uuid)> = firsts
        .iter()
        .map(|c| (c.metric.clone(), c.duel_id))
        .collect();
    let already: HashSet<(String, uuid::Uuid)> = metric_counts::decided(pool, id, &keys)
        .await?
        .into_iter()
        .collect();
    let mut decisions = Vec::new();
    let mut deciding = HashSet::new();
    for c in firsts {
        let key = (c.metric.clone(), c.duel_id);
        if already.contains(&key) {
            continue;
        }
        let m = base.metrics.get(&c.metric).expect("checked above");
        decisions.push(Decided {
            metric: c.metric.clone(),
            duel: c.duel_id,
            first: c.first,
            second: c.second,
            result: judge(m, &[c]),
        });
        deciding.insert(key);
    }
    for d in due {
        if deciding.contains(&(d.metric.clone(), d.duel)) {
            continue;
        }
        let result = match base.metrics.get(&d.metric) {
            // A metric the experiment no longer has (none can be removed today): nothing.
            None => None,
            Some(m) => {
                let events = if m.credit == Credit::First {
                    // Not decided by a first event before its window closed: it had none.
                    Vec::new()
                } else {
                    conversions::of_duel(pool, id, &d.metric, d.duel, through).await?
                };
                if events.is_empty() {
                    (m.missing == Missing::Tie).then_some(0)
                } else {
                    judge(m, &events.iter().collect::<Vec<_>>())
                }
            }
        };
        deciding.insert((d.metric.clone(), d.duel));
        decisions.push(Decided {
            metric: d.metric,
            duel: d.duel,
            first: d.first,
            second: d.second,
            result,
        });
    }
    write(pool, base, from, through, &to_open, &decisions).await
}

/// Writes one application, fenced by the state version it started from: the conversion cursor,
/// the opened and decided outcomes, the counts and, when the primary metric is a conversion
/// metric, the policy's state. The version moves, so every replica reloads the counts.
async fn write(
    pool: &sqlx::PgPool,
    base: Arc<Snapshot>,
    from: conversions::ConversionCursor,
    through: conversions::ConversionCursor,
    to_open: &[MetricDuel],
    decisions: &[Decided],
) -> Result<MetricStep, EngineError> {
    let id = base.id;
    let primary = base.metrics.primary().name.clone();
    let learns = !base.metrics.click_is_primary();
    let mut cells: BTreeMap<&str, Cells> = BTreeMap::new();
    let mut learned = Vec::new();
    for d in decisions {
        let Some(r) = d.result else { continue };
        cells
            .entry(d.metric.as_str())
            .or_default()
            .add(d.first, d.second, r);
        if learns && d.metric == primary {
            learned.push((d.first, d.second, r));
        }
    }
    let size = base.names.len().max(learned.len());
    let other: Vec<MetricCells> = cells
        .iter()
        .filter(|(m, _)| !(learns && **m == primary))
        .map(|(m, c)| (m.to_string(), c.wins(), c.ties()))
        .collect();
    let moved = other.clone();
    let (snap, policy_state, applied, ties) = offload(size, move || {
        let (mut snap, policy_state, applied, ties) = learn(&base, &learned);
        let mut matrices = (*snap.metric_wins).clone();
        for (m, wins, ties) in &moved {
            if let Some(w) = matrices.get_mut(m) {
                add_cells(w, wins, ties);
            }
        }
        snap.metric_wins = Arc::new(matrices);
        snap.conversions_through = through;
        (snap, policy_state, applied, ties)
    })
    .await;
    // Derived from durable rows (conversions) and the clock: after a crash before the flush,
    // the same application is made again.
    let mut tx = store_apply::begin_without_flush(pool).await?;
    // The policy's metric's counts are written with the state.
    let (win_cells, tie_cells) = match cells.get(primary.as_str()).filter(|_| learns) {
        Some(c) => (c.wins(), c.ties()),
        None => (Vec::new(), Vec::new()),
    };
    let write = StateWrite {
        experiment: id,
        from_version: snap.version - 1,
        applications: vec![(snap.version, snap.applied_through)],
        policy_state,
        applied,
        ties,
        at: snap.updated_at,
        win_cells,
        tie_cells,
    };
    // The state row first: its lock orders this write after any other, and a stale base stops
    // here, before anything else is written.
    let fenced = store_apply::write_state(&mut tx, &write).await?.is_some()
        && conversions::advance_cursor(&mut tx, id, from, through).await?;
    if !fenced {
        tx.rollback().await.map_err(store::StoreError::from)?;
        return Ok(MetricStep::Stale);
    }
    metric_counts::open(&mut tx, id, to_open).await?;
    for d in decisions {
        if !metric_counts::decide(&mut tx, id, &d.metric, d.duel, d.result).await? {
            tx.rollback().await.map_err(store::StoreError::from)?;
            return Ok(MetricStep::Stale);
        }
    }
    for (metric, wins, ties) in &other {
        metric_counts::add(&mut tx, id, metric, wins, ties).await?;
    }
    tx.commit().await.map_err(store::StoreError::from)?;
    for d in decisions {
        let result = match d.result {
            Some(0) => "tie",
            Some(_) => "win",
            None => "none",
        };
        metrics::counter!("joust_metric_outcomes_total", "metric" => d.metric.clone(), "result" => result)
            .increment(1);
    }
    Ok(MetricStep::Written(Box::new(snap)))
}

/// The next snapshot with the primary metric's outcomes learned by the policy (none when the
/// primary metric is `click`), its persisted policy, and the decided outcomes and ties it adds.
fn learn(base: &Snapshot, learned: &[(i32, i32, i16)]) -> (Snapshot, serde_json::Value, i64, i64) {
    let mut snap = base.clone();
    let mut rng = update_rng(snap.seed, snap.version);
    let (mut applied, mut ties) = (0, 0);
    for &(first, second, r) in learned {
        let outcome = match r {
            1 => Outcome::FirstWins,
            -1 => Outcome::SecondWins,
            _ => Outcome::Tie,
        };
        let pair = Pair::new(first as Arm, second as Arm);
        match snap.state.record(pair, outcome, &mut rng) {
            Ok(()) if r == 0 || first == second => ties += 1,
            Ok(()) => applied += 1,
            Err(e) => {
                metrics::counter!("joust_outcomes_unapplied_total").increment(1);
                tracing::error!(error = %e, "a metric outcome could not be applied");
            }
        }
    }
    let policy_state = PersistedPolicy::to_json(&snap.state);
    snap.version = base.version + 1;
    snap.outcomes_applied += applied;
    snap.ties_applied += ties;
    snap.updated_at = Snapshot::write_time();
    (snap, policy_state, applied, ties)
}

/// One metric's win and tie cells of an application.
#[derive(Default)]
struct Cells {
    wins: BTreeMap<(i32, i32), i64>,
    ties: BTreeMap<(i32, i32), i64>,
}

impl Cells {
    fn add(&mut self, first: i32, second: i32, result: i16) {
        match result {
            _ if first == second => {
                *self.ties.entry((first, first)).or_default() += 1;
            }
            1 => *self.wins.entry((first, second)).or_default() += 1,
            -1 => *self.wins.entry((second, first)).or_default() += 1,
            _ => {
                *self
                    .ties
                    .entry((first.min(second), first.max(second)))
                    .or_default() += 1
            }
        }
    }

    fn wins(&self) -> Vec<(i32, i32, i64)> {
        self.wins.iter().map(|(&(w, l), &n)| (w, l, n)).collect()
    }

    fn ties(&self) -> Vec<(i32, i32, i64)> {
        self.ties.iter().map(|(&(a, b), &n)| (a, b, n)).collect()
    }
}

/// The outcome of a duel under `metric` from its events (in apply order, at least one): 1 when
/// the first ranker (the interleaving's A) wins, -1 when the second does, 0 for a tie; `None`
/// when the stored interleaving cannot be read (only a bug gets there).
fn judge(metric: &Metric, events: &[&PendingConversion]) -> Option<i16> {
    let first = events.first()?;
    let interleaving: Interleaving<String> = match serde_json::from_value(
        first.interleaving.clone(),
    ) {
        Ok(i) => i,
        Err(e) => {
            tracing::error!(duel = %first.duel_id, error = %e, "a conversion's interleaving could not be read");
            return None;
        }
    };
    let events: Vec<(usize, f64)> = events
        .iter()
        .map(|c| (c.position.max(0) as usize, c.value.unwrap_or(1.0)))
        .collect();
    let soft = credit(&interleaving, metric.credit, &events);
    let mut rng = duel_metric_rng(first.duel_id, &metric.name);
    Some(match soft.sample(&mut rng) {
        Side::A => 1,
        Side::B => -1,
        Side::Tie => 0,
    })
}

/// The method's judgement of events `(position, value)` under a credit rule.
pub fn credit(
    interleaving: &Interleaving<String>,
    rule: Credit,
    events: &[(usize, f64)],
) -> SoftOutcome {
    match rule {
        Credit::First => match events.first() {
            Some(&(p, _)) => interleaving.soft_outcome(&[p]),
            None => SoftOutcome::TIE,
        },
        Credit::All => {
            let positions: Vec<usize> = events.iter().map(|e| e.0).collect();
            interleaving.soft_outcome(&positions)
        }
        Credit::Value => interleaving.value_weighted(events),
    }
}

/// The generator of a duel's draw under one metric: seeded by the duel and the metric, so the
/// same events always give the same outcome (a probabilistic method's judgement is drawn, as
/// for clicks, to keep its fairness).
fn duel_metric_rng(duel: uuid::Uuid, metric: &str) -> BanditRng {
    let (hi, lo) = duel.as_u64_pair();
    let h = metric.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    BanditRng::seed_from_u64(hi ^ lo.rotate_left(17) ^ h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interleave::{Method, interleave};

    fn team_draft() -> Interleaving<String> {
        let a: Vec<String> = ["a1", "a2", "a3"].iter().map(|s| s.to_string()).collect();
        let b: Vec<String> = ["b1", "b2", "b3"].iter().map(|s| s.to_string()).collect();
        let method = Method::from_name("team_draft").unwrap();
        interleave(&method, &[&a, &b], 6, &mut BanditRng::seed_from_u64(7)).unwrap()
    }

    fn position(i: &Interleaving<String>, doc: &str) -> usize {
        i.shown().iter().position(|d| d == doc).unwrap()
    }

    #[test]
    fn each_rule_credits_the_rankers_documents() {
        let i = team_draft();
        let (a1, b1, b2) = (position(&i, "a1"), position(&i, "b1"), position(&i, "b2"));
        // First: the first event decides, whatever follows.
        assert_eq!(
            credit(&i, Credit::First, &[(a1, 1.0), (b1, 1.0), (b2, 1.0)]),
            SoftOutcome::A
        );
        // All: two documents of B against one of A.
        assert_eq!(
            credit(&i, Credit::All, &[(a1, 1.0), (b1, 1.0), (b2, 1.0)]),
            SoftOutcome::B
        );
        // Value: one large order from A's document outweighs two small ones from B's.
        assert_eq!(
            credit(&i, Credit::Value, &[(a1, 100.0), (b1, 10.0), (b2, 10.0)]),
            SoftOutcome::A
        );
        assert_eq!(
            credit(&i, Credit::Value, &[(a1, 10.0), (b1, 10.0)]),
            SoftOutcome::TIE
        );
    }
}
