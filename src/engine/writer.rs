//! The acknowledgement pipeline. Outcomes from all requests queue here; the writer takes
//! everything queued (up to a cap) as one group and inserts it in one statement, committed on its
//! own (the duel id is unique, so a retry inserts nothing; the same statement checks that the
//! experiments still exist), and only then answers every waiting request.
//! That durable insert is the acknowledgement: no experiment's state is locked or read on the
//! way, so replicas acknowledging the same experiment do not wait for one another, and a slow
//! experiment delays no other's answers. Applying the outcomes to the bandit state follows off
//! the request path, by the experiment's owner ([`super::owners`]). While one group commits the
//! next queues up, so the group size follows the load with no fixed delay.
//!
//! Two large groups are in flight at once, so Postgres inserts one while joust prepares the
//! next. Rows are inserted in duel-id order, so two groups that share a duel (a retry) wait for
//! one another in one order only and cannot deadlock; the later one then finds the duel
//! recorded, exactly as a retry after a commit would.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, mpsc, oneshot};
use uuid::Uuid;

use crate::bandit::Arm;
use crate::store::apply::Cursor;
use crate::store::outcomes::{self, OutcomeRow, Recorded};

use super::EngineError;
use super::owners::Owners;
use super::set_result::SetResult;

/// Largest number of outcomes inserted in one transaction.
pub const MAX_GROUP: usize = 20_000;
/// Groups written concurrently: one inserting rows while joust prepares or answers the other.
const GROUPS_IN_FLIGHT: usize = 2;
/// Smallest group that starts while another is in flight. Measured with `scripts/bench-http`:
/// pipelining every group lifts batches of 1,000 from 96,000 to 110,000 outcomes/s but drops
/// single outcomes from 15,000 to 8,400/s (each small group then pays its own commit), so small
/// groups wait and grow instead.
const PIPELINE_MIN: usize = 1_000;

/// Least duration of the last group's commit for a small group to linger (see [`Pace`]).
const LINGER_MIN_COMMIT: Duration = Duration::from_millis(2);
/// How long a small group lingers: one tick of the runtime's timer (1 ms), about what a client
/// answered by the last group needs to ask its next duel and post its outcome on a busy machine.
const LINGER: Duration = Duration::from_millis(1);
/// Groups at least this large do not linger: their commit is shared widely enough, and with
/// lingering `scripts/bench-http`'s 64 clients posting single outcomes (groups of tens) ran at
/// 0.47-0.74x the rate without it (2 alternating runs on the shared machine), a timer tick
/// there lasting much longer than 1 ms.
const LINGER_BELOW: usize = 8;
/// A group that starts within this of the last one's end counts as under load.
const UNDER_LOAD: Duration = Duration::from_millis(20);

/// How the last group went, for the next one's linger. Under a steady load of requests that each
/// wait for their answer, the clients split into cohorts: those answered by one group come back
/// while the next commits, so each group holds a fraction of the clients and every commit costs
/// the database and the writer the same whatever its size. With several replicas each writer
/// sees only its share of the clients, so the groups shrank with every replica added and the
/// commits per outcome grew (docs/benchmarks.md). A group of a few therefore waits one timer tick
/// when commits are slow (at least [`LINGER_MIN_COMMIT`], so the wait is at most half of one)
/// and the last group ended just now: the cohort answered last joins it.
#[derive(Default)]
struct Pace {
    last_end: Option<Instant>,
    last_commit: Duration,
}

impl Pace {
    fn linger(&self, now: Instant, group: usize) -> Option<Duration> {
        let recent = self
            .last_end
            .is_some_and(|end| now.duration_since(end) < UNDER_LOAD);
        (group < LINGER_BELOW && recent && self.last_commit >= LINGER_MIN_COMMIT).then_some(LINGER)
    }
}

/// One outcome waiting to be written.
#[derive(Debug, Clone)]
pub struct PendingOutcome {
    pub duel_id: Uuid,
    pub experiment_id: i64,
    pub first: Arm,
    pub second: Arm,
    /// `None` for a tie (and for a multi-ranker query, whose results are in `set`).
    pub winner: Option<Arm>,
    pub issued_at: chrono::DateTime<chrono::Utc>,
    /// A multi-ranker query's pair results; `None` for a two-ranker duel.
    pub set: Option<SetResult>,
    /// The unit's keyed hash and the segment index the duel token carried.
    pub unit: Option<[u8; crate::engine::token::UNIT_HASH_LEN]>,
    pub segment: Option<u16>,
}

impl PendingOutcome {
    /// What a retry must match to be a duplicate: the stored form of this outcome.
    fn recorded_form(&self) -> Recorded {
        (
            self.winner.map(|w| w as i32),
            self.set.as_ref().map(|s| s.results.clone()),
        )
    }

    /// How this outcome compares with what is on record for its duel.
    fn judge(&self, recorded: &Recorded) -> Written {
        if *recorded == self.recorded_form() {
            Written::Duplicate
        } else if self.set.is_some() || recorded.1.is_some() {
            Written::SetConflict
        } else {
            Written::Conflict(recorded.0.map(|w| w as Arm))
        }
    }
}

/// What happened to one outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// Newly recorded (durable; applied soon after by the experiment's owner).
    Recorded,
    /// The same outcome was recorded before (a retry); nothing counted twice.
    Duplicate,
    /// A different outcome was recorded before for this duel; carries the recorded winner.
    Conflict(Option<Arm>),
    /// A multi-ranker query already has different pair results recorded.
    SetConflict,
    /// The experiment no longer exists.
    UnknownExperiment,
}

pub struct WriteRequest {
    pub items: Vec<PendingOutcome>,
    pub reply: oneshot::Sender<Result<Vec<Written>, EngineError>>,
}

pub fn spawn(pool: sqlx::PgPool, owners: Arc<Owners>) -> mpsc::Sender<WriteRequest> {
    let (tx, rx) = mpsc::channel::<WriteRequest>(4096);
    tokio::spawn(run(pool, owners, rx));
    tx
}

async fn run(pool: sqlx::PgPool, owners: Arc<Owners>, mut rx: mpsc::Receiver<WriteRequest>) {
    let slots = Arc::new(Semaphore::new(GROUPS_IN_FLIGHT));
    let pace = Arc::new(Mutex::new(Pace::default()));
    while let Some(first) = rx.recv().await {
        let mut group = vec![first];
        let mut n = group[0].items.len();
        take_queued(&mut rx, &mut group, &mut n);
        // A small group waits until no other is in flight, growing meanwhile: many small
        // requests are cheapest as one large transaction. A large one starts at once beside the
        // group in flight.
        let slot = if n < PIPELINE_MIN {
            let all = slots
                .clone()
                .acquire_many_owned(GROUPS_IN_FLIGHT as u32)
                .await;
            take_queued(&mut rx, &mut group, &mut n);
            let linger = pace.lock().unwrap().linger(Instant::now(), n);
            if let Some(linger) = linger {
                tokio::time::sleep(linger).await;
                take_queued(&mut rx, &mut group, &mut n);
            }
            all
        } else {
            slots.clone().acquire_owned().await
        }
        .expect("the semaphore is never closed");
        metrics::histogram!("joust_ingest_batch_size").record(n as f64);
        let (pool, owners, pace) = (pool.clone(), owners.clone(), pace.clone());
        tokio::spawn(async move {
            let started = Instant::now();
            write_and_answer(&pool, &owners, group).await;
            let mut pace = pace.lock().unwrap();
            pace.last_end = Some(Instant::now());
            pace.last_commit = started.elapsed();
            drop(pace);
            drop(slot);
        });
    }
}

/// Adds what is queued to the group, up to [`MAX_GROUP`] outcomes.
fn take_queued(
    rx: &mut mpsc::Receiver<WriteRequest>,
    group: &mut Vec<WriteRequest>,
    n: &mut usize,
) {
    while *n < MAX_GROUP {
        match rx.try_recv() {
            Ok(req) => {
                *n += req.items.len();
                group.push(req);
            }
            Err(_) => break,
        }
    }
}

async fn write_and_answer(pool: &sqlx::PgPool, owners: &Owners, group: Vec<WriteRequest>) {
    let items: Vec<&PendingOutcome> = group.iter().flat_map(|r| r.items.iter()).collect();
    let result = write_group(pool, &items).await.map(|(written, acked)| {
        // Before the answers: a reader that saw its answer also finds its outcome awaited.
        for (id, at) in acked {
            owners.acknowledged(id, at);
        }
        written
    });
    if result.is_err() {
        metrics::counter!("joust_database_errors_total", "op" => "write_outcomes").increment(1);
    }
    let mut results = result.map(|v| v.into_iter());
    for req in group {
        let answer = match &mut results {
            Ok(it) => Ok(it.by_ref().take(req.items.len()).collect()),
            Err(e) => Err(match e {
                EngineError::Unavailable => EngineError::Unavailable,
                EngineError::Internal(cause) => EngineError::Internal(cause.clone()),
                other => EngineError::internal(anyhow::anyhow!("writing outcomes: {other}")),
            }),
        };
        let _ = req.reply.send(answer);
    }
}

/// Inserts the group's new outcomes in one statement; returns what happened to each item and,
/// per experiment, the last new row in apply order.
async fn write_group(
    pool: &sqlx::PgPool,
    items: &[&PendingOutcome],
) -> Result<(Vec<Written>, BTreeMap<i64, Cursor>), EngineError> {
    // The first occurrence of each duel id in the group is the one written; later ones are
    // compared with it like retries.
    let mut first_of: HashMap<Uuid, usize> = HashMap::with_capacity(items.len());
    let mut by_experiment: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        if first_of.contains_key(&item.duel_id) {
            continue;
        }
        first_of.insert(item.duel_id, i);
        by_experiment.entry(item.experiment_id).or_default().push(i);
    }

    let mut rows: Vec<OutcomeRow> = by_experiment
        .values()
        .flatten()
        .map(|&i| {
            let it = items[i];
            OutcomeRow {
                duel_id: it.duel_id,
                experiment_id: it.experiment_id,
                first: it.first as i32,
                second: it.second as i32,
                winner: it.winner.map(|w| w as i32),
                issued_at: it.issued_at,
                set: it.set.as_ref().map(|s| {
                    let rankers = s.rankers.iter().map(|&r| r as i32).collect();
                    (rankers, s.results.clone())
                }),
                unit: it.unit.map(|u| u.to_vec()),
                segment: it.segment.map(|s| s as i16),
            }
        })
        .collect();
    // One insertion order for every group: see the module docs.
    rows.sort_unstable_by_key(|r| r.duel_id);
    // Tokens are signed, so an experiment the statement finds missing was deleted after its
    // duels were issued: its outcomes are refused and nothing of them is written.
    let ids: Vec<i64> = by_experiment.keys().copied().collect();
    let acknowledged = outcomes::acknowledge(pool, &ids, &rows).await?;
    let live: HashSet<i64> = acknowledged.live.into_iter().collect();
    let inserted: HashMap<Uuid, i64> = acknowledged.inserted.into_iter().collect();

    // Outcomes recorded before (retries, or a different outcome for the same duel): committed
    // already, since the insert waited for any transaction that held the same duel id.
    let earlier: Vec<Uuid> = rows
        .iter()
        .filter(|r| live.contains(&r.experiment_id) && !inserted.contains_key(&r.duel_id))
        .map(|r| r.duel_id)
        .collect();
    let recorded: HashMap<Uuid, Recorded> = if earlier.is_empty() {
        HashMap::new()
    } else {
        outcomes::recorded(pool, &earlier)
            .await?
            .into_iter()
            .collect()
    };

    let mut acked: BTreeMap<i64, Cursor> = BTreeMap::new();
    for r in &rows {
        if let Some(&xid) = inserted.get(&r.duel_id) {
            let at = (xid, r.duel_id);
            let last = acked.entry(r.experiment_id).or_insert(at);
            *last = (*last).max(at);
        }
    }
    let written = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            if !live.contains(&item.experiment_id) {
                return Written::UnknownExperiment;
            }
            let first = first_of[&item.duel_id];
            if first != i {
                // A repeat within this group: judged against the first occurrence's fate.
                return match results_of_first(&inserted, &recorded, items[first]) {
                    Some(r) => item.judge(&r),
                    None => Written::UnknownExperiment,
                };
            }
            if inserted.contains_key(&item.duel_id) {
                Written::Recorded
            } else {
                match recorded.get(&item.duel_id) {
                    Some(r) => item.judge(r),
                    None => Written::UnknownExperiment,
                }
            }
        })
        .collect();
    Ok((written, acked))
}

/// What is now on record for the first occurrence of a duel in the group, if anything.
fn results_of_first(
    inserted: &HashMap<Uuid, i64>,
    recorded: &HashMap<Uuid, Recorded>,
    first: &PendingOutcome,
) -> Option<Recorded> {
    if inserted.contains_key(&first.duel_id) {
        Some(first.recorded_form())
    } else {
        recorded.get(&first.duel_id).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_small_group_lingers_and_only_after_a_slow_commit_that_just_ended() {
        let now = Instant::now();
        let pace = |ago: u64, commit: u64| Pace {
            last_end: Some(now - Duration::from_millis(ago)),
            last_commit: Duration::from_millis(commit),
        };
        assert_eq!(pace(1, 3).linger(now, 3), Some(LINGER));
        assert_eq!(pace(1, 3).linger(now, LINGER_BELOW), None);
        assert_eq!(pace(1, 1).linger(now, 3), None, "a fast commit");
        assert_eq!(pace(50, 3).linger(now, 3), None, "no load");
        assert_eq!(Pace::default().linger(now, 3), None, "the first group");
    }
}
