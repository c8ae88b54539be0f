//! `"webhook": {"url": ..., "secret": ...}` of an experiment. The secret keys the events'
//! signatures; it is write-only: stored, never sent back.

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
    pub fn validate(&self) -> Result<(), EngineError> {
        check_url(&self.url).map_err(|why| {
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
}

fn invalid(message: String) -> EngineError {
    EngineError::invalid(ErrorCode::InvalidWebhook, message)
}

/// Whether `url` is an absolute `http://` or `https://` URL with a host that the delivery client
/// can post to; says why not. An `https` receiver's certificate is verified when events are
/// posted (public roots, plus the private CAs of `--webhook-ca-file`), not here: a certificate
/// the server does not trust makes attempts fail and be retried, as an unreachable receiver does.
pub fn check_url(url: &str) -> Result<(), &'static str> {
    if url.len() > MAX_URL_LEN {
        return Err("too long");
    }
    let parsed = reqwest::Url::parse(url).map_err(|_| "not an absolute URL")?;
    match parsed.scheme() {
        "http" | "https" => {}
        _ => return Err("the scheme must be http or https"),
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err("no host");
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("credentials in the URL would be logged; authenticate with the signature");
    }
    if parsed.fragment().is_some() {
        return Err("a fragment is never sent to a server");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert!(check_url("http://hooks.internal:8080/joust?team=search").is_ok());
        assert!(check_url("http://127.0.0.1:9000/").is_ok());
        assert!(check_url("https://hooks.example.com/").is_ok());
        assert!(check_url("https://10.0.0.7:8443/joust").is_ok());
        assert!(check_url("ftp://hooks.example.com/").is_err());
        assert!(check_url("/relative").is_err());
        assert!(check_url("http://user:pw@hooks.internal/").is_err());
        assert!(check_url("http://hooks.internal/#x").is_err());
        assert!(check_url(&format!("http://h/{}", "a".repeat(MAX_URL_LEN))).is_err());
    }

    #[test]
    fn secrets() {
        let hook = |secret: &str| Webhook {
            url: "http://h/".into(),
            secret: secret.into(),
        };
        assert!(hook("0123456789abcdef").validate().is_ok());
        assert!(hook("short").validate().is_err());
        assert!(hook("0123456789abcdef\n").validate().is_err());
    }
}
