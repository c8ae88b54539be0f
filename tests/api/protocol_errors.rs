//! Requests that are not HTTP/1.1 as hyper parses it. hyper answers those itself, before any of
//! joust's code runs, with a status and **no body**: hyper 1.x writes only the head for a parse
//! error and offers no hook to give it one (`proto::h1::role::Server::on_error`). This test pins
//! down what a client gets in each case (docs/api.md, "Errors", says the same), so that a hyper
//! upgrade that changes it is noticed; and that a malformed body, which joust reads itself, gets
//! the JSON error shape.

use crate::helpers::http_server;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends `request` on a fresh connection and reads the answer until the server closes it:
/// the status, the head (lowercased) and the body.
async fn raw(base: &str, request: &[u8]) -> (u16, String, String) {
    let addr = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
                Err(e) => panic!("read: {e}"),
            }
        }
    })
    .await
    .expect("the server answered and closed the connection");
    let text = String::from_utf8_lossy(&answer).to_string();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("{text:?}"));
    let status = head
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("{text:?}"));
    (status, head.to_ascii_lowercase(), body.to_string())
}

#[tokio::test]
async fn what_hyper_refuses_is_answered_without_a_body_and_the_rest_with_json() {
    let app = http_server::spawn_app().await;
    let many_headers: String = (0..2000).map(|i| format!("x-h{i}: 1\r\n")).collect();
    let hyper_answers: [(&str, Vec<u8>, u16); 5] = [
        (
            "a garbage request line",
            b"this is not http\r\n\r\n".to_vec(),
            400,
        ),
        (
            "HTTP/7.0",
            b"GET /healthz HTTP/7.0\r\nhost: x\r\n\r\n".to_vec(),
            400,
        ),
        (
            "Content-Length: -1",
            b"POST /v1/outcomes HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
              content-length: -1\r\n\r\n"
                .to_vec(),
            400,
        ),
        (
            "a control byte in a header",
            b"GET /healthz HTTP/1.1\r\nhost: x\r\nx-bad: a\x01b\r\n\r\n".to_vec(),
            400,
        ),
        (
            "2,000 headers",
            format!("GET /healthz HTTP/1.1\r\nhost: x\r\n{many_headers}\r\n").into_bytes(),
            431,
        ),
    ];
    for (case, request, expected) in hyper_answers {
        let (status, head, body) = raw(&app.base, &request).await;
        assert_eq!(status, expected, "{case}: {body:?}");
        assert_eq!(body, "", "{case}: hyper's answer has no body");
        assert!(head.contains("content-length: 0"), "{case}: {head:?}");
        assert!(
            !head.contains("x-request-id"),
            "{case}: joust never saw it: {head:?}"
        );
    }

    // A head hyper accepts with a body that breaks off (a malformed chunk) reaches joust, which
    // answers in the JSON error shape.
    let (status, head, body) = raw(
        &app.base,
        b"POST /v1/outcomes HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
          transfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    )
    .await;
    assert_eq!(status, 400, "{body:?}");
    assert!(head.contains("x-request-id"), "{head:?}");
    let body: serde_json::Value = serde_json::from_str(&body).expect("a JSON body");
    assert_eq!(body["error"]["code"], "invalid_body", "{body}");

    // The server is unharmed.
    let (status, _) = app.get("/healthz").await;
    assert_eq!(status, 200);
    app.stop().await;
}
