//! Clicks from the browser: an experiment may list web origins whose pages post its clicks with no
//! API key, the signed interleaving token being the capability (see docs/interleaving.md,
//! "Clicks from the browser"). Here: the setting's validation. Every replica's set of the
//! origins some live experiment lists is `runtime::origins`.

use std::collections::HashSet;

use crate::api::{BrowserClicks, ErrorCode};
use crate::engine::EngineError;

/// Most origins one experiment may list.
pub const MAX_ORIGINS: usize = 32;
/// Longest origin accepted, in bytes (a host name is at most 253).
pub const MAX_ORIGIN_LEN: usize = 300;

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
}
