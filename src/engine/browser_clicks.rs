//! Clicks from the browser: an experiment may list web origins whose pages post its clicks with no
//! API key, the signed interleaving token being the capability (see docs/interleaving.md,
//! "Clicks from the browser").
//!
//! Here: the setting and its validation, and [`OriginRegistry`], every replica's in-memory set of
//! the origins some live experiment lists, which answers CORS preflights without the database.
//! The registry is fed by what replicas already do: each snapshot this process loads (so a
//! change made here shows at once), and the refresh poll of state versions (so a change made by
//! another replica shows within a refresh interval), which reads the origins of the experiments
//! whose version moved.

use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};
use std::time::Instant;

use super::{EngineError, ErrorCode};

/// Most origins one experiment may list.
pub const MAX_ORIGINS: usize = 32;
/// Longest origin accepted, in bytes (a host name is at most 253).
pub const MAX_ORIGIN_LEN: usize = 300;

/// `"browser_clicks": {"origins": [...]}` of an experiment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrowserClicks {
    pub origins: Vec<String>,
}

impl BrowserClicks {
    /// Checks every origin ([`check_origin`]), their number and that none is listed twice.
    pub fn validate(&self) -> Result<(), EngineError> {
        let n = self.origins.len();
        if !(1..=MAX_ORIGINS).contains(&n) {
            return Err(invalid(format!(
                "browser_clicks.origins must list 1 to {MAX_ORIGINS} origins, got {n}; \
                 to turn browser clicks off, leave browser_clicks out (or PATCH it to null)"
            )));
        }
        let mut seen = HashSet::new();
        for origin in &self.origins {
            check_origin(origin).map_err(|why| {
                invalid(format!(
                    "{origin:?} is not an origin as a browser sends it in the Origin header \
                     (scheme://host[:port], scheme http or https, e.g. https://search.example.com): {why}"
                ))
            })?;
            if !seen.insert(origin.as_str()) {
                return Err(invalid(format!("origin {origin:?} is listed twice")));
            }
        }
        Ok(())
    }
}

fn invalid(message: String) -> EngineError {
    EngineError::invalid(ErrorCode::InvalidOrigin, message)
}

/// Whether `origin` is exactly what a browser sends in the `Origin` header for a page: `http` or
/// `https`, `://`, a lowercase ASCII host (a DNS name, an IPv4 address or a bracketed IPv6
/// address), an optional port other than the scheme's default, and nothing else (no path, query,
/// fragment, user info or trailing slash). Anything else could never match a request, so it is
/// refused rather than stored. Says why not.
pub fn check_origin(origin: &str) -> Result<(), &'static str> {
    if origin.len() > MAX_ORIGIN_LEN {
        return Err("too long");
    }
    let (scheme, rest) = origin
        .split_once("://")
        .ok_or("no `://` after the scheme")?;
    let default_port = match scheme {
        "http" => "80",
        "https" => "443",
        _ => return Err("the scheme must be http or https, in lowercase"),
    };
    if rest.contains(['/', '?', '#']) {
        return Err("an origin has no path, query, fragment or trailing slash");
    }
    if rest.contains('@') {
        return Err("an origin has no user info");
    }
    let (host, port) = if rest.starts_with('[') {
        let end = rest.find(']').ok_or("an IPv6 host needs its closing `]`")?;
        let inner = &rest[1..end];
        // Browsers send an IPv6 address in its canonical (shortest, lowercase) form.
        if inner
            .parse::<std::net::Ipv6Addr>()
            .map_or(true, |ip| ip.to_string() != inner)
        {
            return Err("an IPv6 host is an address in its shortest lowercase form, in `[` `]`");
        }
        (&rest[..=end], &rest[end + 1..])
    } else {
        match rest.rfind(':') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        }
    };
    if host.is_empty() {
        return Err("no host");
    }
    if !host.starts_with('[') {
        if host.len() > 253 {
            return Err("the host is longer than 253 characters");
        }
        for label in host.split('.') {
            if label.is_empty() || label.len() > 63 {
                return Err("each dot-separated part of the host is 1 to 63 characters");
            }
            if !label
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            {
                return Err(
                    "the host holds lowercase ASCII letters, digits, `-` and `.` (browsers send \
                     hosts in lowercase, and international names in their xn-- form)",
                );
            }
        }
    }
    if let Some(port) = port.strip_prefix(':') {
        if port.is_empty()
            || port.starts_with('0')
            || !port.chars().all(|c| c.is_ascii_digit())
            || !port.parse::<u32>().is_ok_and(|p| p <= 65535)
        {
            return Err("the port is a number from 1 to 65535 without leading zeros");
        }
        if port == default_port {
            return Err(
                "browsers leave out the scheme's default port (80 for http, 443 for https)",
            );
        }
    }
    Ok(())
}

/// What a replica knows of one experiment's origins, and at which state version.
struct Known {
    version: i64,
    origins: Option<Arc<[String]>>,
    noted: Instant,
}

#[derive(Default)]
struct Inner {
    by_experiment: HashMap<i64, Known>,
    /// Every origin some live experiment lists.
    any: HashSet<String>,
}

/// The origins every live experiment of the database lists, as far as this replica knows: kept
/// for CORS preflights, which carry no token and so cannot name their experiment.
#[derive(Default)]
pub struct OriginRegistry {
    inner: RwLock<Inner>,
}

impl OriginRegistry {
    /// Whether some live experiment lists `origin`.
    pub fn contains(&self, origin: &str) -> bool {
        self.inner.read().unwrap().any.contains(origin)
    }

    /// Records an experiment's origins at `version`, unless a later version is already known.
    pub fn note(&self, id: i64, version: i64, origins: Option<Arc<[String]>>) {
        let mut inner = self.inner.write().unwrap();
        if note(&mut inner, id, version, origins) {
            rebuild(&mut inner);
        }
    }

    /// Records that an experiment was deleted at `version`.
    pub fn forget(&self, id: i64, version: i64) {
        self.note(id, version, None);
    }

    /// The live experiments (`live`: id -> state version) whose origins this replica has not
    /// read at their current version.
    pub fn stale(&self, live: &HashMap<i64, i64>) -> Vec<i64> {
        let inner = self.inner.read().unwrap();
        live.iter()
            .filter(|&(id, &v)| inner.by_experiment.get(id).is_none_or(|k| k.version < v))
            .map(|(&id, _)| id)
            .collect()
    }

    /// Takes in a poll begun at `started`: `live` are the versions of every live experiment,
    /// `rows` the origins read for the stale ones. Experiments no longer live are dropped, unless
    /// noted after the poll began (created here meanwhile).
    pub fn merge(
        &self,
        started: Instant,
        live: &HashMap<i64, i64>,
        rows: Vec<(i64, i64, Option<Vec<String>>)>,
    ) {
        let mut inner = self.inner.write().unwrap();
        let mut changed = false;
        for (id, version, origins) in rows {
            changed |= note(&mut inner, id, version, origins.map(Into::into));
        }
        let before = inner.by_experiment.len();
        let mut dropped_origins = false;
        inner.by_experiment.retain(|id, k| {
            let keep = live.contains_key(id) || k.noted >= started;
            dropped_origins |= !keep && k.origins.is_some();
            keep
        });
        if changed || dropped_origins || before != inner.by_experiment.len() {
            rebuild(&mut inner);
        }
    }
}

/// Records one experiment's origins; says whether the set of origins may have changed.
fn note(inner: &mut Inner, id: i64, version: i64, origins: Option<Arc<[String]>>) -> bool {
    let noted = Instant::now();
    match inner.by_experiment.get_mut(&id) {
        Some(k) if k.version > version => false,
        Some(k) => {
            let changed = k.origins != origins;
            *k = Known {
                version,
                origins,
                noted,
            };
            changed
        }
        None => {
            let changed = origins.is_some();
            inner.by_experiment.insert(
                id,
                Known {
                    version,
                    origins,
                    noted,
                },
            );
            changed
        }
    }
}

fn rebuild(inner: &mut Inner) {
    inner.any = inner
        .by_experiment
        .values()
        .filter_map(|k| k.origins.as_deref())
        .flatten()
        .cloned()
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_accepted_only_as_browsers_send_them() {
        for good in [
            "https://search.example.com",
            "http://localhost:8080",
            "http://127.0.0.1:3000",
            "https://[::1]:8443",
            "https://xn--bcher-kva.example",
            "https://a-b.c0",
        ] {
            assert_eq!(check_origin(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "*",
            "null",
            "search.example.com",
            "ftp://example.com",
            "HTTPS://example.com",
            "https://Example.com",
            "https://example.com/",
            "https://example.com/path",
            "https://example.com?q",
            "https://example.com#f",
            "https://user@example.com",
            "https://example.com:443",
            "http://example.com:80",
            "https://example.com:0",
            "https://example.com:080",
            "https://example.com:65536",
            "https://example.com:",
            "https://",
            "https://:8080",
            "https://example..com",
            "https://example.com.",
            "https://bücher.example",
            "https://[::1",
            "https://[]",
            "https://[2]",
            "https://[0:0:0:0:0:0:0:1]",
            "https://[::A]",
            "https://exa mple.com",
        ] {
            assert!(check_origin(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn settings_are_bounded_and_without_repeats() {
        let with = |origins: &[&str]| BrowserClicks {
            origins: origins.iter().map(|s| s.to_string()).collect(),
        };
        assert!(
            with(&["https://a.example", "https://b.example"])
                .validate()
                .is_ok()
        );
        assert!(with(&[]).validate().is_err());
        assert!(
            with(&["https://a.example", "https://a.example"])
                .validate()
                .is_err()
        );
        let many: Vec<String> = (0..=MAX_ORIGINS)
            .map(|i| format!("https://s{i}.example"))
            .collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(with(&refs[..MAX_ORIGINS]).validate().is_ok());
        assert!(with(&refs).validate().is_err());
    }

    #[test]
    fn the_registry_follows_versions_and_deletions() {
        let r = OriginRegistry::default();
        let list = |o: &str| Some(Arc::<[String]>::from(vec![o.to_string()]));
        let started = Instant::now();
        r.note(1, 2, list("https://a.example"));
        assert!(r.contains("https://a.example"));
        // A poll that began before the experiment was created does not drop it...
        r.merge(started, &HashMap::new(), vec![]);
        assert!(r.contains("https://a.example"));
        // ...nor does an older version read by a poll overwrite it.
        let live = HashMap::from([(1, 2)]);
        r.merge(Instant::now(), &live, vec![(1, 1, None)]);
        assert!(r.contains("https://a.example"));
        assert!(r.stale(&live).is_empty());
        assert_eq!(r.stale(&HashMap::from([(1, 3), (2, 1)])).len(), 2);
        // Another replica turned it off (version 3).
        r.merge(Instant::now(), &HashMap::from([(1, 3)]), vec![(1, 3, None)]);
        assert!(!r.contains("https://a.example"));
        r.note(1, 4, list("https://b.example"));
        assert!(r.contains("https://b.example"));
        // Deleted elsewhere: gone from the live list of a later poll.
        std::thread::sleep(std::time::Duration::from_millis(2));
        r.merge(Instant::now(), &HashMap::new(), vec![]);
        assert!(!r.contains("https://b.example"));
    }
}
