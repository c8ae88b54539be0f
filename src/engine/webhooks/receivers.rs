//! What one replica's delivery task knows about the receivers it posts to: how many attempts to
//! each are in flight (at most [`Limits::per_receiver`], so a slow receiver holds a few of the
//! task's slots and never all of them), which experiments have an attempt in flight (one at a
//! time each, so one experiment's events go oldest first), and each receiver's circuit breaker.
//!
//! The breaker: after [`Limits::failures_to_open`] failed attempts in a row a receiver is left
//! alone for [`Limits::cooldown`] (its events stay due and spend no attempt); then one attempt
//! probes it: a success closes the breaker, a failure opens it again for twice as long (at most
//! [`Limits::max_cooldown`]). A receiver that is down thus costs a few attempts per cooldown
//! instead of every slot it could take, and its events are delivered soon after it comes back.
//!
//! A receiver is the scheme, host and port of the URL (`https://hooks.example.com:8443`), as
//! [`receiver_key`] cuts it from the URL's text; the outbox query cuts it the same way to leave
//! out the events of receivers that have no free slot.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// The concurrency and breaker settings.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Attempts in flight to one receiver, per replica.
    pub per_receiver: usize,
    /// Failed attempts in a row that open a receiver's breaker.
    pub failures_to_open: u32,
    /// How long an opened breaker leaves its receiver alone the first time.
    pub cooldown: Duration,
    /// The longest it leaves it alone (the cooldown doubles at each failed probe).
    pub max_cooldown: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            per_receiver: 4,
            failures_to_open: 5,
            cooldown: Duration::from_secs(30),
            max_cooldown: Duration::from_secs(600),
        }
    }
}

#[derive(Debug, Default)]
struct Receiver {
    in_flight: usize,
    failures_in_a_row: u32,
    /// Set while the breaker is open (until then) or probing (past it).
    open_until: Option<Instant>,
    /// The cooldown of the last opening.
    last_cooldown: Duration,
}

/// The in-flight attempts and breakers of one replica.
#[derive(Debug)]
pub struct Receivers {
    limits: Limits,
    by_key: HashMap<String, Receiver>,
    experiments: HashSet<i64>,
}

impl Receivers {
    pub fn new(limits: Limits) -> Receivers {
        Receivers {
            limits,
            by_key: HashMap::new(),
            experiments: HashSet::new(),
        }
    }

    /// How many attempts `r` may have in flight now.
    fn capacity(&self, r: &Receiver, now: Instant) -> usize {
        match r.open_until {
            None => self.limits.per_receiver,
            Some(until) if now < until => 0,
            // Half-open: one probe.
            Some(_) => 1,
        }
    }

    /// The experiments with an attempt in flight, and the receivers with no free slot: the
    /// events the next claim leaves out.
    pub fn exclusions(&self, now: Instant) -> (Vec<i64>, Vec<String>) {
        let busy = self.experiments.iter().copied().collect();
        let full = self
            .by_key
            .iter()
            .filter(|(_, r)| r.in_flight >= self.capacity(r, now))
            .map(|(k, _)| k.clone())
            .collect();
        (busy, full)
    }

    /// Takes a slot of `key` for an attempt of `experiment`'s event, if one is free.
    pub fn try_start(&mut self, key: &str, experiment: i64, now: Instant) -> bool {
        if self.experiments.contains(&experiment) {
            return false;
        }
        let free = match self.by_key.get(key) {
            Some(r) => r.in_flight < self.capacity(r, now),
            None => self.limits.per_receiver > 0,
        };
        if free {
            self.by_key.entry(key.to_string()).or_default().in_flight += 1;
            self.experiments.insert(experiment);
        }
        free
    }

    /// Gives the slot back and records how the attempt went.
    pub fn finish(&mut self, key: &str, experiment: i64, delivered: bool, now: Instant) {
        self.experiments.remove(&experiment);
        let limits = self.limits;
        let Some(r) = self.by_key.get_mut(key) else {
            return;
        };
        r.in_flight = r.in_flight.saturating_sub(1);
        if delivered {
            r.failures_in_a_row = 0;
            r.open_until = None;
        } else {
            r.failures_in_a_row += 1;
            let cooldown = match r.open_until {
                // A failed probe: twice as long as last time.
                Some(until) if now >= until => Some((r.last_cooldown * 2).min(limits.max_cooldown)),
                // An attempt started before the breaker opened: it stays open as it is.
                Some(_) => None,
                None if r.failures_in_a_row >= limits.failures_to_open => Some(limits.cooldown),
                None => None,
            };
            if let Some(c) = cooldown {
                r.open_until = Some(now + c);
                r.last_cooldown = c;
                tracing::warn!(
                    receiver = key,
                    failures = r.failures_in_a_row,
                    cooldown_ms = c.as_millis() as u64,
                    "webhook receiver's breaker open: its events wait"
                );
            }
        }
        if r.in_flight == 0 && r.failures_in_a_row == 0 {
            // Nothing to remember: keeps the map as small as the receivers in trouble.
            self.by_key.remove(key);
        }
    }

    /// Whether `key`'s breaker is open now.
    #[cfg(test)]
    pub fn is_open(&self, key: &str, now: Instant) -> bool {
        self.by_key
            .get(key)
            .is_some_and(|r| r.open_until.is_some_and(|u| now < u))
    }
}

/// The receiver of a webhook URL: its text up to the path (`scheme://host:port`). The outbox
/// query cuts it with the same rule (`^[^:/?#]*://[^/?#]*`, the whole URL when that does not
/// match), so both agree on every stored URL.
pub fn receiver_key(url: &str) -> &str {
    let Some(i) = url.find([':', '/', '?', '#']) else {
        return url;
    };
    if !url[i..].starts_with("://") {
        return url;
    }
    let rest = i + 3;
    let end = url[rest..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |j| rest + j);
    &url[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            per_receiver: 2,
            failures_to_open: 3,
            cooldown: Duration::from_secs(10),
            max_cooldown: Duration::from_secs(25),
        }
    }

    #[test]
    fn keys_are_scheme_host_and_port() {
        assert_eq!(
            receiver_key("https://hooks.example.com:8443/joust?team=a"),
            "https://hooks.example.com:8443"
        );
        assert_eq!(receiver_key("http://h/"), "http://h");
        assert_eq!(receiver_key("http://h?x"), "http://h");
        assert_eq!(receiver_key("http://h"), "http://h");
        assert_eq!(receiver_key("http:h/x"), "http:h/x");
    }

    #[test]
    fn a_receiver_takes_at_most_its_slots_and_an_experiment_one() {
        let now = Instant::now();
        let mut r = Receivers::new(limits());
        assert!(r.try_start("http://slow", 1, now));
        assert!(
            !r.try_start("http://slow", 1, now),
            "one attempt per experiment"
        );
        assert!(r.try_start("http://slow", 2, now));
        assert!(!r.try_start("http://slow", 3, now), "two slots");
        assert!(r.try_start("http://fast", 3, now));
        let (busy, full) = r.exclusions(now);
        assert_eq!(full, ["http://slow"]);
        let mut busy = busy;
        busy.sort();
        assert_eq!(busy, [1, 2, 3]);
        r.finish("http://slow", 1, true, now);
        assert!(r.try_start("http://slow", 4, now));
    }

    #[test]
    fn the_breaker_opens_after_failures_probes_once_and_backs_off() {
        let t0 = Instant::now();
        let mut r = Receivers::new(limits());
        for e in 0..3 {
            assert!(r.try_start("http://down", e, t0));
            r.finish("http://down", e, false, t0);
        }
        assert!(r.is_open("http://down", t0));
        assert!(!r.try_start("http://down", 9, t0 + Duration::from_secs(9)));
        assert_eq!(r.exclusions(t0).1, ["http://down"]);
        // Past the cooldown: one probe, not two.
        let t1 = t0 + Duration::from_secs(10);
        assert!(r.try_start("http://down", 9, t1));
        assert!(!r.try_start("http://down", 10, t1));
        // It fails: open for twice as long.
        r.finish("http://down", 9, false, t1);
        assert!(r.is_open("http://down", t1 + Duration::from_secs(19)));
        assert!(!r.is_open("http://down", t1 + Duration::from_secs(20)));
        // The next failed probe would wait 40 s; the cap is 25.
        let t2 = t1 + Duration::from_secs(20);
        assert!(r.try_start("http://down", 9, t2));
        r.finish("http://down", 9, false, t2);
        assert!(!r.is_open("http://down", t2 + Duration::from_secs(25)));
        // A successful probe closes it: all slots again.
        let t3 = t2 + Duration::from_secs(25);
        assert!(r.try_start("http://down", 9, t3));
        r.finish("http://down", 9, true, t3);
        assert!(r.try_start("http://down", 1, t3));
        assert!(r.try_start("http://down", 2, t3));
    }

    #[test]
    fn failures_of_other_receivers_do_not_count() {
        let now = Instant::now();
        let mut r = Receivers::new(limits());
        for e in 0..5 {
            let key = format!("http://r{e}");
            assert!(r.try_start(&key, e, now));
            r.finish(&key, e, false, now);
        }
        assert!((0..5).all(|e| !r.is_open(&format!("http://r{e}"), now)));
        // A success between failures resets the count.
        for (e, ok) in [(1, false), (2, false), (3, true), (4, false), (5, false)] {
            assert!(r.try_start("http://flaky", e, now));
            r.finish("http://flaky", e, ok, now);
        }
        assert!(!r.is_open("http://flaky", now));
    }
}
