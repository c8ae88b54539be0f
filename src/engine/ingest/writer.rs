//! The acknowledgement pipeline. Outcomes from all requests queue here; the writer takes
//! everything queued (up to a cap) as one group and inserts it in one statement, committed on its
//! own (the duel id is unique, so a retry inserts nothing; the same statement checks that the
//! experiments still exist), and only then answers every waiting request.
//! That durable insert is the acknowledgement: no experiment's state is locked or read on the
//! way, so replicas acknowledging the same experiment do not wait for one another, and a slow
//! experiment delays no other's answers. Applying the outcomes to the bandit state follows off
//! the request path, by the experiment's owner, which the writer tells of each acknowledged
//! outcome through the callback it was spawned with ([`Acknowledged`]; it knows no owners).
//! While one group commits the next queues up, so the group size follows the load; a small
//! group formed right after the last one was answered may also wait, briefly, for the clients
//! that group answered to come back ([`super::pace`]).
//!
//! Two large groups are in flight at once, so Postgres inserts one while joust prepares the
//! next. Rows are inserted in duel-id order, so two groups that share a duel (a retry) wait for
//! one another in one order only and cannot deadlock; the later one then finds the duel
//! recorded, exactly as a retry after a commit would.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::{Semaphore, mpsc, oneshot};
use uuid::Uuid;

use crate::bandit::{Arm, Chooser};
use crate::store::apply::Cursor;
use crate::store::outcomes::{self, OutcomeRow, PostedAs, Recorded};

use super::connections::WriterConnections;
use super::fine_timer::FineTimer;
use super::pace::{Arrivals, Pace};
use crate::engine::EngineError;
use crate::engine::model::SetResult;

/// Told of every outcome the writer acknowledged, with its experiment and its place in apply
/// order, once it is durable and before its request is answered (so a reader that saw its answer
/// finds its outcome awaited by whoever applies it).
pub type Acknowledged = Arc<dyn Fn(i64, Cursor) + Send + Sync>;

/// Largest number of outcomes inserted in one transaction.
pub const MAX_GROUP: usize = 20_000;
/// Groups written concurrently: one inserting rows while joust prepares or answers the other.
const GROUPS_IN_FLIGHT: usize = 2;
/// Smallest group that starts while another is in flight. Measured with `benches/bench-http`:
/// pipelining every group lifts batches of 1,000 from 96,000 to 110,000 outcomes/s but drops
/// single outcomes from 15,000 to 8,400/s (each small group then pays its own commit), so small
/// groups wait and grow instead.
const PIPELINE_MIN: usize = 1_000;

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
    pub unit: Option<[u8; crate::engine::model::UNIT_HASH_LEN]>,
    pub segment: Option<u16>,
    /// How the outcome was posted, as its row keeps it.
    pub posting: Posting,
    /// Which layer chose the duel, when its token said.
    pub chosen_by: Option<Chooser>,
}

/// How an outcome was posted: its result field, the posted value where the recorded result does
/// not say it (JSON text), and a clicked duel's interleaving method.
#[derive(Debug, Clone)]
pub struct Posting {
    pub posted_as: PostedAs,
    pub value: Option<String>,
    pub method: Option<&'static str>,
}

impl Posting {
    /// A posted winner (its value is added for a self-duel, recorded as a tie).
    pub fn winner() -> Posting {
        Posting {
            posted_as: PostedAs::Winner,
            value: None,
            method: None,
        }
    }
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

/// Where requests hand outcomes to the writer.
#[derive(Clone)]
pub struct WriterHandle {
    queue: mpsc::Sender<WriteRequest>,
    arrivals: Arc<Arrivals>,
}

impl WriterHandle {
    /// Queues a request; `Err` when the writer stopped.
    pub async fn send(&self, request: WriteRequest) -> Result<(), ()> {
        self.queue.send(request).await.map_err(|_| ())?;
        self.arrivals.arrived();
        Ok(())
    }
}

pub fn spawn(pool: sqlx::PgPool, acknowledged: Acknowledged) -> WriterHandle {
    let (tx, rx) = mpsc::channel::<WriteRequest>(4096);
    let arrivals = Arc::new(Arrivals::default());
    tokio::spawn(run(pool, acknowledged, rx, arrivals.clone()));
    WriterHandle {
        queue: tx,
        arrivals,
    }
}

async fn run(
    pool: sqlx::PgPool,
    acknowledged: Acknowledged,
    mut rx: mpsc::Receiver<WriteRequest>,
    arrivals: Arc<Arrivals>,
) {
    let connections = Arc::new(WriterConnections::new(pool));
    let slots = Arc::new(Semaphore::new(GROUPS_IN_FLIGHT));
    let pace = Arc::new(Mutex::new(Pace::default()));
    let timer = FineTimer::new();
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
                arrivals
                    .wait_for(linger.until, linger.at_most, &timer)
                    .await;
                take_queued(&mut rx, &mut group, &mut n);
            }
            all
        } else {
            slots.clone().acquire_owned().await
        }
        .expect("the semaphore is never closed");
        metrics::histogram!("joust_ingest_batch_size").record(n as f64);
        let (connections, acknowledged, pace, arrivals) = (
            connections.clone(),
            acknowledged.clone(),
            pace.clone(),
            arrivals.clone(),
        );
        tokio::spawn(async move {
            let started = Instant::now();
            let requests = group.len() as u64;
            let arrived = write_and_answer(&connections, &acknowledged, &arrivals, group).await;
            let end = Instant::now();
            pace.lock()
                .unwrap()
                .answered(requests, arrived, end - started, end);
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

/// Writes the group and answers its requests; returns the arrivals counted just before the
/// answers, after which the clients answered can come back.
async fn write_and_answer(
    connections: &WriterConnections,
    acknowledged: &Acknowledged,
    arrivals: &Arrivals,
    group: Vec<WriteRequest>,
) -> u64 {
    let items: Vec<&PendingOutcome> = group.iter().flat_map(|r| r.items.iter()).collect();
    let result = write_on_a_kept_connection(connections, &items)
        .await
        .map(|(written, acked)| {
            // Before the answers: a reader that saw its answer also finds its outcome awaited.
            for (id, at) in acked {
                acknowledged(id, at);
            }
            written
        });
    if result.is_err() {
        metrics::counter!("joust_database_errors_total", "op" => "write_outcomes").increment(1);
    }
    let mut results = result.map(|v| v.into_iter());
    let arrived = arrivals.count();
    for req in group {
        let answer = match &mut results {
            Ok(it) => Ok(it.by_ref().take(req.items.len()).collect()),
            Err(e) => Err(e.for_another_caller("writing outcomes")),
        };
        let _ = req.reply.send(answer);
    }
    arrived
}

/// [`write_group`] on one of the writer's connections, kept for the next group if it succeeded.
async fn write_on_a_kept_connection(
    connections: &WriterConnections,
    items: &[&PendingOutcome],
) -> Result<(Vec<Written>, BTreeMap<i64, Cursor>), EngineError> {
    let mut conn = connections.take().await?;
    let written = write_group(&mut conn, items).await?;
    connections.keep(conn);
    Ok(written)
}

/// Inserts the group's new outcomes in one statement; returns what happened to each item and,
/// per experiment, the last new row in apply order.
async fn write_group(
    conn: &mut sqlx::PgConnection,
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
                posted_as: it.posting.posted_as as i16,
                posted: it.posting.value.clone(),
                method: it.posting.method,
                chosen_by: it.chosen_by.map(|c| match c {
                    Chooser::Policy => outcomes::CHOSEN_BY_POLICY,
                    Chooser::Confirmation => outcomes::CHOSEN_BY_CONFIRMATION,
                }),
            }
        })
        .collect();
    // One insertion order for every group: see the module docs.
    rows.sort_unstable_by_key(|r| r.duel_id);
    // Tokens are signed, so an experiment the statement finds missing was deleted after its
    // duels were issued: its outcomes are refused and nothing of them is written.
    let ids: Vec<i64> = by_experiment.keys().copied().collect();
    let acknowledged = outcomes::acknowledge(conn, &ids, &rows).await?;
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
        outcomes::recorded(conn, &earlier)
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
