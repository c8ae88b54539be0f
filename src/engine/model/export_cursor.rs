//! An export's cursor: which experiment's rows, outcomes or conversions, and the position after
//! which the next page starts. Signed (with the duel tokens' secret, under a format byte of its
//! own), so a client cannot forge a position, and a cursor of one experiment's export, or of its
//! other kind of rows, is refused rather than read as a position of another.

use crate::store::export::{ExportKind, ExportPosition};

/// What a cursor names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportCursor {
    pub kind: ExportKind,
    pub experiment: i64,
    pub at: ExportPosition,
}

const OUTCOMES: u8 = 1;
const CONVERSIONS: u8 = 2;
const LEN: usize = 1 + 8 + 8 + 16;

impl ExportCursor {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(LEN);
        out.push(match self.kind {
            ExportKind::Outcomes => OUTCOMES,
            ExportKind::Conversions => CONVERSIONS,
        });
        out.extend_from_slice(&self.experiment.to_be_bytes());
        out.extend_from_slice(&self.at.xid.to_be_bytes());
        out.extend_from_slice(self.at.key.as_bytes());
        out
    }

    pub fn decode(bytes: &[u8]) -> Option<ExportCursor> {
        if bytes.len() != LEN {
            return None;
        }
        let kind = match bytes[0] {
            OUTCOMES => ExportKind::Outcomes,
            CONVERSIONS => ExportKind::Conversions,
            _ => return None,
        };
        let experiment = i64::from_be_bytes(bytes[1..9].try_into().ok()?);
        let xid = i64::from_be_bytes(bytes[9..17].try_into().ok()?);
        let key = uuid::Uuid::from_slice(&bytes[17..33]).ok()?;
        Some(ExportCursor {
            kind,
            experiment,
            at: ExportPosition { xid, key },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_as_itself() {
        let c = ExportCursor {
            kind: ExportKind::Conversions,
            experiment: 42,
            at: ExportPosition {
                xid: 123_456,
                key: uuid::Uuid::from_u64_pair(1, 2),
            },
        };
        assert_eq!(ExportCursor::decode(&c.encode()), Some(c));
        assert_eq!(ExportCursor::decode(&c.encode()[1..]), None);
    }
}
