//! The shape every batch endpoint answers with (outcomes, conversions): the batch's size checked
//! up front, then per-item results with a tally, each refused item in the error shape with its
//! HTTP status, so a client can retry exactly the items that failed.

use serde::Serialize;
use serde_json::{Value, json};

use crate::api::ErrorCode;
use crate::engine::EngineError;

use crate::http::stack::error::{ApiError, error_body};

/// A batch of `len` items, `noun` in the message, must hold 1 to `max` of them.
pub fn check_size(len: usize, max: usize, noun: &str) -> Result<(), ApiError> {
    if len == 0 || len > max {
        return Err(ApiError::new(
            ErrorCode::InvalidBatch,
            format!("a batch holds 1 to {max} {noun}, got {len}"),
        ));
    }
    Ok(())
}

/// A record that says whether it was new (`recorded`) or a retry of one already recorded.
pub trait Recorded: Serialize {
    fn is_new(&self) -> bool;
}

impl Recorded for crate::api::OutcomeRecord {
    fn is_new(&self) -> bool {
        self.status == "recorded"
    }
}

impl Recorded for crate::api::ConversionRecord {
    fn is_new(&self) -> bool {
        self.status == "recorded"
    }
}

/// `{recorded, duplicates, rejected, results}` for the items' results, in their order.
pub fn answer<R: Recorded>(results: Vec<Result<R, EngineError>>) -> Value {
    let (mut recorded, mut duplicates, mut rejected) = (0, 0, 0);
    let items: Vec<Value> = results
        .into_iter()
        .map(|r| match r {
            Ok(rec) => {
                if rec.is_new() {
                    recorded += 1;
                } else {
                    duplicates += 1;
                }
                serde_json::to_value(rec).expect("record serialises")
            }
            Err(e) => {
                rejected += 1;
                let e = ApiError::from(e);
                let mut body = error_body(e.code, &e.message);
                body["status"] = json!(e.status.as_u16());
                body
            }
        })
        .collect();
    json!({
        "recorded": recorded,
        "duplicates": duplicates,
        "rejected": rejected,
        "results": items,
    })
}
