//! Which replica applies which experiment's outcomes, and the appliers themselves.
//!
//! Each experiment has at most one owner: the replica whose dedicated database session holds the
//! experiment's advisory lock. Postgres releases a session's locks when the session ends, so
//! when an owner dies (kill -9, a lost network) its experiments are free again at once, and
//! another replica takes them on its next poll. The owner runs one task per experiment it owns:
//! the task keeps the state in memory, takes the acknowledged rows after the experiment's cursor
//! in apply order and applies them ([`super::application`]). Experiments are thus applied side by
//! side, so a slow one (a 10,000-ranker experiment's first outcome takes seconds) holds up only
//! itself.
//!
//! The lock is what keeps replicas from doing the same work twice; it is not what makes
//! application exactly once. That is the cursor, written in the transaction that writes the
//! state and fenced by the state version (docs/architecture.md), so a replica that still
//! believes it owns an experiment after losing its session cannot apply anything twice.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use sqlx::{Connection, PgConnection};
use tokio::sync::{Notify, mpsc};

use crate::store::apply::{self as store_apply, Cursor};
use crate::store::{self, StoreError, notices};

use super::application::{Applied, apply_outcomes, write_held};
use super::checkpoint::Unwritten;
use super::checkpoint_writer::CheckpointWriter;
use super::fetcher::Fetcher;
use super::history::HistoryClock;
use super::metric_outcomes;
use crate::engine::EngineError;
use crate::engine::model::Snapshot;
use crate::engine::runtime::{Cache, Clock, offload};

/// How often a replica looks for experiments with outcomes waiting and no live owner, and an
/// idle applier for rows of its experiment. Outcomes acknowledged by another replica reach the
/// owner at once by a notice ([`crate::store::notices`]); the poll is the fallback for a lost
/// notice and finds experiments whose owner died. With [`RETRY_OWN`] it bounds how long an
/// experiment stays unowned after its owner died. At 100 ms, the polls of every replica were a
/// visible share of the CPU per outcome with two replicas (docs/benchmarks.md).
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// Longest wait of an applier for rows acknowledged here that an older transaction still holds
/// back.
const BEHIND_WAIT_MAX: Duration = Duration::from_millis(100);
/// Least time between two attempts to take an experiment another replica owns.
const RETRY_OWN: Duration = Duration::from_secs(1);
/// Most rows applied in one transaction.
pub(super) const MAX_APPLY: i64 = 20_000;
/// Least time between two applications of one experiment while it has rows waiting. Each
/// application writes the whole policy state (for a 136-ranker MergeDTS, kilobytes of JSON that
/// Postgres compresses and logs) and a transaction of its own, whether it applies one row or a
/// thousand: applying as soon as woken, a hot experiment was applied after every acknowledgement
/// group, and those writes were most of the CPU per outcome. Pausing lets the rows of several
/// groups be applied at once. On the owner, a read that waits for outcomes acknowledged there ends
/// the pause ([`Owners::await_applied`]), so the pause delays the state duels are chosen from,
/// not what that reader sees (a read on another replica waits for the owner's pause). `joust serve --apply-pause-ms` sets it: with many experiments
/// that each get few outcomes per pause, nearly every outcome is applied alone (a read of its
/// rows and a state write); a longer pause applies several at once (docs/operating.md).
pub const DEFAULT_APPLY_PAUSE: Duration = Duration::from_millis(20);
/// How often the dedicated session is checked when no lock was asked for meanwhile.
const KEEPALIVE: Duration = Duration::from_secs(1);
/// How long a read waits for the outcomes this replica acknowledged to be applied.
pub const READ_WAIT: Duration = Duration::from_secs(5);

/// An experiment this replica owns: its applier's wake-up and whether it should keep running.
struct Owned {
    wake: Arc<Notify>,
    /// A read waits for this replica's outcomes to be applied: apply without the pause.
    urgent: Arc<Notify>,
    alive: Arc<AtomicBool>,
}

#[derive(Default)]
struct Inner {
    owned: HashMap<i64, Owned>,
    /// When taking each experiment last failed (another replica owns it).
    elsewhere: HashMap<i64, Instant>,
    /// Experiments with outcomes acknowledged here and no owner here: try to take them.
    nudged: HashSet<i64>,
    /// The last outcome acknowledged here, per experiment, in apply order.
    acked: HashMap<i64, Cursor>,
    /// Of experiments owned here: the transaction id of the last outcome another replica
    /// announced it acknowledged, until it is applied.
    announced: HashMap<i64, i64>,
    /// When this replica last sent notices to other owners.
    noticed_at: Option<Instant>,
}

/// This replica's ownerships and appliers.
pub struct Owners {
    pool: sqlx::PgPool,
    cache: Arc<Cache>,
    history: Arc<HistoryClock>,
    clock: Arc<Clock>,
    /// Least time between two applications of one experiment while it has rows waiting. Also
    /// the least time between two turns of the ownership loop that follow a turn that sent
    /// notices: a replica that acknowledges outcomes of an experiment another replica owns
    /// nudges its loop after every acknowledgement group, and each turn could send a notice (a
    /// statement, and a wake-up of the owner's listener and applier). An owner with rows waiting
    /// applies at most once per pause (replicas share their settings) and finds the rows itself
    /// while it is busy, so notices closer together than that wake nobody sooner; waiting also
    /// gathers the experiments of several groups into one notice.
    apply_pause: Duration,
    /// Longest time an application stays unwritten ([`super::checkpoint`]).
    checkpoint_interval: Duration,
    /// Set at shutdown: every applier writes what it holds, and holds nothing more.
    settling: Arc<AtomicBool>,
    /// Reads the rows every applier asks for, many experiments per statement.
    fetcher: Arc<Fetcher>,
    /// Writes the checkpoints every applier sends, many experiments per statement.
    writer: Arc<CheckpointWriter>,
    inner: Mutex<Inner>,
    /// Wakes the ownership loop early (an outcome of an experiment not owned here).
    nudge: Arc<Notify>,
    /// Appliers whose experiment was deleted report here, so the loop gives the lock up.
    ended: mpsc::UnboundedSender<i64>,
    /// Stops the listener of notices from other replicas.
    stop_listening: Arc<Notify>,
}

impl Owners {
    /// Starts the ownership loop. It holds only a weak reference: dropping the returned value
    /// stops it, every applier and the dedicated session.
    pub fn start(
        pool: sqlx::PgPool,
        cache: Arc<Cache>,
        history: Arc<HistoryClock>,
        clock: Arc<Clock>,
        apply_pause: Duration,
        checkpoint_interval: Duration,
    ) -> Arc<Owners> {
        let (ended, ended_rx) = mpsc::unbounded_channel();
        let owners = Arc::new(Owners {
            fetcher: Arc::new(Fetcher::start(pool.clone(), MAX_APPLY)),
            writer: Arc::new(CheckpointWriter::start(pool.clone(), checkpoint_interval)),
            pool,
            cache,
            history,
            clock,
            apply_pause,
            checkpoint_interval,
            settling: Arc::new(AtomicBool::new(false)),
            inner: Mutex::default(),
            nudge: Arc::new(Notify::new()),
            ended,
            stop_listening: Arc::new(Notify::new()),
        });
        tokio::spawn(ownership_loop(
            Arc::downgrade(&owners),
            owners.nudge.clone(),
            ended_rx,
        ));
        tokio::spawn(listen_loop(
            Arc::downgrade(&owners),
            owners.pool.clone(),
            owners.stop_listening.clone(),
        ));
        owners
    }

    /// Another replica acknowledged outcomes of these experiments: wake the appliers of those
    /// owned here, and note how far each must apply to have them all. (Experiments owned nowhere
    /// are taken by the replica that acknowledged them, or found by the poll.)
    fn outcomes_waiting(&self, waiting: &[notices::Waiting]) {
        let mut inner = self.inner.lock().unwrap();
        for &(id, xid) in waiting {
            let Some(owned) = inner.owned.get(&id) else {
                continue;
            };
            owned.wake.notify_one();
            if let Some(xid) = xid {
                let last = inner.announced.entry(id).or_insert(xid);
                *last = (*last).max(xid);
            }
        }
    }

    /// Whether the experiment has outcomes that another replica announced and that are not
    /// applied through `applied`. Every row of a transaction commits at once, so once any row of
    /// the announced transaction is applied, all of them are (an application that reached its
    /// row limit goes on at once).
    fn announced_behind(&self, id: i64, applied: Cursor) -> bool {
        let mut inner = self.inner.lock().unwrap();
        match inner.announced.get(&id) {
            Some(&xid) if xid > applied.0 => true,
            Some(_) => {
                inner.announced.remove(&id);
                false
            }
            None => false,
        }
    }

    /// Whether this replica owns the experiment (runs its applier).
    pub fn owns(&self, id: i64) -> bool {
        self.inner.lock().unwrap().owned.contains_key(&id)
    }

    /// Notes an outcome acknowledged here (durable, at `at` in apply order) and wakes its
    /// experiment's applier, or asks the loop to find or become its owner.
    pub fn acknowledged(&self, id: i64, at: Cursor) {
        let mut inner = self.inner.lock().unwrap();
        let last = inner.acked.entry(id).or_insert(at);
        *last = (*last).max(at);
        if let Some(owned) = inner.owned.get(&id) {
            owned.wake.notify_one();
        } else if inner.nudged.insert(id) {
            self.nudge.notify_one();
        }
    }

    /// Wakes the experiment's applier (conversions were acknowledged here), or asks the loop to
    /// find or become its owner.
    pub fn poke(&self, id: i64) {
        let mut inner = self.inner.lock().unwrap();
        if let Some(owned) = inner.owned.get(&id) {
            owned.wake.notify_one();
        } else if inner.nudged.insert(id) {
            self.nudge.notify_one();
        }
    }

    /// Waits (up to [`READ_WAIT`]) until the cached state of the experiment has applied every
    /// outcome this replica acknowledged for it before the call; returns the cached snapshot,
    /// which then reflects them unless the wait ran out (an owner that died and was not replaced
    /// yet, or a database outage).
    pub async fn await_applied(&self, snap: Arc<Snapshot>) -> Arc<Snapshot> {
        let want = {
            let inner = self.inner.lock().unwrap();
            let Some(&want) = inner.acked.get(&snap.id) else {
                return snap;
            };
            // Behind: the experiment's applier, if it runs here, applies without its pause.
            if snap.applied_through < want
                && let Some(owned) = inner.owned.get(&snap.id)
            {
                owned.urgent.notify_one();
            }
            want
        };
        let until = Instant::now() + READ_WAIT;
        let mut snap = snap;
        loop {
            if snap.applied_through >= want || Instant::now() >= until {
                return snap;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
            match self.cache.get(snap.id) {
                Some(s) => snap = s,
                // Deleted meanwhile: what was read is all there is.
                None => return snap,
            }
        }
    }

    /// At shutdown: waits, up to `within`, until every experiment owned here has applied the
    /// outcomes this replica acknowledged for it and written what it held in memory, so a
    /// replica stopped gracefully leaves its own acknowledgements applied when its owners can
    /// finish them quickly. Whatever is left (a slow experiment, a database outage) stays
    /// durable and is applied by the experiment's next owner once this session's locks are
    /// gone. Returns the experiments still behind.
    pub async fn settle(&self, within: Duration) -> Vec<i64> {
        self.settling.store(true, Ordering::SeqCst);
        let until = Instant::now() + within;
        loop {
            let behind: Vec<i64> = {
                let inner = self.inner.lock().unwrap();
                inner
                    .owned
                    .keys()
                    .filter(|id| {
                        let cached = self.cache.get(**id);
                        let unwritten = cached.as_ref().is_some_and(|s| s.ahead_of.is_some());
                        unwritten
                            || inner.acked.get(id).is_some_and(|&acked| {
                                cached.is_some_and(|snap| snap.applied_through < acked)
                            })
                    })
                    .copied()
                    .collect()
            };
            if behind.is_empty() || Instant::now() >= until {
                return behind;
            }
            for id in &behind {
                if let Some(owned) = self.inner.lock().unwrap().owned.get(id) {
                    owned.wake.notify_one();
                }
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The last outcome acknowledged here for the experiment.
    fn acked(&self, id: i64) -> Option<Cursor> {
        self.inner.lock().unwrap().acked.get(&id).copied()
    }

    /// Whether outcomes acknowledged for the experiment, here or (as announced) by another
    /// replica, are not applied through `applied` yet.
    fn behind(&self, id: i64, applied: Cursor) -> bool {
        self.acked(id).is_some_and(|acked| acked > applied) || self.announced_behind(id, applied)
    }

    /// Stops every applier: the session that held the locks is gone.
    fn lose_all(&self) {
        let mut inner = self.inner.lock().unwrap();
        for (_, owned) in inner.owned.drain() {
            owned.alive.store(false, Ordering::SeqCst);
            owned.wake.notify_one();
        }
        inner.announced.clear();
    }

    /// One turn of the ownership loop on the dedicated session `conn`: take the experiments
    /// with work and no owner, wake the appliers of those owned here, give up those that ended.
    async fn turn(
        self: &Arc<Self>,
        conn: &mut PgConnection,
        poll: bool,
        ended: &mut mpsc::UnboundedReceiver<i64>,
    ) -> Result<bool, StoreError> {
        let mut asked = false;
        while let Ok(id) = ended.try_recv() {
            let alive = {
                let mut inner = self.inner.lock().unwrap();
                inner.announced.remove(&id);
                inner.owned.remove(&id)
            };
            if let Some(owned) = alive {
                owned.alive.store(false, Ordering::SeqCst);
            }
            store_apply::disown(conn, id).await?;
            asked = true;
        }
        let nudged = std::mem::take(&mut self.inner.lock().unwrap().nudged);
        let mut candidates: Vec<i64> = nudged.iter().copied().collect();
        // Experiments with outcomes acknowledged here that another replica owns: told below (the
        // notice adds each one's last acknowledged transaction id).
        let mut owned_elsewhere: Vec<i64> = Vec::new();
        if poll {
            // A failed poll (the pool's problem, not the session's) waits for the next turn.
            match store_apply::experiments_with_pending(&self.pool).await {
                Ok(ids) => candidates.extend(ids),
                Err(e) => tracing::debug!(error = %e, "polling for outcomes to apply failed"),
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        let now = Instant::now();
        for id in candidates {
            {
                let inner = self.inner.lock().unwrap();
                if let Some(owned) = inner.owned.get(&id) {
                    owned.wake.notify_one();
                    continue;
                }
                if inner
                    .elsewhere
                    .get(&id)
                    .is_some_and(|&t| now.duration_since(t) < RETRY_OWN)
                {
                    if nudged.contains(&id) {
                        owned_elsewhere.push(id);
                    }
                    continue;
                }
            }
            asked = true;
            if store_apply::try_own(conn, id).await? {
                tracing::debug!(experiment = id, "took ownership");
                metrics::counter!("joust_ownerships_taken_total").increment(1);
                self.spawn_applier(id);
            } else {
                self.inner.lock().unwrap().elsewhere.insert(id, now);
                if nudged.contains(&id) {
                    owned_elsewhere.push(id);
                }
            }
        }
        if !owned_elsewhere.is_empty() {
            let waiting: Vec<notices::Waiting> = {
                let inner = self.inner.lock().unwrap();
                owned_elsewhere
                    .iter()
                    .map(|&id| (id, inner.acked.get(&id).map(|at| at.0)))
                    .collect()
            };
            notices::notify_outcomes_waiting(conn, &waiting).await?;
            self.inner.lock().unwrap().noticed_at = Some(Instant::now());
            asked = true;
        }
        Ok(asked)
    }

    fn spawn_applier(self: &Arc<Self>, id: i64) {
        let owned = Owned {
            wake: Arc::new(Notify::new()),
            urgent: Arc::new(Notify::new()),
            alive: Arc::new(AtomicBool::new(true)),
        };
        let applier = Applier {
            id,
            owners: Arc::downgrade(self),
            pool: self.pool.clone(),
            cache: self.cache.clone(),
            history: self.history.clone(),
            clock: self.clock.clone(),
            wake: owned.wake.clone(),
            urgent: owned.urgent.clone(),
            pause: self.apply_pause,
            checkpoint_interval: self.checkpoint_interval,
            settling: self.settling.clone(),
            fetcher: self.fetcher.clone(),
            writer: self.writer.clone(),
            read_waits: false,
            held: None,
            alive: owned.alive.clone(),
            ended: self.ended.clone(),
        };
        let mut inner = self.inner.lock().unwrap();
        inner.elsewhere.remove(&id);
        inner.owned.insert(id, owned);
        tokio::spawn(applier.run());
    }
}

impl Drop for Owners {
    fn drop(&mut self) {
        self.lose_all();
        self.stop_listening.notify_one();
    }
}

/// Listens for the notices of other replicas' acknowledgements and wakes the appliers they
/// concern. A lost session is opened again after [`POLL_INTERVAL`] (notices sent meanwhile are
/// lost; the poll finds their rows). Stops when the owners are dropped.
async fn listen_loop(owners: Weak<Owners>, pool: sqlx::PgPool, stop: Arc<Notify>) {
    loop {
        let listening = async {
            let mut listener = notices::listen_outcomes_waiting(&pool).await?;
            while let Some(notice) = listener.try_recv().await? {
                let ids = notices::waiting_ids(notice.payload());
                match owners.upgrade() {
                    Some(owners) => owners.outcomes_waiting(&ids),
                    None => return Ok(()),
                }
            }
            Ok::<(), StoreError>(())
        };
        tokio::select! {
            result = listening => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, "listening for other replicas' notices failed");
                }
            }
            _ = stop.notified() => return,
        }
        if owners.strong_count() == 0 {
            return;
        }
        tokio::select! {
            _ = tokio::time::sleep(POLL_INTERVAL) => {}
            _ = stop.notified() => return,
        }
    }
}

/// Opens the dedicated session, polls on a timer and takes nudges in between. Any error on the
/// session drops every ownership (Postgres released the locks with the session) and opens a new
/// session on a later turn.
async fn ownership_loop(
    owners: Weak<Owners>,
    nudge: Arc<Notify>,
    mut ended: mpsc::UnboundedReceiver<i64>,
) {
    let mut conn: Option<PgConnection> = None;
    let mut last_poll = Instant::now();
    let mut last_asked = Instant::now();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(POLL_INTERVAL) => {}
            _ = nudge.notified() => {}
        }
        let Some(owners) = owners.upgrade() else {
            return;
        };
        let since_notice = owners.inner.lock().unwrap().noticed_at.map(|t| t.elapsed());
        let gap = owners.apply_pause;
        if let Some(since) = since_notice.filter(|&since| since < gap) {
            // Nudges that arrive meanwhile gather in `nudged` for this turn.
            tokio::time::sleep(gap - since).await;
        }
        if conn.is_none() {
            match PgConnection::connect_with(&owners.pool.connect_options()).await {
                Ok(c) => conn = Some(c),
                Err(e) => {
                    tracing::debug!(error = %e, "could not open the ownership session");
                    continue;
                }
            }
        }
        let session = conn.as_mut().expect("opened above");
        let poll = last_poll.elapsed() >= POLL_INTERVAL;
        if poll {
            last_poll = Instant::now();
        }
        let mut result = owners.turn(session, poll, &mut ended).await;
        if matches!(result, Ok(false)) && last_asked.elapsed() >= KEEPALIVE {
            result = session
                .ping()
                .await
                .map(|()| true)
                .map_err(StoreError::from);
        }
        match result {
            Ok(true) => last_asked = Instant::now(),
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(error = %e, "the ownership session failed: giving up every ownership");
                owners.lose_all();
                conn = None;
            }
        }
    }
}

/// The applier of one owned experiment.
struct Applier {
    id: i64,
    owners: Weak<Owners>,
    pool: sqlx::PgPool,
    cache: Arc<Cache>,
    history: Arc<HistoryClock>,
    clock: Arc<Clock>,
    wake: Arc<Notify>,
    urgent: Arc<Notify>,
    pause: Duration,
    checkpoint_interval: Duration,
    settling: Arc<AtomicBool>,
    fetcher: Arc<Fetcher>,
    writer: Arc<CheckpointWriter>,
    /// A read waits for this replica's outcomes: the next read of rows goes at once.
    read_waits: bool,
    /// The applications made in memory and not written yet, with the snapshot they made.
    held: Option<Unwritten>,
    alive: Arc<AtomicBool>,
    ended: mpsc::UnboundedSender<i64>,
}

/// What one step of an applier found.
enum Step {
    /// Applied rows (or reloaded a stale state): there may be more, and surely are when `full`.
    More { full: bool },
    /// Applied conversions or closed windows: look again after the pause.
    Again,
    /// Nothing final to apply now.
    Idle,
    /// The experiment was deleted.
    Gone,
}

impl Applier {
    /// Waits out `paused`, unless a read waits for this replica's outcomes first; writes what
    /// is held if it comes due meanwhile.
    async fn rest_of_pause(&mut self, mut paused: std::pin::Pin<&mut tokio::time::Sleep>) {
        loop {
            let due = self.held_due();
            tokio::select! {
                _ = &mut paused => return,
                _ = self.urgent.notified() => {
                    self.read_waits = true;
                    return;
                }
                _ = until_due(due) => self.checkpoint_in_pause().await,
            }
        }
    }

    /// When what is held must be written, if anything is.
    fn held_due(&self) -> Option<Instant> {
        self.held.as_ref().map(|h| h.due_at(self.interval()))
    }

    /// Writes what is held, taking no new rows: its interval ran out during a pause, which
    /// limits how often rows are read and applied, not how long they stay unwritten.
    async fn checkpoint_in_pause(&mut self) {
        if let Err(e) = self.write_held_now().await {
            metrics::counter!("joust_database_errors_total", "op" => "apply_outcomes").increment(1);
            tracing::warn!(experiment = self.id, error = %e, "writing held applications failed; retrying");
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Writes the applications held in memory, if they are still the cached state's.
    async fn write_held_now(&mut self) -> Result<Step, EngineError> {
        let Some(held) = self.held.take() else {
            return Ok(Step::Idle);
        };
        let Some(base) = self.cache.get(self.id) else {
            return Ok(Step::Idle);
        };
        let Some((from_version, _)) = base.ahead_of.filter(|_| held.made(&base)) else {
            // A stored version replaced them: their rows are applied again on it.
            return Ok(Step::More { full: true });
        };
        // At a graceful stop (no interval), the stop waits for it: written at once.
        let urgent = self.interval().is_zero();
        match write_held(&self.writer, base, from_version, held, urgent).await? {
            Some(snap) => {
                self.cache.put(*snap);
                Ok(Step::Idle)
            }
            None => self.reload_after_stale().await,
        }
    }

    async fn run(mut self) {
        // How long to wait before looking again for rows acknowledged here but not yet final:
        // short at first, doubling while an older transaction holds them back, so a long
        // transaction elsewhere in the database does not turn this into a busy poll.
        let mut behind_wait = Duration::from_millis(2);
        while self.alive.load(Ordering::SeqCst) {
            match self.step().await {
                // A full application means a backlog: go on at once.
                Ok(Step::More { full: true }) => behind_wait = Duration::from_millis(2),
                Ok(Step::More { full: false }) => {
                    behind_wait = Duration::from_millis(2);
                    // Look again after the pause only if more rows were announced meanwhile
                    // (acknowledged here, a notice, the ownership poll): otherwise wait as when
                    // idle. On an experiment whose outcomes trickle in, looking again found
                    // nothing after nearly every application, a query per outcome.
                    let paused = tokio::time::sleep(self.pause);
                    tokio::pin!(paused);
                    // `Some(woken)`, or `None` when a read waits: apply now.
                    let woken = loop {
                        let due = self.held_due();
                        tokio::select! {
                            _ = &mut paused => break Some(false),
                            _ = self.wake.notified() => break Some(true),
                            _ = self.urgent.notified() => {
                                self.read_waits = true;
                                break None;
                            }
                            _ = until_due(due) => self.checkpoint_in_pause().await,
                        }
                    };
                    match woken {
                        None => continue,
                        Some(true) => self.rest_of_pause(paused).await,
                        Some(false) => self.idle_wait(&mut behind_wait).await,
                    }
                }
                Ok(Step::Again) => {
                    let paused = tokio::time::sleep(self.pause);
                    tokio::pin!(paused);
                    self.rest_of_pause(paused).await;
                }
                Ok(Step::Gone) => {
                    let _ = self.ended.send(self.id);
                    return;
                }
                Ok(Step::Idle) => self.idle_wait(&mut behind_wait).await,
                Err(e) => {
                    metrics::counter!("joust_database_errors_total", "op" => "apply_outcomes")
                        .increment(1);
                    tracing::warn!(experiment = self.id, error = %e, "applying outcomes failed; retrying");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        }
    }

    /// Waits until woken, or until the next look for rows: soon for outcomes acknowledged (here,
    /// or as another replica announced) but not yet final (an older transaction is still
    /// running), after [`POLL_INTERVAL`] otherwise. Without the announced ones, the last rows a
    /// notice announced while an older transaction held them back waited for the poll.
    async fn idle_wait(&mut self, behind_wait: &mut Duration) {
        // Held applications are written once due, whatever else happens.
        let due = self
            .held_due()
            .map(|due| due.saturating_duration_since(Instant::now()));
        let behind = self
            .owners
            .upgrade()
            .zip(self.cache.get(self.id))
            .is_some_and(|(owners, snap)| owners.behind(self.id, snap.applied_through));
        let wait = if behind {
            let wait = *behind_wait;
            *behind_wait = (*behind_wait * 2).min(BEHIND_WAIT_MAX);
            wait
        } else {
            *behind_wait = Duration::from_millis(2);
            POLL_INTERVAL
        };
        let wait = due.map_or(wait, |due| due.min(wait));
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = self.wake.notified() => {}
            _ = self.urgent.notified() => self.read_waits = true,
        }
    }

    /// How long an application may stay unwritten now: nothing at shutdown.
    fn interval(&self) -> Duration {
        if self.settling.load(Ordering::SeqCst) {
            Duration::ZERO
        } else {
            self.checkpoint_interval
        }
    }

    async fn step(&mut self) -> Result<Step, EngineError> {
        let base = match self.cache.get(self.id) {
            Some(s) => s,
            None => match self.load().await? {
                Some(s) => s,
                None => return Ok(Step::Gone),
            },
        };
        // What is held belongs to the snapshot it made: a stored version installed over that one
        // (an administrative change) drops it, and its rows are applied again on the new one.
        if self.held.as_ref().is_some_and(|h| !h.made(&base)) {
            self.held = None;
        }
        if self.held.is_none() && base.ahead_of.is_some() {
            // Ahead of the database with nothing held: an earlier applier of this replica lost
            // its ownership. Start again from what is stored.
            return match self.load().await? {
                Some(_) => Ok(Step::More { full: true }),
                None => Ok(Step::Gone),
            };
        }
        let interval = self.interval();
        let urgent = std::mem::take(&mut self.read_waits);
        let rows = self
            .fetcher
            .pending(self.id, base.applied_through, urgent)
            .await?;
        if rows.is_empty() {
            if let Some(due) = self.held_due() {
                // Nothing new: write what is held once it is due (idle_wait wakes for it).
                if Instant::now() < due {
                    return Ok(Step::Idle);
                }
                return self.write_held_now().await;
            }
            // The outcomes are applied: then the conversions and the windows that closed.
            return match metric_outcomes::step(&self.pool, base, self.clock.now()).await? {
                metric_outcomes::MetricStep::Idle => Ok(Step::Idle),
                metric_outcomes::MetricStep::Written(snap) => {
                    self.cache.put(*snap);
                    Ok(Step::Again)
                }
                metric_outcomes::MetricStep::Stale => self.reload_after_stale().await,
            };
        }
        let n = rows.len();
        let held = self.held.take();
        match apply_outcomes(
            &self.pool,
            &self.writer,
            &self.history,
            base.clone(),
            rows,
            held,
            interval,
        )
        .await?
        {
            Applied::Written(snap) => {
                metrics::histogram!("joust_apply_batch_size").record(n as f64);
                // Before the snapshot is installed: a reader that sees the outcomes applied
                // also finds them counted.
                metrics::counter!("joust_outcomes_applied_total").increment(n as u64);
                self.cache.put(*snap);
            }
            Applied::Held(snap, held) => {
                metrics::histogram!("joust_apply_batch_size").record(n as f64);
                metrics::counter!("joust_outcomes_applied_total").increment(n as u64);
                // Installed only over the snapshot it was applied on; otherwise a stored version
                // came meanwhile, and the rows are applied again on it.
                if self.cache.put_on(&base, *snap) {
                    self.held = Some(held);
                }
            }
            Applied::Stale => return self.reload_after_stale().await,
        }
        Ok(Step::More {
            full: n as i64 >= MAX_APPLY,
        })
    }

    /// After a write found the stored version changed: read it again and go on from there.
    async fn reload_after_stale(&mut self) -> Result<Step, EngineError> {
        self.held = None;
        if self.load().await?.is_none() {
            return Ok(Step::Gone);
        }
        Ok(Step::More { full: true })
    }

    /// Reads the experiment's state as stored, counts and cursor consistent with it, into the
    /// cache; `None` when it was deleted.
    async fn load(&self) -> Result<Option<Arc<Snapshot>>, EngineError> {
        let stored = store::state::load_consistent(&self.pool, self.id).await?;
        let Some(stored) = stored else {
            self.cache.remove(self.id);
            return Ok(None);
        };
        let k = stored.rankers.len();
        let snap = offload(k, move || Snapshot::from_stored(stored)).await?;
        self.cache.replace(snap);
        Ok(self.cache.get(self.id))
    }
}

/// Sleeps until `due`, or forever when nothing is due.
async fn until_due(due: Option<Instant>) {
    match due {
        Some(t) => tokio::time::sleep_until(t.into()).await,
        None => std::future::pending().await,
    }
}
