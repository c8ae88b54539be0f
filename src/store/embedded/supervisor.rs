//! Keeps the embedded server running while joust serves: if the postmaster exits (killed, out of
//! memory, a crash), it is started again on the same cluster, after a pause that doubles with
//! each failed attempt, every exit and attempt logged. Meanwhile joust keeps serving duels from
//! its cache and refuses outcomes with 503 (see `engine::runtime::db_health`); nothing acknowledged
//! is lost, because Postgres replays its write-ahead log on the restart.

use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::{EmbeddedError, EmbeddedPostgres};

/// How often the supervisor checks that the server is still running.
const CHECK_INTERVAL: Duration = Duration::from_millis(100);
/// The pause before the second attempt to restart; it doubles up to [`MAX_BACKOFF`]. The first
/// attempt is immediate. Orphaned backends of a killed postmaster need a moment to notice and
/// exit before a new one may start.
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// An embedded server under supervision. [`stop`](Supervisor::stop) ends the supervision and
/// stops whichever server is running then.
pub struct Supervisor {
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<EmbeddedPostgres>,
}

impl Supervisor {
    /// Supervises `pg`. `restarted` is called after each successful restart (the server may have
    /// moved to another port if its own was taken meanwhile).
    pub fn start(
        pg: EmbeddedPostgres,
        restarted: impl Fn(&EmbeddedPostgres) + Send + 'static,
    ) -> Supervisor {
        let (stop, stopped) = oneshot::channel();
        Supervisor {
            stop: Some(stop),
            task: tokio::spawn(watch(pg, stopped, restarted)),
        }
    }

    pub async fn stop(mut self) -> Result<(), EmbeddedError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match (&mut self.task).await {
            Ok(mut pg) => pg.stop().await,
            // The supervisor panicked; its server was stopped when the panic dropped it.
            Err(e) => Err(EmbeddedError::Io {
                context: "supervising the embedded Postgres".into(),
                source: std::io::Error::other(e.to_string()),
            }),
        }
    }
}

async fn watch(
    mut pg: EmbeddedPostgres,
    mut stop: oneshot::Receiver<()>,
    restarted: impl Fn(&EmbeddedPostgres),
) -> EmbeddedPostgres {
    loop {
        tokio::select! {
            _ = &mut stop => return pg,
            _ = tokio::time::sleep(CHECK_INTERVAL) => {}
        }
        let Some(status) = pg.server.as_mut().and_then(|s| s.exit_status()) else {
            continue;
        };
        tracing::error!(%status, port = pg.port, "the embedded Postgres exited; restarting it");
        metrics::counter!("joust_embedded_postgres_restarts_total").increment(1);
        let mut backoff = FIRST_BACKOFF;
        let mut attempt = 1u32;
        loop {
            let started = tokio::select! {
                r = pg.launch() => Some(r),
                _ = &mut stop => None,
            };
            match started {
                None => return pg,
                Some(Ok(())) => {
                    tracing::info!(
                        port = pg.port,
                        attempt,
                        "the embedded Postgres is running again"
                    );
                    restarted(&pg);
                    break;
                }
                Some(Err(e)) => {
                    tracing::warn!(error = %e, attempt, retry_in = ?backoff, "restarting the embedded Postgres failed");
                }
            }
            tokio::select! {
                _ = &mut stop => return pg,
                _ = tokio::time::sleep(backoff) => {}
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
            attempt += 1;
        }
    }
}
