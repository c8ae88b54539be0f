//! Slow, idle and too many connections: each is closed or held back so that a normal client keeps
//! being served quickly. The server runs as a real process (`joust serve`) with a short header
//! timeout, so that the tests take seconds.

use crate::helpers::postgres;
use crate::helpers::process::{Server, free_port, serve_command};
use std::io::ErrorKind;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The header timeout the servers here run with.
const HEADER_TIMEOUT: Duration = Duration::from_secs(1);

async fn server_with(command: std::process::Command, port: u16) -> Server {
    let s = Server::spawn(command, port);
    s.wait_ready(&reqwest::Client::new()).await;
    s
}

async fn server(extra: &[&str]) -> Server {
    let db = postgres::fresh_database().await;
    let mut args = vec!["--database-url", &db, "--header-timeout-secs", "1"];
    args.extend_from_slice(extra);
    let port = free_port();
    server_with(serve_command(port, &args), port).await
}

/// Waits until the peer closes (EOF or reset); returns how long that took, or `None` if it was
/// still open after `limit`.
async fn time_to_close(stream: &mut (impl AsyncRead + Unpin), limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        let left = limit.checked_sub(start.elapsed())?;
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0)) => return Some(start.elapsed()),
            // A response (to a request, or a 408): the close comes next.
            Ok(Ok(_)) => {}
            Ok(Err(e)) if e.kind() == ErrorKind::ConnectionReset => {
                return Some(start.elapsed());
            }
            Ok(Err(e)) => panic!("read: {e}"),
        }
    }
}

#[tokio::test]
async fn headers_sent_a_line_at_a_time_are_cut_off_at_the_header_timeout() {
    let s = server(&[]).await;
    let stream = TcpStream::connect(("127.0.0.1", s.port)).await.unwrap();
    let (mut read, mut write) = stream.into_split();
    // A header line every 300 ms, never the blank line that ends the headers.
    let trickle = tokio::spawn(async move {
        write.write_all(b"GET /healthz HTTP/1.1\r\n").await?;
        for i in 0.. {
            write
                .write_all(format!("x-slow-{i}: 1\r\n").as_bytes())
                .await?;
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        Ok::<(), std::io::Error>(())
    });
    let closed = time_to_close(&mut read, 5 * HEADER_TIMEOUT)
        .await
        .expect("a connection that never finished its headers was kept open");
    assert!(closed >= HEADER_TIMEOUT / 2, "closed too early: {closed:?}");
    trickle.abort();
}

#[tokio::test]
async fn idle_keep_alive_connections_are_closed() {
    let s = server(&[]).await;
    let mut stream = TcpStream::connect(("127.0.0.1", s.port)).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 1024];
    let n = stream.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"), "{:?}", &buf[..n]);
    // The connection is kept alive for the next request, but not for ever.
    time_to_close(&mut stream, 5 * HEADER_TIMEOUT)
        .await
        .expect("an idle keep-alive connection was kept open");
}

/// A normal client's request latencies (ms) to `/healthz`, `n` requests one after another.
async fn latencies(base: &str, n: usize) -> Vec<f64> {
    let client = reqwest::Client::new();
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        let r = client.get(format!("{base}/healthz")).send().await.unwrap();
        assert_eq!(r.status(), 200);
        r.bytes().await.unwrap();
        out.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    out
}

fn p99(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[(v.len() * 99).div_ceil(100) - 1]
}

/// Opens `n` connections that send nothing, or (`slow`) a request line and then nothing.
async fn flood(port: u16, n: usize, slow: bool) -> Vec<TcpStream> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let connect = TcpStream::connect(("127.0.0.1", port));
        // Beyond the server's queue the kernel drops the attempt: that one is simply not opened.
        if let Ok(Ok(mut s)) = tokio::time::timeout(Duration::from_millis(200), connect).await {
            if slow {
                let _ = s.write_all(b"POST /v1/outcomes HTTP/1.1\r\n").await;
            }
            out.push(s);
        }
    }
    out
}

/// 400 idle and 100 slow connections held open while a normal client sends 200 requests: every
/// one is served while the flood is still open (the idle ones would time out after 10 s, so the
/// deadline below, well inside that, is a hang detector, not a latency target; the latency is
/// printed, and measured by `benches/bench-http`, not asserted on a shared machine).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_idle_and_slow_connections_leaves_normal_clients_served() {
    let s = server(&["--max-connections", "1000"]).await;
    let _idle = flood(s.port, 400, false).await;
    let _slow = flood(s.port, 100, true).await;
    let served = tokio::time::timeout(Duration::from_secs(8), latencies(&s.base, 200))
        .await
        .expect("the normal client's 200 requests were all served while the flood was open");
    assert_eq!(served.len(), 200);
    println!("normal client p99 during the flood: {:.1} ms", p99(served));
}

/// With fewer open files allowed than a flood of idle connections needs, the server keeps its
/// connection cap under the limit: the flood never makes `accept` fail for want of files, and a
/// normal client is served as soon as the idle connections time out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_idle_connections_than_open_files_do_not_stall_the_server() {
    const FILES: u64 = 512;
    let db = postgres::fresh_database().await;
    let port = free_port();
    let mut command = serve_command(port, &["--database-url", &db, "--header-timeout-secs", "1"]);
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe and touches only the child being started.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: FILES,
                rlim_max: FILES,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let s = server_with(command, port).await;
    let _idle = flood(s.port, FILES as usize + 100, false).await;
    let start = Instant::now();
    let r = tokio::time::timeout(
        Duration::from_secs(10),
        reqwest::get(format!("{}/healthz", s.base)),
    )
    .await
    .expect("the server stopped answering once its files ran out")
    .unwrap();
    assert_eq!(r.status(), 200);
    let waited = start.elapsed();
    println!(
        "a normal request behind {} idle connections waited {waited:?}",
        FILES + 100
    );
    // The cap is FILES - 256 (files kept for the database and logs) = 256 connections: the flood
    // of 612 passes in three rounds of one header timeout each, the normal request in the last.
    assert!(
        waited < 5 * HEADER_TIMEOUT,
        "a normal request waited {waited:?} behind idle connections"
    );
}

/// A request whose headers came in time but whose body trickles in (a byte every 200 ms of a
/// declared 100,000): the first connection of every slot is one. With `--body-timeout-secs 1`
/// each gets 408 `request_timeout` in the JSON error shape about a second after its headers and
/// is closed, and a normal request waiting behind them for a slot is served soon after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_sent_a_byte_at_a_time_are_answered_408_at_the_body_timeout() {
    const BODY_TIMEOUT: Duration = Duration::from_secs(1);
    const SLOW: usize = 3;
    let s = server(&["--body-timeout-secs", "1", "--max-connections", "3"]).await;
    let start = Instant::now();
    let mut slow = Vec::new();
    for _ in 0..SLOW {
        let stream = TcpStream::connect(("127.0.0.1", s.port)).await.unwrap();
        let (mut read, mut write) = stream.into_split();
        let trickle = tokio::spawn(async move {
            write
                .write_all(
                    b"POST /v1/outcomes HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
                      content-length: 100000\r\n\r\n",
                )
                .await?;
            for _ in 0..100_000 {
                write.write_all(b" ").await?;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Ok::<(), std::io::Error>(())
        });
        let answer = tokio::spawn(async move {
            let mut answer = Vec::new();
            let closed = tokio::time::timeout(5 * BODY_TIMEOUT, async {
                let mut buf = [0u8; 4096];
                loop {
                    match read.read(&mut buf).await {
                        Ok(0) => return,
                        Ok(n) => answer.extend_from_slice(&buf[..n]),
                        Err(e) if e.kind() == ErrorKind::ConnectionReset => return,
                        Err(e) => panic!("read: {e}"),
                    }
                }
            })
            .await;
            (closed.is_ok(), answer)
        });
        slow.push((trickle, answer));
    }
    // Every slot is taken: this waits in the kernel's queue until a slow body is cut off.
    let healthz = tokio::time::timeout(
        5 * BODY_TIMEOUT,
        reqwest::get(format!("{}/healthz", s.base)),
    )
    .await
    .expect("a normal request waited behind slow bodies past the body timeout")
    .unwrap();
    assert_eq!(healthz.status(), 200);
    println!("/healthz behind {SLOW} slow bodies: {:?}", start.elapsed());
    for (trickle, answer) in slow {
        let (closed, answer) = answer.await.unwrap();
        trickle.abort();
        let text = String::from_utf8_lossy(&answer).to_string();
        assert!(closed, "a slow body's connection was kept open: {text:?}");
        assert!(text.starts_with("HTTP/1.1 408"), "{text:?}");
        assert!(
            text.to_ascii_lowercase().contains("connection: close"),
            "{text:?}"
        );
        let body = &text[text.find("\r\n\r\n").expect("a complete answer") + 4..];
        let body: serde_json::Value = serde_json::from_str(body).expect("a JSON body");
        assert_eq!(body["error"]["code"], "request_timeout", "{body}");
    }
    let elapsed = start.elapsed();
    assert!(elapsed >= BODY_TIMEOUT, "cut off too early: {elapsed:?}");
}
