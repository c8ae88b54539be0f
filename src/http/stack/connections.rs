//! The connection loop: accepts TCP connections and serves HTTP/1.1 on them, with the limits that
//! keep slow or idle clients from holding the server (`axum::serve` has none of them):
//!
//! - a **header timeout**: a request's headers must arrive whole within it, counted from when the
//!   connection is ready for a request. That closes connections that trickle their headers in, and
//!   also keep-alive connections left idle that long (hyper starts the same timer when it waits
//!   for the next request), so one setting bounds both;
//! - a **body timeout**: a request's body must arrive whole within it, counted from the end of its
//!   headers (when the request reaches the router). Every body is read by the JSON extractor
//!   (`http::stack::json::Json`), which answers 408 `request_timeout` at the deadline
//!   ([`BodyDeadline`]); the connection is then closed, since the rest of the body was never read.
//!   Without it a client trickling a body a byte at a time would hold its connection (and a slot
//!   under the cap) for as long as it liked;
//! - a **cap on open connections**, below the process's open-file limit: at the cap, joust stops
//!   accepting (new connections wait in the kernel's queue) until one closes, instead of failing
//!   `accept` with "too many open files" in a loop while its own database connections and files
//!   starve.
//!
//! With TLS ([`super::tls`]), each connection's handshake runs in its own task and must finish
//! within the header timeout, so a client that stalls its handshake holds a slot no longer than
//! one that stalls its headers.
//!
//! On shutdown every connection finishes its request in flight and closes.

use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

/// Limits on the connections of one server.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Time allowed for a request's headers, and for a keep-alive connection to stay idle.
    pub header_timeout: Duration,
    /// Time allowed for a request's body, counted from the end of its headers.
    pub body_timeout: Duration,
    /// Open connections at most.
    pub max_connections: usize,
}

/// When a request's body must have arrived whole: a request extension set as the request reaches
/// the router, read by whatever reads the body.
#[derive(Debug, Clone, Copy)]
pub struct BodyDeadline(pub tokio::time::Instant);

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// The cap when none is configured and the file limit allows it (see `serve::connection_cap`).
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;

/// Serves `app` on `listener` (over TLS when `tls` is given) until `shutdown` resolves, then lets
/// each connection finish its request in flight and waits for all of them to close.
pub async fn serve_connections<S, B>(
    listener: TcpListener,
    app: S,
    limits: ConnectionLimits,
    tls: Option<TlsAcceptor>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    S: tower::Service<
            axum::extract::Request,
            Response = axum::http::Response<B>,
            Error = std::convert::Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + 'static,
    B: hyper::body::Body<Data = axum::body::Bytes, Error: Into<tower::BoxError>> + Send + 'static,
{
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let (closing, closing_rx) = watch::channel(false);
    tokio::pin!(shutdown);
    let mut at_cap_logged = false;
    loop {
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => {
                at_cap_logged = false;
                slot
            }
            Err(_) => {
                if !at_cap_logged {
                    at_cap_logged = true;
                    tracing::warn!(
                        max_connections = limits.max_connections,
                        "connection cap reached: new connections wait until one closes"
                    );
                }
                metrics::counter!("joust_connection_cap_reached_total").increment(1);
                tokio::select! {
                    slot = slots.clone().acquire_owned() => slot.expect("never closed"),
                    _ = &mut shutdown => break,
                }
            }
        };
        let (stream, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) if is_connection_error(&e) => continue,
                Err(e) => {
                    // Out of file descriptors or memory: pause instead of spinning on the error.
                    tracing::error!(error = %e, "accept error");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let body_timeout = limits.body_timeout;
        let service = TowerToHyperService::new(app.clone().map_request(
            move |req: axum::http::Request<Incoming>| {
                let mut req = req.map(axum::body::Body::new);
                req.extensions_mut()
                    .insert(BodyDeadline(tokio::time::Instant::now() + body_timeout));
                req
            },
        ));
        let closing = closing_rx.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                None => serve_one(stream, service, limits, closing).await,
                Some(acceptor) => {
                    let handshake = acceptor.accept(stream);
                    // A failed or stalled handshake is the client's problem, not the server's.
                    if let Ok(Ok(stream)) =
                        tokio::time::timeout(limits.header_timeout, handshake).await
                    {
                        serve_one(stream, service, limits, closing).await;
                    }
                }
            }
            drop(slot);
        });
    }
    drop(listener);
    let _ = closing.send(true);
    // Every connection holds a slot until it closes.
    let _ = slots.acquire_many(limits.max_connections as u32).await;
    Ok(())
}

/// Serves HTTP/1.1 on one connection until it closes, or until `closing` asks it to finish its
/// request in flight.
async fn serve_one<I, S>(
    stream: I,
    service: S,
    limits: ConnectionLimits,
    mut closing: watch::Receiver<bool>,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    S: hyper::service::HttpService<Incoming> + Send + 'static,
    S::Future: Send + 'static,
    S::ResBody: Send + 'static,
    <S::ResBody as hyper::body::Body>::Data: Send,
    <S::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = closing.changed() => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}

fn is_connection_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}
