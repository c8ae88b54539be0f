//! Webhooks over HTTPS: a receiver started here serves a certificate issued by a private CA made
//! here. A server that trusts the CA (`--webhook-ca-file`, here its engine option) delivers a
//! signed `decided` event to it; a server that does not keeps the event pending and retries it,
//! with the TLS error recorded, and the receiver never gets a request.

use crate::decisions::{
    Received, SECRET, fast_webhooks, issue_early, report_all, two_rankers_with_webhook,
    verify_signature,
};
use crate::helpers::eventually::eventually;
use crate::helpers::{http_server, postgres};
use axum::http::HeaderMap;
use hyper_util::rt::TokioIo;
use joust::engine::TrustedRoots;
use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_rustls::rustls;

/// A private CA and a receiver certificate for 127.0.0.1 issued by it.
struct Pki {
    ca_pem: String,
    leaf_der: rustls::pki_types::CertificateDer<'static>,
    leaf_key_der: Vec<u8>,
}

fn private_ca() -> Pki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "joust test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &ca, &ca_key)
        .unwrap();
    Pki {
        ca_pem: ca.pem(),
        leaf_der: leaf.der().clone(),
        leaf_key_der: leaf_key.serialize_der(),
    }
}

/// An HTTPS receiver on a free local port that answers 200 to every POST and records it, and
/// counts the TLS handshakes that failed.
#[derive(Clone, Default)]
struct TlsReceiver {
    got: Arc<Mutex<Vec<Received>>>,
    failed_handshakes: Arc<Mutex<usize>>,
}

impl TlsReceiver {
    async fn start(pki: &Pki) -> (TlsReceiver, String) {
        let r = TlsReceiver::default();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![pki.leaf_der.clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(pki.leaf_key_der.clone().into()),
            )
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let state = r.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: String| {
                let state = state.clone();
                async move {
                    state
                        .got
                        .lock()
                        .unwrap()
                        .push(Received::of(&headers, body, 200));
                    axum::http::StatusCode::OK
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("https://{}/hook", listener.local_addr().unwrap());
        let state = r.clone();
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let (acceptor, app, state) = (acceptor.clone(), app.clone(), state.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        *state.failed_handshakes.lock().unwrap() += 1;
                        return;
                    };
                    let service = hyper_util::service::TowerToHyperService::new(app);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        (r, url)
    }

    fn got(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    fn failed_handshakes(&self) -> usize {
        *self.failed_handshakes.lock().unwrap()
    }
}

/// Decides ranker `a` of a two-ranker experiment with a webhook to `url` (150 wins of 150: the
/// bound at delta 0.05 separates all-wins after about 100 comparisons).
async fn decide_a(app: &http_server::TestApp, url: &str) -> i64 {
    let id = two_rankers_with_webhook(app, url, serde_json::Value::Null).await;
    let tokens = issue_early(app, id, 600).await;
    assert!(tokens.len() >= 150, "{} distinct duels", tokens.len());
    report_all(app, id, &tokens[..150], "a").await;
    let e = app.experiment(id).await;
    assert_eq!(e["decision"]["decided"], true, "{e}");
    id
}

#[tokio::test]
async fn a_trusted_private_ca_gets_the_signed_decided_event_over_https() {
    let pki = private_ca();
    let (receiver, url) = TlsReceiver::start(&pki).await;
    let db = postgres::fresh_database().await;
    let options = joust::engine::EngineOptions {
        webhook_roots: TrustedRoots::from_pem(pki.ca_pem.as_bytes()).unwrap(),
        ..fast_webhooks()
    };
    let app = http_server::spawn_app_with(&db, "", options).await;
    let id = decide_a(&app, &url).await;
    eventually("the decided event", Duration::from_secs(10), || {
        let n = receiver.got().len();
        async move { n >= 1 }
    })
    .await;
    let got = receiver.got();
    assert_eq!(got[0].event, "decided", "{got:?}");
    verify_signature(&got[0], SECRET);
    let body: serde_json::Value = serde_json::from_str(&got[0].body).unwrap();
    assert_eq!(body["experiment_id"], id, "{body}");
    assert_eq!(body["champion"], "a", "{body}");
    assert_eq!(body["decided"], true, "{body}");
    assert_eq!(receiver.failed_handshakes(), 0);
    app.stop().await;
}

#[tokio::test]
async fn an_untrusted_certificate_is_retried_and_never_delivered() {
    let pki = private_ca();
    let (receiver, url) = TlsReceiver::start(&pki).await;
    let db = postgres::fresh_database().await;
    // Only the public roots: the receiver's CA is unknown.
    let app = http_server::spawn_app_with(&db, "", fast_webhooks()).await;
    let id = decide_a(&app, &url).await;
    let pool = sqlx::PgPool::connect(&db).await.unwrap();
    let row = || {
        let pool = pool.clone();
        async move {
            let r: (i32, bool, Option<String>) = sqlx::query_as(
                "SELECT attempts, delivered_at IS NOT NULL, last_error FROM webhook_deliveries
                 WHERE experiment_id = $1 AND event = 'decided'",
            )
            .bind(id)
            .fetch_one(&pool)
            .await
            .unwrap();
            r
        }
    };
    eventually("three failed attempts", Duration::from_secs(10), || {
        let row = row();
        async move { row.await.0 >= 3 }
    })
    .await;
    let (_, delivered, error) = row().await;
    assert!(!delivered);
    let error = error.unwrap_or_default();
    assert!(error.to_lowercase().contains("certificate"), "{error}");
    // The receiver's side of a refused handshake may end just after the attempt is recorded.
    eventually("three refused handshakes", Duration::from_secs(10), || {
        let n = receiver.failed_handshakes();
        async move { n >= 3 }
    })
    .await;
    assert!(receiver.got().is_empty(), "{:?}", receiver.got());
    app.stop().await;
}
