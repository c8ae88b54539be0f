//! The HTTP client that posts webhook events: `http://` and `https://` receivers, TLS by rustls
//! with Mozilla's root certificates compiled in (so an image without a CA store still verifies
//! public receivers), plus the certificates of a private CA an operator trusts
//! (`--webhook-ca-file`): receivers inside a company often present a certificate of its own CA.
//! Certificates are always verified; there is no switch to turn verification off.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::egress::{Egress, PinningResolver};

/// Extra root certificates the delivery client trusts besides the public ones.
#[derive(Clone, Default)]
pub struct TrustedRoots {
    certificates: Vec<reqwest::Certificate>,
    /// Where they were read from, for the log.
    source: Option<String>,
}

impl std::fmt::Debug for TrustedRoots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrustedRoots")
            .field("certificates", &self.certificates.len())
            .field("source", &self.source)
            .finish()
    }
}

impl TrustedRoots {
    /// The certificates of a PEM file (one or more `BEGIN CERTIFICATE` blocks). A file that
    /// cannot be read or holds no certificate is an error: a typo in the path must stop the
    /// server at startup, not surface hours later as undelivered events.
    pub fn from_pem_file(path: &Path) -> Result<TrustedRoots, String> {
        let pem = std::fs::read(path)
            .map_err(|e| format!("cannot read the webhook CA file {}: {e}", path.display()))?;
        Self::from_pem(&pem).map(|mut roots| {
            roots.source = Some(path.display().to_string());
            roots
        })
    }

    /// The certificates of PEM text.
    pub fn from_pem(pem: &[u8]) -> Result<TrustedRoots, String> {
        let certificates = reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| format!("the webhook CA file is not PEM certificates: {e}"))?;
        if certificates.is_empty() {
            return Err("the webhook CA file holds no certificate (BEGIN CERTIFICATE)".into());
        }
        Ok(TrustedRoots {
            certificates,
            source: None,
        })
    }

    pub fn len(&self) -> usize {
        self.certificates.len()
    }

    pub fn is_empty(&self) -> bool {
        self.certificates.is_empty()
    }
}

/// The delivery client: each attempt limited to `attempt_timeout`, no redirect followed (a
/// redirect would re-send a signed event somewhere the experiment did not name), TLS verified
/// against the public roots and `roots`, host names resolved through `egress` (the client
/// connects only to addresses it allows; an address written in the URL is checked before the
/// request, see `delivery.rs`), and no proxy from the environment (a proxy would resolve the
/// name itself, after the check).
pub fn build(
    attempt_timeout: Duration,
    roots: &TrustedRoots,
    egress: &Egress,
) -> reqwest::Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(true)
        .timeout(attempt_timeout)
        .user_agent(concat!("joust-webhooks/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(Arc::new(PinningResolver(egress.clone())));
    for c in &roots.certificates {
        builder = builder.add_root_certificate(c.clone());
    }
    if let Some(source) = &roots.source {
        tracing::info!(certificates = roots.len(), file = %source, "webhook deliveries trust a private CA");
    }
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_certificates_is_refused() {
        assert!(TrustedRoots::from_pem(b"").is_err());
        assert!(TrustedRoots::from_pem(b"not a certificate").is_err());
        let dir = std::env::temp_dir().join("joust-no-such-ca-file.pem");
        let err = TrustedRoots::from_pem_file(&dir).unwrap_err();
        assert!(err.contains("cannot read"), "{err}");
    }

    #[test]
    fn the_client_builds_with_and_without_extra_roots() {
        assert!(
            build(
                Duration::from_secs(1),
                &TrustedRoots::default(),
                &Egress::default()
            )
            .is_ok()
        );
    }
}
