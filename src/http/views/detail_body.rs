//! The detail view's JSON, serialised once per state version. Only the duel count changes
//! between versions (duels are counted in memory, not in the state), so the body is kept as the
//! bytes before and after that number, and each request writes its count between them: a poll of
//! a 136-ranker experiment that receives duels then costs a copy instead of building, serialising
//! and dropping a JSON tree of some 20 KB (most of a poll's cost, measured with perf).

use crate::engine::Snapshot;

use super::experiment;

/// A count no experiment reaches, so its text marks the place of the real one.
const MARK: i64 = i64::MIN;

pub struct DetailBody {
    before: Vec<u8>,
    after: Vec<u8>,
}

impl DetailBody {
    /// The detail of `snap`, with the duel count cut out.
    pub fn render(snap: &Snapshot) -> DetailBody {
        DetailBody::split(
            serde_json::to_vec(&experiment::detail(snap, MARK)).expect("a JSON value serialises"),
        )
    }

    /// Cuts a body rendered with the duel count [`MARK`] around that count.
    fn split(bytes: Vec<u8>) -> DetailBody {
        // The key with its value can only be the real field: inside a JSON string the quotes
        // around a key would be escaped.
        let marked = format!("\"duels_issued\":{MARK}");
        let at = find(&bytes, marked.as_bytes()).expect("the detail has a duel count");
        let value_at = at + marked.len() - MARK.to_string().len();
        DetailBody {
            before: bytes[..value_at].to_vec(),
            after: bytes[at + marked.len()..].to_vec(),
        }
    }

    /// The body with `duels_issued` written in.
    pub fn with_duels(&self, duels_issued: i64) -> Vec<u8> {
        let count = duels_issued.to_string();
        let mut out = Vec::with_capacity(self.before.len() + count.len() + self.after.len());
        out.extend_from_slice(&self.before);
        out.extend_from_slice(count.as_bytes());
        out.extend_from_slice(&self.after);
        out
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_count_is_written_in_place_of_the_mark() {
        // A ranker named like the field and its mark does not confuse the cut.
        let trap = format!("\"duels_issued\":{MARK}");
        let rendered = |count: i64| {
            serde_json::to_vec(&json!({
                "a": [trap, {"duels_issued": "no"}],
                "duels_issued": count,
                "z": 1.5,
            }))
            .unwrap()
        };
        let body = DetailBody::split(rendered(MARK));
        for count in [0, 7, 1_234_567_890_123] {
            assert_eq!(body.with_duels(count), rendered(count));
        }
    }
}
