//! HTTPS serving: the server's certificate chain and key, read from two PEM files and read again
//! whenever either file changes, so a renewed certificate (certbot, cert-manager, a mounted
//! secret) is served to the next connection without a restart.
//!
//! The files are polled (their modification time, size and inode, every [`POLL_INTERVAL`])
//! rather than watched: a poll sees a file replaced by rename, a symlink swapped by Kubernetes
//! and a file edited in place alike, and needs no extra dependency. A pair that does not load
//! (a key that does not match the certificate, a file half written) is logged and the pair in
//! service is kept; the next change is tried again. Connections already open keep the
//! certificate they were handshaken with.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::crypto::CryptoProvider;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_rustls::rustls::{self, ServerConfig};

/// How often the certificate and key files are checked for a change.
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The certificate and key files of an HTTPS server, and the pair loaded from them.
#[derive(Clone)]
pub struct ServerTls {
    files: CertFiles,
    resolver: Arc<CurrentCert>,
    config: Arc<ServerConfig>,
}

#[derive(Debug, Clone)]
struct CertFiles {
    cert: PathBuf,
    key: PathBuf,
}

/// The pair served to new connections.
#[derive(Debug)]
struct CurrentCert(RwLock<Arc<CertifiedKey>>);

impl ResolvesServerCert for CurrentCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(&self.0.read().expect("never poisoned")))
    }
}

/// What identifies a file's version without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    inode: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    // `metadata` follows symlinks: a swapped link target is a new version.
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp {
        modified: meta.modified().ok(),
        len: meta.len(),
        inode: meta.ino(),
    })
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl CertFiles {
    fn stamps(&self) -> (Option<Stamp>, Option<Stamp>) {
        (stamp(&self.cert), stamp(&self.key))
    }

    /// The chain and key, checked to belong together.
    fn load(&self) -> Result<CertifiedKey, String> {
        let chain = CertificateDer::pem_file_iter(&self.cert)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("reading the certificate {}: {e}", self.cert.display()))?;
        if chain.is_empty() {
            return Err(format!(
                "the certificate file {} holds no certificate",
                self.cert.display()
            ));
        }
        let key = PrivateKeyDer::from_pem_file(&self.key)
            .map_err(|e| format!("reading the private key {}: {e}", self.key.display()))?;
        CertifiedKey::from_der(chain, key, &provider()).map_err(|e| {
            format!(
                "the key {} does not fit the certificate {}: {e}",
                self.key.display(),
                self.cert.display()
            )
        })
    }
}

impl ServerTls {
    /// Loads the pair once; an error names the file and what is wrong with it.
    pub fn load(cert: &Path, key: &Path) -> Result<ServerTls, String> {
        let files = CertFiles {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
        };
        let resolver = Arc::new(CurrentCert(RwLock::new(Arc::new(files.load()?))));
        let mut config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_no_client_auth()
            .with_cert_resolver(Arc::clone(&resolver) as Arc<dyn ResolvesServerCert>);
        // The connection loop speaks HTTP/1.1 only.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(ServerTls {
            files,
            resolver,
            config: Arc::new(config),
        })
    }

    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(Arc::clone(&self.config))
    }

    /// Polls the files every `interval` and serves a changed pair once it loads, until the
    /// returned task is aborted.
    pub fn spawn_reload(&self, interval: Duration) -> tokio::task::JoinHandle<()> {
        let files = self.files.clone();
        let resolver = Arc::clone(&self.resolver);
        tokio::spawn(async move {
            let mut served = files.stamps();
            let mut last_error: Option<String> = None;
            loop {
                tokio::time::sleep(interval).await;
                let now = files.stamps();
                if now == served {
                    continue;
                }
                match files.load() {
                    Ok(pair) => {
                        *resolver.0.write().expect("never poisoned") = Arc::new(pair);
                        served = now;
                        last_error = None;
                        tracing::info!(cert = %files.cert.display(), "reloaded the TLS certificate");
                    }
                    // Tried again at the next poll (the other file of a pair may still be on its
                    // way); said once per distinct error.
                    Err(e) => {
                        if last_error.as_ref() != Some(&e) {
                            tracing::warn!(error = %e, "the changed TLS certificate was not loaded; still serving the previous one");
                            last_error = Some(e);
                        }
                    }
                }
            }
        })
    }
}
