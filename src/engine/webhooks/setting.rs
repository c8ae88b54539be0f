//! `"webhook": {"url": ..., "secret": ...}` of an experiment. The secret keys the events'
//! signatures; it is write-only: stored, never sent back.

use super::egress::{Egress, Refused, SETTING_LOOKUP_TIMEOUT};
use crate::api::{ErrorCode, Webhook};
use crate::engine::EngineError;

/// Longest URL accepted, in bytes.
pub const MAX_URL_LEN: usize = 2000;
/// Shortest secret: 16 bytes leave a guessing attacker nothing to gain (32 random bytes, hex
/// encoded, is what the docs suggest).
pub const MIN_SECRET_LEN: usize = 16;
/// Longest secret, in bytes.
pub const MAX_SECRET_LEN: usize = 256;

/// The secret never reaches a log.
impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhook")
            .field("url", &self.url)
            .field("secret", &"<redacted>")
            .finish()
    }
}

impl Webhook {
    /// Checks the URL ([`check_url`]) and the secret's length and characters.
    pub fn validate(&self, egress: &Egress) -> Result<(), EngineError> {
        check_url(&self.url, egress).map_err(|why| {
            invalid(format!(
                "webhook.url {:?} is not a URL events can be posted to: {why}",
                self.url
            ))
        })?;
        let n = self.secret.len();
        if !(MIN_SECRET_LEN..=MAX_SECRET_LEN).contains(&n) {
            return Err(invalid(format!(
                "webhook.secret must be {MIN_SECRET_LEN} to {MAX_SECRET_LEN} bytes, got {n}"
            )));
        }
        if self.secret.chars().any(|c| c.is_control()) {
            return Err(invalid(
                "webhook.secret must not contain control characters".into(),
            ));
        }
        Ok(())
    }

    /// Resolves the URL's host name (after [`Webhook::validate`]) and refuses it when it
    /// resolves to an address events may not be posted to, so that a URL such as
    /// `http://localhost/` is refused when it is set, not only when an event is posted. A name
    /// that does not resolve (yet) is accepted: deliveries resolve it again for every
    /// connection, and are refused then if it points inside.
    pub async fn check_resolved(&self, egress: &Egress) -> Result<(), EngineError> {
        let Some(host) = reqwest::Url::parse(&self.url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
        else {
            return Ok(());
        };
        match tokio::time::timeout(SETTING_LOOKUP_TIMEOUT, egress.resolve(&host)).await {
            Ok(Err(refused @ (Refused::Name { .. } | Refused::Address { .. }))) => {
                Err(invalid(format!(
                    "webhook.url {:?} is not a URL events can be posted to: {refused}",
                    self.url
                )))
            }
            _ => Ok(()),
        }
    }
}

fn invalid(message: String) -> EngineError {
    EngineError::invalid(ErrorCode::InvalidWebhook, message)
}

/// Whether `url` is an absolute `http://` or `https://` URL with a host that the delivery client
/// can post to; says why not. An `https` receiver's certificate is verified when events are
/// posted (public roots, plus the private CAs of `--webhook-ca-file`), not here: a certificate
/// the server does not trust makes attempts fail and be retried, as an unreachable receiver does.
/// An address written in the URL, in any form the URL standard reads as an address (`2130706433`,
/// `0177.0.0.1`, `0x7f.1`, `[::ffff:127.0.0.1]`), must be one `egress` allows; a name is checked
/// when it is resolved ([`Webhook::check_resolved`] and every delivery).
pub fn check_url(url: &str, egress: &Egress) -> Result<(), String> {
    if url.len() > MAX_URL_LEN {
        return Err("too long".into());
    }
    let parsed = reqwest::Url::parse(url).map_err(|_| "not an absolute URL")?;
    match parsed.scheme() {
        "http" | "https" => {}
        _ => return Err("the scheme must be http or https".into()),
    }
    let Some(host) = parsed
        .host()
        .filter(|h| !matches!(h, url::Host::Domain("")))
    else {
        return Err("no host".into());
    };
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(
            "credentials in the URL would be logged; authenticate with the signature".into(),
        );
    }
    if parsed.fragment().is_some() {
        return Err("a fragment is never sent to a server".into());
    }
    egress.check_literal(host).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let public = Egress::default();
        let check = |url: &str| check_url(url, &public);
        assert!(check("http://hooks.internal:8080/joust?team=search").is_ok());
        assert!(check("https://hooks.example.com/").is_ok());
        assert!(check("https://8.8.8.8:8443/joust").is_ok());
        assert!(check("http://[2606:4700:4700::1111]/").is_ok());
        assert!(check("ftp://hooks.example.com/").is_err());
        assert!(check("/relative").is_err());
        assert!(check("http://user:pw@hooks.internal/").is_err());
        assert!(check("http://hooks.internal/#x").is_err());
        assert!(check(&format!("http://h/{}", "a".repeat(MAX_URL_LEN))).is_err());
    }

    /// Every way of writing a non-public address in a URL is read as that address and refused,
    /// with the reason; an operator's allowed network lets it through.
    #[test]
    fn addresses_in_every_form_are_refused_unless_allowed() {
        let public = Egress::default();
        for (url, why) in [
            ("http://127.0.0.1:9000/", "127.0.0.1 is loopback"),
            ("http://2130706433/x", "127.0.0.1 is loopback"),
            ("http://0177.0.0.1/", "127.0.0.1 is loopback"),
            ("http://0x7f.0.0.1/", "127.0.0.1 is loopback"),
            ("http://0x7f000001/", "127.0.0.1 is loopback"),
            ("http://127.1/", "127.0.0.1 is loopback"),
            ("http://[::1]:8080/", "::1 is loopback"),
            ("http://[::ffff:127.0.0.1]/", "IPv4-mapped"),
            ("http://[::ffff:7f00:1]/", "IPv4-mapped"),
            ("http://[::127.0.0.1]/", "IPv4-compatible"),
            ("http://0.0.0.0/", "0.0.0.0 is unspecified"),
            ("http://0/", "0.0.0.0 is unspecified"),
            ("http://[::]/", ":: is unspecified"),
            ("https://10.0.0.7:8443/joust", "private"),
            ("http://169.254.169.254/latest/meta-data/iam", "link-local"),
            ("http://2852039166/", "169.254.169.254 is link-local"),
            ("http://100.64.1.1/", "shared address space"),
            ("http://198.18.0.1/", "benchmarking"),
            ("http://192.0.2.1/", "documentation"),
            ("http://[fd00::1]/", "unique-local"),
            ("http://[fe80::1]/", "link-local"),
            ("http://224.0.0.1/", "multicast"),
        ] {
            let err = check_url(url, &public).unwrap_err();
            assert!(err.contains(why), "{url}: {err}");
            assert!(err.contains("--webhook-allow-networks"), "{url}: {err}");
        }
        let allowing = Egress::allowing(Egress::parse_networks("127.0.0.0/8,10.0.0.0/8").unwrap());
        assert!(check_url("http://127.0.0.1:9000/", &allowing).is_ok());
        assert!(check_url("http://2130706433/", &allowing).is_ok());
        assert!(check_url("http://[::ffff:127.0.0.1]/", &allowing).is_ok());
        assert!(check_url("https://10.0.0.7:8443/joust", &allowing).is_ok());
        assert!(check_url("http://169.254.169.254/", &allowing).is_err());
    }

    #[test]
    fn secrets() {
        let hook = |secret: &str| Webhook {
            url: "http://h/".into(),
            secret: secret.into(),
        };
        let e = Egress::default();
        assert!(hook("0123456789abcdef").validate(&e).is_ok());
        assert!(hook("short").validate(&e).is_err());
        assert!(hook("0123456789abcdef\n").validate(&e).is_err());
    }
}
