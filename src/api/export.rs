//! The rows of `GET /v1/experiments/{id}/outcomes` and `/conversions`, as NDJSON objects and as
//! CSV records, and the export's query parameters. Fields are named as elsewhere in the API.

use serde::{Serialize, Serializer};

use super::PairOutcome;

/// Rows per page when `limit` is not given.
pub const DEFAULT_EXPORT_LIMIT: i64 = 100_000;
/// The largest `limit`: a page is one ordered scan in Postgres, and a client that loses its
/// connection re-reads at most this many rows.
pub const MAX_EXPORT_LIMIT: i64 = 1_000_000;

/// How the rows are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// One JSON object per line (`application/x-ndjson`), the default.
    Ndjson,
    /// RFC 4180 CSV with a header line (`text/csv`); lists and pair results are JSON text.
    Csv,
}

impl ExportFormat {
    /// The `format` parameter's values.
    pub const NAMES: [&'static str; 2] = ["ndjson", "csv"];

    pub fn from_name(name: &str) -> Option<ExportFormat> {
        match name {
            "ndjson" => Some(ExportFormat::Ndjson),
            "csv" => Some(ExportFormat::Csv),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Ndjson => "ndjson",
            ExportFormat::Csv => "csv",
        }
    }

    /// The format an `Accept` header asks for: CSV when it names `text/csv` before (or without)
    /// `application/x-ndjson`, NDJSON otherwise.
    pub fn from_accept(accept: &str) -> ExportFormat {
        let csv = accept.find("text/csv");
        let ndjson = accept.find("application/x-ndjson");
        match (csv, ndjson) {
            (Some(c), Some(n)) if c < n => ExportFormat::Csv,
            (Some(_), None) => ExportFormat::Csv,
            _ => ExportFormat::Ndjson,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            ExportFormat::Ndjson => "application/x-ndjson",
            ExportFormat::Csv => "text/csv; charset=utf-8",
        }
    }
}

/// Serialises a duel id as its hyphenated text, written on the stack.
fn duel_id<S: Serializer>(id: &uuid::Uuid, s: S) -> Result<S::Ok, S::Error> {
    let mut buf = uuid::Uuid::encode_buffer();
    s.serialize_str(id.hyphenated().encode_lower(&mut buf))
}

/// A time as RFC 3339 in UTC, with as many fractional digits as it has (chrono's own text),
/// formatted whole before it is written: serde's `collect_str`, which chrono's `Serialize` uses,
/// escapes it character by character, and that was the largest cost of an exported row.
fn time<S: Serializer>(t: &chrono::DateTime<chrono::Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&rfc3339(t))
}

fn rfc3339(t: &chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

/// One recorded outcome.
#[derive(Debug, Serialize)]
pub struct OutcomeExportRow<'a> {
    #[serde(serialize_with = "duel_id")]
    pub duel_id: uuid::Uuid,
    /// When the duel was issued (its token's time).
    #[serde(serialize_with = "time")]
    pub issued_at: chrono::DateTime<chrono::Utc>,
    /// When the outcome was acknowledged.
    #[serde(serialize_with = "time")]
    pub recorded_at: chrono::DateTime<chrono::Utc>,
    /// Every ranker shown, in the order the duel listed them (the same name twice for a
    /// two-ranker self-duel).
    pub rankers: Vec<&'a str>,
    /// A two-ranker duel's winner as recorded, or `"tie"`; `null` for a multi-ranker query.
    pub winner: Option<&'a str>,
    /// A multi-ranker query's result for every pair of its rankers; `null` for a two-ranker duel.
    pub outcomes: Option<Vec<PairOutcome>>,
    /// The metric this row is evidence for: `click` (outcomes posted or credited from clicks).
    pub metric: &'a str,
    /// The unit's keyed hash (hex), for a duel issued for a unit.
    pub unit_hash: Option<String>,
    /// The segment's label, for a duel whose request named one.
    pub segment: Option<&'a str>,
}

impl OutcomeExportRow<'_> {
    pub const CSV_HEADER: &'static str =
        "duel_id,issued_at,recorded_at,rankers,winner,outcomes,metric,unit_hash,segment\n";

    /// Appends the row as one CSV record.
    pub fn write_csv(&self, out: &mut Vec<u8>) {
        let mut buf = uuid::Uuid::encode_buffer();
        csv_field(out, self.duel_id.hyphenated().encode_lower(&mut buf));
        out.push(b',');
        csv_time(out, &self.issued_at);
        out.push(b',');
        csv_time(out, &self.recorded_at);
        out.push(b',');
        csv_field(out, &json_text(&self.rankers));
        out.push(b',');
        csv_field(out, self.winner.unwrap_or(""));
        out.push(b',');
        if let Some(outcomes) = &self.outcomes {
            csv_field(out, &json_text(outcomes));
        }
        out.push(b',');
        csv_field(out, self.metric);
        out.push(b',');
        csv_field(out, self.unit_hash.as_deref().unwrap_or(""));
        out.push(b',');
        csv_field(out, self.segment.unwrap_or(""));
        out.push(b'\n');
    }
}

/// One recorded conversion, with the duel it is credited to.
#[derive(Debug, Serialize)]
pub struct ConversionExportRow<'a> {
    #[serde(serialize_with = "duel_id")]
    pub duel_id: uuid::Uuid,
    pub metric: &'a str,
    pub event_id: &'a str,
    /// The duel's two rankers, in the order the duel listed them.
    pub rankers: [&'a str; 2],
    /// The converting document and its position (from 0) in the shown interleaving.
    pub document: &'a str,
    pub position: i32,
    pub value: Option<f64>,
    #[serde(serialize_with = "time")]
    pub issued_at: chrono::DateTime<chrono::Utc>,
    /// When the event happened (the service clock's time when it was posted).
    #[serde(serialize_with = "time")]
    pub occurred_at: chrono::DateTime<chrono::Utc>,
    #[serde(serialize_with = "time")]
    pub recorded_at: chrono::DateTime<chrono::Utc>,
}

impl ConversionExportRow<'_> {
    pub const CSV_HEADER: &'static str = "duel_id,metric,event_id,rankers,document,position,\
                                          value,issued_at,occurred_at,recorded_at\n";

    /// Appends the row as one CSV record.
    pub fn write_csv(&self, out: &mut Vec<u8>) {
        let mut buf = uuid::Uuid::encode_buffer();
        csv_field(out, self.duel_id.hyphenated().encode_lower(&mut buf));
        out.push(b',');
        csv_field(out, self.metric);
        out.push(b',');
        csv_field(out, self.event_id);
        out.push(b',');
        csv_field(out, &json_text(&self.rankers));
        out.push(b',');
        csv_field(out, self.document);
        out.push(b',');
        out.extend_from_slice(self.position.to_string().as_bytes());
        out.push(b',');
        if let Some(v) = self.value {
            out.extend_from_slice(json_text(&v).as_bytes());
        }
        out.push(b',');
        csv_time(out, &self.issued_at);
        out.push(b',');
        csv_time(out, &self.occurred_at);
        out.push(b',');
        csv_time(out, &self.recorded_at);
        out.push(b'\n');
    }
}

fn json_text<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("export fields serialise")
}

/// A time as in the JSON rows (RFC 3339, UTC).
fn csv_time(out: &mut Vec<u8>, t: &chrono::DateTime<chrono::Utc>) {
    out.extend_from_slice(rfc3339(t).as_bytes());
}

/// One RFC 4180 field: quoted (with quotes doubled) only when it holds a comma, a quote or a
/// line break.
fn csv_field(out: &mut Vec<u8>, text: &str) {
    if text
        .bytes()
        .any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
    {
        out.push(b'"');
        for b in text.bytes() {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        let mut out = Vec::new();
        csv_field(&mut out, "plain");
        out.push(b',');
        csv_field(&mut out, r#"["a","b"]"#);
        out.push(b',');
        csv_field(&mut out, "two\nlines");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "plain,\"[\"\"a\"\",\"\"b\"\"]\",\"two\nlines\""
        );
    }

    #[test]
    fn times_read_as_chrono_writes_them() {
        for text in [
            "2026-11-27T19:45:40.722Z",
            "2026-11-27T19:45:40.864425Z",
            "2026-11-27T19:45:40Z",
        ] {
            let t: chrono::DateTime<chrono::Utc> = text.parse().unwrap();
            assert_eq!(rfc3339(&t), text);
            assert_eq!(serde_json::to_string(&t).unwrap(), format!("\"{text}\""));
        }
    }

    #[test]
    fn accept_picks_the_first_format_it_names() {
        assert_eq!(ExportFormat::from_accept("text/csv"), ExportFormat::Csv);
        assert_eq!(
            ExportFormat::from_accept("application/x-ndjson, text/csv"),
            ExportFormat::Ndjson
        );
        assert_eq!(ExportFormat::from_accept("*/*"), ExportFormat::Ndjson);
    }
}
