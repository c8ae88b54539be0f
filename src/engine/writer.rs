//! The outcome pipeline. Outcomes from all requests queue here; the writer takes everything queued
//! (up to a cap) as one group and writes it in one transaction: insert the new outcome rows (the
//! duel id is unique, so a retry inserts nothing), lock each touched experiment's state row (in id
//! order, so replicas never deadlock), apply the new outcomes in order with the policy's update,
//! write the counts and the policy state back with the version bumped, commit, and only then
//! answer every waiting request. While one group commits the next queues up, so the group size
//! follows the load with no fixed delay.
//!
//! Two large groups are in flight at once: the row inserts, most of a group's cost in Postgres,
//! take no experiment lock, so one group inserts while the other holds the lock, applies and
//! commits, and neither Postgres nor joust waits idle for the other. Rows are inserted in
//! duel-id order, so two groups that share a duel (a retry) wait for one another in one order
//! only and cannot deadlock; the later one then finds the duel recorded, exactly as a retry
//! after a commit would.

use rand::SeedableRng;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use tokio::sync::{Semaphore, mpsc, oneshot};
use uuid::Uuid;

use crate::bandit::{Arm, BanditRng, BanditState, Outcome, Pair};
use crate::store::outcomes::{self, OutcomeRow, Recorded};
use crate::store::{self, experiments};

use super::decision_events;
use super::history::{self, HistoryClock};
use super::offload;
use super::set_result::SetResult;
use super::snapshot::{PersistedPolicy, Snapshot};
use super::{Cache, EngineError};

/// Largest number of outcomes written in one transaction.
pub const MAX_GROUP: usize = 20_000;
/// Groups written concurrently: one inserting rows while the other holds the experiment lock.
const GROUPS_IN_FLIGHT: usize = 2;
/// Smallest group that starts while another is in flight. Measured with `scripts/bench-http`:
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
    /// Newly recorded and applied.
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

pub fn spawn(
    pool: sqlx::PgPool,
    cache: Arc<Cache>,
    history: Arc<HistoryClock>,
) -> mpsc::Sender<WriteRequest> {
    let (tx, rx) = mpsc::channel::<WriteRequest>(4096);
    tokio::spawn(run(pool, cache, history, rx));
    tx
}

async fn run(
    pool: sqlx::PgPool,
    cache: Arc<Cache>,
    history: Arc<HistoryClock>,
    mut rx: mpsc::Receiver<WriteRequest>,
) {
    let slots = Arc::new(Semaphore::new(GROUPS_IN_FLIGHT));
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
            all
        } else {
            slots.clone().acquire_owned().await
        }
        .expect("the semaphore is never closed");
        metrics::histogram!("joust_ingest_batch_size").record(n as f64);
        let (pool, cache, history) = (pool.clone(), cache.clone(), history.clone());
        tokio::spawn(async move {
            write_and_answer(&pool, &cache, &history, group).await;
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

async fn write_and_answer(
    pool: &sqlx::PgPool,
    cache: &Cache,
    history: &HistoryClock,
    group: Vec<WriteRequest>,
) {
    let items: Vec<&PendingOutcome> = group.iter().flat_map(|r| r.items.iter()).collect();
    let result = write_group(pool, cache, history, &items).await;
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

/// RNG for the policy's updates: derived from the experiment's seed and the version being
/// written, so any replica applying the same outcomes to the same version makes the same choices.
fn update_rng(seed: i64, version: i64) -> BanditRng {
    BanditRng::seed_from_u64((seed as u64) ^ (version as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

async fn write_group(
    pool: &sqlx::PgPool,
    cache: &Cache,
    history: &HistoryClock,
    items: &[&PendingOutcome],
) -> Result<Vec<Written>, EngineError> {
    let mut results: Vec<Option<Written>> = vec![None; items.len()];
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

    let mut tx = pool.begin().await.map_err(store::StoreError::from)?;
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
            }
        })
        .collect();
    // One insertion order for every group: see the module docs.
    rows.sort_unstable_by_key(|r| r.duel_id);
    let mut inserted: HashSet<Uuid> = outcomes::insert_new(&mut tx, &rows)
        .await?
        .into_iter()
        .collect();

    let mut locked: BTreeMap<i64, i64> = BTreeMap::new();
    for (&id, idx) in &by_experiment {
        match experiments::lock_state(&mut tx, id).await? {
            Some(version) => {
                locked.insert(id, version);
            }
            None => {
                // Unknown or deleted: its rows go again (tokens are signed, so this is an
                // experiment deleted after its duels were issued), and nothing of it is applied.
                let gone: Vec<Uuid> = idx
                    .iter()
                    .map(|&i| items[i].duel_id)
                    .filter(|d| inserted.remove(d))
                    .collect();
                outcomes::delete(&mut tx, &gone).await?;
                for &i in idx {
                    results[i] = Some(Written::UnknownExperiment);
                }
            }
        }
    }
    rows.retain(|r| locked.contains_key(&r.experiment_id));

    // Outcomes recorded before (retries, or a different outcome for the same duel).
    let earlier: Vec<Uuid> = rows
        .iter()
        .filter(|r| !inserted.contains(&r.duel_id))
        .map(|r| r.duel_id)
        .collect();
    let recorded: HashMap<Uuid, Recorded> = if earlier.is_empty() {
        HashMap::new()
    } else {
        outcomes::recorded(&mut tx, &earlier)
            .await?
            .into_iter()
            .collect()
    };

    let mut new_snapshots = Vec::new();
    for (&id, &version) in &locked {
        let new_items: Vec<usize> = by_experiment[&id]
            .iter()
            .copied()
            .filter(|&i| inserted.contains(&items[i].duel_id))
            .collect();
        if new_items.is_empty() {
            continue;
        }
        let base = match cache.get(id).filter(|s| s.version == version) {
            Some(s) => s,
            None => {
                let stored = store::state::load(&mut tx, id)
                    .await?
                    .ok_or(EngineError::UnknownExperiment(id))?;
                let k = stored.rankers.len();
                Arc::new(offload::cpu(k, move || Snapshot::from_stored(stored)).await?)
            }
        };
        // Copying the state, applying the outcomes and serialising the result grow with the
        // number of rankers: off the runtime for a large experiment.
        let batch: Vec<PendingOutcome> = new_items.iter().map(|&i| items[i].clone()).collect();
        let before = base.clone();
        let (mut snap, applied, ties, policy_state) = offload::cpu(base.names.len(), move || {
            let mut snap = (*base).clone();
            let mut rng = update_rng(snap.seed, version);
            let (applied, ties) = apply(&mut snap.state, batch.iter(), &mut rng)?;
            let policy_state = PersistedPolicy::to_json(&snap.state);
            // The decisions before and after, computed here off the runtime (they grow with the
            // number of rankers) and kept by each snapshot for its readers.
            base.decision();
            snap.decision();
            Ok::<_, EngineError>((snap, applied, ties, policy_state))
        })
        .await?;
        let mut win_cells: BTreeMap<(i32, i32), i64> = BTreeMap::new();
        let mut tie_cells: BTreeMap<(i32, i32), i64> = BTreeMap::new();
        for &i in &new_items {
            let it = items[i];
            if let Some(set) = &it.set {
                let (wins, ties) = set.cells();
                for (w, l) in wins {
                    *win_cells.entry((w as i32, l as i32)).or_default() += 1;
                }
                for (a, b) in ties {
                    *tie_cells.entry((a as i32, b as i32)).or_default() += 1;
                }
                continue;
            }
            match it.winner {
                Some(w) => {
                    let l = if w == it.first { it.second } else { it.first };
                    *win_cells.entry((w as i32, l as i32)).or_default() += 1;
                }
                None => {
                    let (a, b) = (it.first.min(it.second), it.first.max(it.second));
                    *tie_cells.entry((a as i32, b as i32)).or_default() += 1;
                }
            }
        }
        let cells = |m: BTreeMap<(i32, i32), i64>| {
            m.into_iter()
                .map(|((a, b), n)| (a, b, n))
                .collect::<Vec<_>>()
        };
        outcomes::add_wins(&mut tx, id, &cells(win_cells)).await?;
        outcomes::add_ties(&mut tx, id, &cells(tie_cells)).await?;
        snap.version = outcomes::finish_state(&mut tx, id, &policy_state, applied, ties).await?;
        snap.outcomes_applied += applied;
        snap.ties_applied += ties;
        snap.updated_at = chrono::Utc::now();
        // The stop rule and the webhook events, in this same transaction.
        decision_events::after_apply(&mut tx, &before, &mut snap).await?;
        // A history point at most once per interval, in this same transaction.
        if history.claim(id, std::time::Instant::now()) {
            let point = history::point_of(&snap);
            store::history::record(&mut tx, id, history.interval().as_secs_f64(), &point).await?;
        }
        new_snapshots.push(snap);
    }
    tx.commit().await.map_err(store::StoreError::from)?;

    for snap in new_snapshots {
        cache.put(snap);
    }
    Ok(items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            if let Some(r) = results[i].take() {
                return r;
            }
            let first = first_of[&item.duel_id];
            if first != i {
                // A repeat within this group: judged against the first occurrence's fate.
                return match results_of_first(&inserted, &recorded, items[first]) {
                    Some(r) => item.judge(&r),
                    None => Written::UnknownExperiment,
                };
            }
            if inserted.contains(&item.duel_id) {
                Written::Recorded
            } else {
                match recorded.get(&item.duel_id) {
                    Some(r) => item.judge(r),
                    None => Written::UnknownExperiment,
                }
            }
        })
        .collect())
}

/// What is now on record for the first occurrence of a duel in the group, if anything.
fn results_of_first(
    inserted: &HashSet<Uuid>,
    recorded: &HashMap<Uuid, Recorded>,
    first: &PendingOutcome,
) -> Option<Recorded> {
    if inserted.contains(&first.duel_id) {
        Some(first.recorded_form())
    } else {
        recorded.get(&first.duel_id).cloned()
    }
}

/// Applies outcomes in order; returns (non-tie outcomes, ties).
fn apply<'a>(
    state: &mut BanditState,
    outcomes: impl Iterator<Item = &'a PendingOutcome>,
    rng: &mut BanditRng,
) -> Result<(i64, i64), EngineError> {
    let (mut applied, mut ties) = (0, 0);
    for o in outcomes {
        if let Some(set) = &o.set {
            let (decided, tied) = set.counts();
            applied += decided;
            ties += tied;
            state
                .record_set(&set.rankers, &set.to_outcome(), rng)
                .map_err(EngineError::internal)?;
            continue;
        }
        // The token kept the duel in the order it was selected, so the policy learns the sides.
        let outcome = match o.winner {
            Some(w) if w == o.first => Outcome::FirstWins,
            Some(_) => Outcome::SecondWins,
            None => Outcome::Tie,
        };
        if outcome == Outcome::Tie {
            ties += 1;
        } else {
            applied += 1;
        }
        state
            .record(Pair::new(o.first, o.second), outcome, rng)
            .map_err(EngineError::internal)?;
    }
    Ok((applied, ties))
}
