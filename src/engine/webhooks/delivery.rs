//! The delivery task: every replica runs one. It claims due events from the outbox, posts each
//! with its signature, and records the result: delivered on a 2xx answer; otherwise retried with
//! exponential backoff and jitter until [`RetryPolicy::max_attempts`], then abandoned. A claim is
//! a lease: a replica that dies mid-attempt leaves the event to be retried once the lease ends,
//! so delivery is at least once (receivers drop repeats by `event_id`).

use rand::Rng;
use std::sync::Weak;
use std::time::{Duration, Instant};

use crate::store::webhooks::{self, Claimed};

use super::client::{self, TrustedRoots};
use super::signature;
use crate::engine::Engine;

/// How deliveries are retried and how often the outbox is polled.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Delay before the second attempt; each further one doubles it, up to `max_delay`.
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// Attempts before an event is abandoned.
    pub max_attempts: i32,
    /// How long one attempt may take (connecting, sending, the answer's status).
    pub attempt_timeout: Duration,
    /// How often the outbox is polled for due events.
    pub poll_interval: Duration,
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

    /// The lease of a claim: longer than any attempt can take.
    fn lease(&self) -> Duration {
        self.attempt_timeout * 3
    }
}

/// Most events claimed per poll.
const CLAIM_BATCH: i64 = 32;

/// Runs until the engine is dropped; `roots` are the private CAs trusted besides the public ones.
pub async fn run(engine: Weak<Engine>, policy: RetryPolicy, roots: TrustedRoots) {
    let client = match client::build(policy.attempt_timeout, &roots) {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "could not build the webhook client; no webhook is delivered");
            return;
        }
    };
    loop {
        tokio::time::sleep(policy.poll_interval).await;
        let Some(engine) = engine.upgrade() else {
            return;
        };
        if !engine.database_ok() {
            continue;
        }
        let pool = engine.pool().clone();
        // The task holds no strong reference while it posts: a stopped server ends it.
        drop(engine);
        if let Err(e) = deliver_due(&pool, &client, &policy).await {
            tracing::warn!(error = %e, "webhook delivery pass failed");
            metrics::counter!("joust_database_errors_total", "op" => "webhooks").increment(1);
        }
    }
}

/// One pass: claims due events and posts them.
async fn deliver_due(
    pool: &sqlx::PgPool,
    client: &reqwest::Client,
    policy: &RetryPolicy,
) -> Result<(), crate::store::StoreError> {
    let claimed = webhooks::claim_due(pool, CLAIM_BATCH, policy.lease().as_millis() as i64).await?;
    if let Ok(n) = webhooks::pending(pool).await {
        metrics::gauge!("joust_webhook_pending").set(n as f64);
    }
    // One experiment's events go one after another, oldest first (so a receiver that is up sees
    // them in order); different experiments' concurrently.
    let mut by_experiment: std::collections::BTreeMap<i64, Vec<Claimed>> = Default::default();
    for c in claimed {
        by_experiment.entry(c.experiment_id).or_default().push(c);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (_, mut events) in by_experiment {
        events.sort_by_key(|c| c.id);
        let (pool, client, policy) = (pool.clone(), client.clone(), policy.clone());
        tasks.spawn(async move {
            for c in events {
                attempt(&pool, &client, &policy, c).await?;
            }
            Ok(())
        });
    }
    while let Some(done) = tasks.join_next().await {
        match done {
            Ok(Err(e)) => return Err(e),
            Err(e) => tracing::error!(error = %e, "a webhook attempt panicked"),
            Ok(Ok(())) => {}
        }
    }
    Ok(())
}

/// Posts one claimed event and records what happened.
async fn attempt(
    pool: &sqlx::PgPool,
    client: &reqwest::Client,
    policy: &RetryPolicy,
    c: Claimed,
) -> Result<(), crate::store::StoreError> {
    let Some((url, secret)) = &c.target else {
        metrics::counter!("joust_webhook_deliveries_total", "result" => "abandoned").increment(1);
        return webhooks::mark_abandoned(pool, c.id, "the experiment no longer has a webhook")
            .await;
    };
    let started = Instant::now();
    let sent_at = chrono::Utc::now().timestamp();
    let result = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(
            signature::HEADER,
            signature::header_value(secret, sent_at, &c.body),
        )
        .header("joust-event", &c.event)
        .header("joust-event-id", c.event_id.to_string())
        .body(c.body.clone())
        .send()
        .await;
    metrics::histogram!("joust_webhook_attempt_duration_seconds")
        .record(started.elapsed().as_secs_f64());
    let error = match result {
        Ok(resp) if resp.status().is_success() => None,
        Ok(resp) => Some(format!("the receiver answered {}", resp.status())),
        Err(e) if e.is_timeout() => Some(format!(
            "no answer within {} ms",
            policy.attempt_timeout.as_millis()
        )),
        Err(e) => Some(format!("could not post: {}", error_chain(&e))),
    };
    match error {
        None => {
            metrics::counter!("joust_webhook_deliveries_total", "result" => "delivered")
                .increment(1);
            webhooks::mark_delivered(pool, c.id).await
        }
        Some(why) if c.attempts >= policy.max_attempts => {
            metrics::counter!("joust_webhook_deliveries_total", "result" => "abandoned")
                .increment(1);
            tracing::warn!(event_id = %c.event_id, attempts = c.attempts, error = %why, "webhook event abandoned");
            let why = format!("gave up after {} attempts; last: {why}", c.attempts);
            webhooks::mark_abandoned(pool, c.id, &why).await
        }
        Some(why) => {
            metrics::counter!("joust_webhook_deliveries_total", "result" => "failed_attempt")
                .increment(1);
            let wait = policy.backoff(c.attempts, &mut rand::rng());
            tracing::info!(event_id = %c.event_id, attempts = c.attempts, retry_in_ms = wait.as_millis() as u64, error = %why, "webhook attempt failed");
            webhooks::mark_failed(pool, c.id, &why, wait.as_millis() as i64).await
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
