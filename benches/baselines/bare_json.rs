//! The baseline of `benches/bench-http`: a bare axum handler that parses a small JSON body and
//! answers JSON, on the same runtime settings and global allocator as `joust serve` and nothing
//! else (no database, no keys, no metrics). Every figure of the HTTP benchmark is read against it:
//!
//!     cargo run --release --example bare_json -- 127.0.0.1:18180

use axum::{Json, Router, routing::post};
use serde_json::{Value, json};

// The allocator of `joust serve` (src/main.rs), so the baseline gains whatever joust gains from it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

async fn answer(Json(body): Json<Value>) -> Json<Value> {
    Json(json!({ "ok": true, "fields": body.as_object().map_or(0, |o| o.len()) }))
}

#[tokio::main]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:18180".to_string());
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .expect("bind the listen address");
    let app = Router::new().route("/", post(answer));
    axum::serve(listener, app).await.expect("serve");
}
