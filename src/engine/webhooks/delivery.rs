//! The delivery task: every replica runs one. It claims due events from the outbox, posts each
//! with its signature, and records the result: delivered on a 2xx answer; otherwise retried with
//! exponential backoff and jitter until [`RetryPolicy::max_attempts`], then abandoned. A claim is
//! a lease: a replica that dies mid-attempt leaves the event to be retried once the lease ends,
//! so delivery is at least once (receivers drop repeats by `event_id`).
//!
//! Each claimed event is posted at once, in its own task, and the task polls on while attempts
//! run: a claim never waits behind another attempt, so its lease
//! ([`RetryPolicy::lease`], more than twice the longest attempt) always outlasts the work it
//! covers, and no other replica takes an event while it is being posted. A slow receiver holds
//! at most [`Limits::per_receiver`] attempts of a replica (its other events are not claimed
//! meanwhile) and one that keeps failing is left alone by its circuit breaker
//! (`receivers.rs`), so neither delays another receiver's events.

use rand::Rng;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::store::webhooks::{self, Claimed, Exclusions};

use super::client::{self, TrustedRoots};
use super::egress::Egress;
use super::receivers::{Limits, Receivers, receiver_key};
use super::signature;
use crate::engine::Engine;

/// How deliveries are retried, how often the outbox is polled, and how many attempts run at once.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Delay before the second attempt; each further one doubles it, up to `max_delay`.
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// Attempts before an event is abandoned.
    pub max_attempts: i32,
    /// How long one attempt may take (resolving, connecting, sending, the answer's status); an
    /// attempt is cut off then.
    pub attempt_timeout: Duration,
    /// How often the outbox is polled for due events (and at once when an attempt ends).
    pub poll_interval: Duration,
    /// Per-receiver concurrency and the circuit breaker.
    pub limits: Limits,
}

impl Default for RetryPolicy {
    /// 12 attempts, 2 s doubling to at most 1 h: about 3 hours of trying before giving up.
    fn default() -> Self {
        RetryPolicy {
            base_delay: Duration::from_secs(2),
            max_delay: Duration::from_secs(3600),
            max_attempts: 12,
            attempt_timeout: Duration::from_secs(10),
            poll_interval: Duration::from_millis(500),
            limits: Limits::default(),
        }
    }
}

impl RetryPolicy {
    /// The wait after failed attempt number `attempts` (1-based): the doubled delay, capped,
    /// times a uniform factor in [1/2, 1] so that receivers coming back from an outage are not
    /// hit by every replica's retries at the same instant.
    pub fn backoff<R: Rng + ?Sized>(&self, attempts: i32, rng: &mut R) -> Duration {
        let doublings = attempts.clamp(1, 31) as u32 - 1;
        let full = self
            .base_delay
            .saturating_mul(1u32 << doublings.min(30))
            .min(self.max_delay);
        full.mul_f64(rng.random_range(0.5..=1.0))
    }

    /// The lease of a claim, which covers one attempt started as soon as the claim returns and
    /// cut off after `attempt_timeout`: twice that and 5 s more leave room for a slow database
    /// round trip and a paused process before the attempt starts. (A result recorded after the
    /// lease ended is fenced off by the attempt count, see `store::webhooks`.)
    pub fn lease(&self) -> Duration {
        self.attempt_timeout * 2 + Duration::from_secs(5)
    }
}

/// Most events claimed per poll.
const CLAIM_BATCH: i64 = 32;
/// Most attempts in flight on one replica.
const MAX_IN_FLIGHT: usize = 64;

/// Runs until the engine is dropped; `roots` are the private CAs trusted besides the public ones,
/// `egress` where events may go.
pub async fn run(engine: Weak<Engine>, policy: RetryPolicy, roots: TrustedRoots, egress: Egress) {
    let client = match client::build(policy.attempt_timeout, &roots, &egress) {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "could not build the webhook client; no webhook is delivered");
            return;
        }
    };
    let delivery = Delivery {
        client,
        policy: policy.clone(),
        egress,
        receivers: Arc::new(Mutex::new(Receivers::new(policy.limits))),
        ended: Arc::new(tokio::sync::Notify::new()),
    };
    // Dropped with the task: a stopped server cuts its attempts short (their leases end and
    // another replica retries them).
    let mut attempts = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(policy.poll_interval) => {}
            _ = delivery.ended.notified() => {}
        }
        while let Some(done) = attempts.try_join_next() {
            if let Err(e) = done {
                tracing::error!(error = %e, "a webhook attempt panicked");
            }
        }
        let Some(engine) = engine.upgrade() else {
            return;
        };
        if !engine.database_ok() {
            continue;
        }
        let pool = engine.pool().clone();
        // The task holds no strong reference while it posts: a stopped server ends it.
        drop(engine);
        let free = MAX_IN_FLIGHT.saturating_sub(attempts.len());
        if free == 0 {
            continue;
        }
        if let Err(e) = delivery.start_due(&pool, free, &mut attempts).await {
            tracing::warn!(error = %e, "webhook delivery pass failed");
            metrics::counter!("joust_database_errors_total", "op" => "webhooks").increment(1);
        }
    }
}

/// What every attempt of one replica shares.
#[derive(Clone)]
struct Delivery {
    client: reqwest::Client,
    policy: RetryPolicy,
    egress: Egress,
    receivers: Arc<Mutex<Receivers>>,
    /// Told when an attempt ends, so that the next event of its experiment or receiver is
    /// claimed without waiting for the poll.
    ended: Arc<tokio::sync::Notify>,
}

impl Delivery {
    /// Claims due events (at most `free`) of receivers with a free slot and starts an attempt
    /// for each.
    async fn start_due(
        &self,
        pool: &sqlx::PgPool,
        free: usize,
        attempts: &mut tokio::task::JoinSet<()>,
    ) -> Result<(), crate::store::StoreError> {
        let (experiments, receivers) = self.receivers.lock().unwrap().exclusions(Instant::now());
        let excluded = Exclusions {
            experiments: &experiments,
            receivers: &receivers,
        };
        let limit = (free as i64).min(CLAIM_BATCH);
        let lease = self.policy.lease().as_millis() as i64;
        let claimed = webhooks::claim_due(pool, limit, lease, &excluded).await?;
        if let Ok(n) = webhooks::pending(pool).await {
            metrics::gauge!("joust_webhook_pending").set(n as f64);
        }
        for c in claimed {
            let key = c
                .target
                .as_ref()
                .map(|(url, _)| receiver_key(url).to_string());
            if let Some(key) = &key {
                let started =
                    self.receivers
                        .lock()
                        .unwrap()
                        .try_start(key, c.experiment_id, Instant::now());
                if !started {
                    // Its receiver's slots went to events claimed before it in this batch.
                    webhooks::release(pool, &c).await?;
                    continue;
                }
            }
            let (this, pool) = (self.clone(), pool.clone());
            attempts.spawn(async move {
                let experiment = c.experiment_id;
                let delivered = this.attempt(&pool, c).await;
                if let Some(key) = key {
                    let ok = delivered.as_ref().is_ok_and(|&d| d);
                    this.receivers
                        .lock()
                        .unwrap()
                        .finish(&key, experiment, ok, Instant::now());
                }
                if let Err(e) = delivered {
                    tracing::warn!(error = %e, "could not record a webhook attempt");
                    metrics::counter!("joust_database_errors_total", "op" => "webhooks")
                        .increment(1);
                }
                this.ended.notify_one();
            });
        }
        Ok(())
    }

    /// Posts one claimed event and records what happened; says whether it was delivered.
    async fn attempt(
        &self,
        pool: &sqlx::PgPool,
        c: Claimed,
    ) -> Result<bool, crate::store::StoreError> {
        let policy = &self.policy;
        let Some((url, secret)) = &c.target else {
            metrics::counter!("joust_webhook_deliveries_total", "result" => "abandoned")
                .increment(1);
            webhooks::mark_abandoned(pool, &c, "the experiment no longer has a webhook").await?;
            return Ok(false);
        };
        let started = Instant::now();
        let error = match self.post(url, secret, &c).await {
            Ok(resp) if resp.status().is_success() => None,
            Ok(resp) => Some(format!("the receiver answered {}", resp.status())),
            Err(why) => Some(why),
        };
        metrics::histogram!("joust_webhook_attempt_duration_seconds")
            .record(started.elapsed().as_secs_f64());
        match error {
            None => {
                metrics::counter!("joust_webhook_deliveries_total", "result" => "delivered")
                    .increment(1);
                webhooks::mark_delivered(pool, &c).await?;
                Ok(true)
            }
            Some(why) if c.attempts >= policy.max_attempts => {
                metrics::counter!("joust_webhook_deliveries_total", "result" => "abandoned")
                    .increment(1);
                tracing::warn!(event_id = %c.event_id, attempts = c.attempts, error = %why, "webhook event abandoned");
                let why = format!("gave up after {} attempts; last: {why}", c.attempts);
                webhooks::mark_abandoned(pool, &c, &why).await?;
                Ok(false)
            }
            Some(why) => {
                metrics::counter!("joust_webhook_deliveries_total", "result" => "failed_attempt")
                    .increment(1);
                let wait = policy.backoff(c.attempts, &mut rand::rng());
                tracing::info!(event_id = %c.event_id, attempts = c.attempts, retry_in_ms = wait.as_millis() as u64, error = %why, "webhook attempt failed");
                webhooks::mark_failed(pool, &c, &why, wait.as_millis() as i64).await?;
                Ok(false)
            }
        }
    }

    /// One POST of the event, cut off after the attempt timeout; an address written in the URL
    /// is checked first (a name is checked by the client's resolver, on the addresses it
    /// connects to).
    async fn post(
        &self,
        url: &str,
        secret: &str,
        c: &Claimed,
    ) -> Result<reqwest::Response, String> {
        let parsed = reqwest::Url::parse(url).map_err(|_| "not an absolute URL".to_string())?;
        if let Some(host) = parsed.host() {
            self.egress
                .check_literal(host)
                .map_err(|e| format!("refused: {e}"))?;
        }
        let sent_at = chrono::Utc::now().timestamp();
        let request = self
            .client
            .post(parsed)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(
                signature::HEADER,
                signature::header_value(secret, sent_at, &c.body),
            )
            .header("joust-event", &c.event)
            .header("joust-event-id", c.event_id.to_string())
            .body(c.body.clone())
            .send();
        let timeout = self.policy.attempt_timeout;
        let no_answer = || format!("no answer within {} ms", timeout.as_millis());
        match tokio::time::timeout(timeout, request).await {
            Err(_) => Err(no_answer()),
            Ok(Err(e)) if e.is_timeout() => Err(no_answer()),
            Ok(Err(e)) => Err(format!("could not post: {}", error_chain(&e))),
            Ok(Ok(resp)) => Ok(resp),
        }
    }
}

/// An error with its causes, `outer: inner`.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let p = RetryPolicy {
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
            ..RetryPolicy::default()
        };
        let mut rng = crate::bandit::BanditRng::seed_from_u64(7);
        for attempts in 1..40 {
            let full = Duration::from_secs(1 << (attempts - 1).min(20)).min(p.max_delay);
            for _ in 0..50 {
                let d = p.backoff(attempts, &mut rng);
                assert!(
                    d >= full / 2 && d <= full,
                    "attempt {attempts}: {d:?} vs {full:?}"
                );
            }
        }
    }
}
