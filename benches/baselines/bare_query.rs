//! The floor of `benches/bench-http`'s full queries: a bare axum server that answers a query's
//! three requests (a duel, an interleaving, the clicks) with bodies of the sizes joust answers,
//! doing no work beyond parsing each JSON body and answering, and answering the clicks after a
//! simulated group commit (every clicks request waiting at that moment is answered together,
//! `BARE_COMMIT_US` microseconds after the first of them arrived; 0 answers at once). Driven by
//! the same wrk script as joust's full queries, it says what that load costs this machine without
//! any of joust's work: the ratio of its queries/s to `bare_json`'s requests/s bounds joust's full
//! queries/duels from above, since a joust request costs no less than a bare one.
//!
//!     cargo run --release --example bare_query -- 127.0.0.1:18182

use axum::{Json, Router, extract::State, routing::post};
use serde_json::Value;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use tokio::sync::watch;

// The allocator of `joust serve` (src/main.rs), as in `bare_json`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const DUEL: &str = r#"{"duel_token":"AQAAAAAAAAABAAAAAAAAAAEAAAGiGkNJaQAAAaIaejfpAAAAAAAAAAEBohpDSWlxAYuifJFOW5E3Vo2XtdC_CMEdKcS3-Os1PQ","duel_id":"01a21a43-4969-7101-8ba2-7c914e5b9137","experiment_id":1,"rankers":["ranker000","ranker001"],"expires_at":"2026-11-27T00:49:07.049Z","concluded":false}"#;
const INTERLEAVING: &str = r#"{"interleaving_token":"AgEAAAAAAAAAAQAAAAAAAAABAAABohpDSWkAAAGiGno36QAAAAAAAAABAaIaQ0lpcQGLonyRTluRN3sibWV0aG9kIjoidGVhbV9kcmFmdCIsInNob3duIjpbImRvYzQiLCJkb2MxIiwiZG9jNSIsImRvYzIiLCJkb2MzIiwiZG9jNiIsImRvYzciLCJkb2M4IiwiZG9jOSIsImRvYzEwIl0sInRlYW1zIjpbImIiLCJhIiwiYiIsImEiLCJhIiwiYiIsImEiLCJiIiwiYSIsImIiXX0cJpcWQBBrn9YH-6gcvXA_","duel_id":"01a21a43-4969-7101-8ba2-7c914e5b9137","experiment_id":1,"method":"team_draft","documents":[{"id":"doc4","ranker":"ranker001"},{"id":"doc1","ranker":"ranker000"},{"id":"doc5","ranker":"ranker001"},{"id":"doc2","ranker":"ranker000"},{"id":"doc3","ranker":"ranker000"},{"id":"doc6","ranker":"ranker001"},{"id":"doc7","ranker":"ranker000"},{"id":"doc8","ranker":"ranker001"},{"id":"doc9","ranker":"ranker000"},{"id":"doc10","ranker":"ranker001"}],"offset":0,"expires_at":"2026-11-27T00:49:07.049Z"}"#;
const CLICKS: &str = r#"{"duel_id":"01a21a43-4969-7101-8ba2-7c914e5b9137","experiment_id":1,"winner":"tie","status":"recorded","method":"team_draft","credit":{"ranker000":1.0,"ranker001":1.0}}"#;

/// The simulated group commit: clicks requests wait for the next generation, which a thread of
/// its own publishes `delay` after the first waiter of a group arrived (the runtime's timer is
/// too coarse for a commit of a hundred microseconds or so).
struct Commits {
    generation: watch::Sender<u64>,
    waiting: Mutex<bool>,
    wake: Condvar,
}

impl Commits {
    fn start(delay: Duration) -> Arc<Commits> {
        let commits = Arc::new(Commits {
            generation: watch::channel(0).0,
            waiting: Mutex::new(false),
            wake: Condvar::new(),
        });
        let committer = commits.clone();
        std::thread::spawn(move || {
            loop {
                let mut waiting = committer.waiting.lock().unwrap();
                while !*waiting {
                    waiting = committer.wake.wait(waiting).unwrap();
                }
                drop(waiting);
                std::thread::sleep(delay);
                // The flag is cleared and the group answered under the lock a request joins
                // under: a request either joined before (and is answered now) or joins after
                // (and starts the next group), never answered by a commit that began without it.
                let mut waiting = committer.waiting.lock().unwrap();
                *waiting = false;
                committer.generation.send_modify(|g| *g += 1);
            }
        });
        commits
    }

    async fn join(&self) {
        let mut seen = {
            let mut waiting = self.waiting.lock().unwrap();
            if !*waiting {
                *waiting = true;
                self.wake.notify_one();
            }
            self.generation.subscribe()
        };
        let _ = seen.changed().await;
    }
}

fn answer(body: &'static str) -> ([(&'static str, &'static str); 1], &'static str) {
    ([("content-type", "application/json")], body)
}

#[tokio::main]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:18182".to_string());
    let delay = std::env::var("BARE_COMMIT_US")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(Duration::ZERO, Duration::from_micros);
    let commits = (!delay.is_zero()).then(|| Commits::start(delay));
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .expect("bind the listen address");
    let app = Router::new()
        .route(
            "/v1/experiments/{id}/duels",
            post(|| async { answer(DUEL) }),
        )
        .route(
            "/v1/interleavings",
            post(|Json(_): Json<Value>| async { answer(INTERLEAVING) }),
        )
        .route(
            "/v1/clicks",
            post(
                |State(commits): State<Option<Arc<Commits>>>, Json(_): Json<Value>| async move {
                    if let Some(commits) = commits {
                        commits.join().await;
                    }
                    answer(CLICKS)
                },
            ),
        )
        .with_state(commits);
    axum::serve(listener, app).await.expect("serve");
}
