//! The rows of `GET /v1/experiments/{id}/outcomes` and `/conversions`, as NDJSON objects and as
//! CSV records, and the export's query parameters. Fields are named as elsewhere in the API.

use serde::{Serialize, Serializer};

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
    let mut out = Vec::with_capacity(32);
    write_time(&mut out, t);
    s.serialize_str(std::str::from_utf8(&out).expect("a time is ASCII"))
}

/// Appends a time as RFC 3339 in UTC (`2026-11-27T19:45:40.722Z`), with 0, 3, 6 or 9 fractional
/// digits as it needs, as chrono's `SecondsFormat::AutoSi` writes it (and as the rest of the
/// API's times read), without chrono's formatting machinery.
pub fn write_time(out: &mut Vec<u8>, t: &chrono::DateTime<chrono::Utc>) {
    let Some(date_time) = super::rfc3339::date_time(t.timestamp()) else {
        out.extend_from_slice(
            t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
                .as_bytes(),
        );
        return;
    };
    out.extend_from_slice(&date_time);
    let nanos = t.timestamp_subsec_nanos();
    let (digits, frac) = if nanos == 0 {
        (0, 0)
    } else if nanos % 1_000_000 == 0 {
        (3, nanos / 1_000_000)
    } else if nanos % 1_000 == 0 {
        (6, nanos / 1_000)
    } else {
        (9, nanos)
    };
    if digits > 0 {
        let mut f = [b'.'; 10];
        super::rfc3339::digits(&mut f[1..=digits], frac);
        out.extend_from_slice(&f[..=digits]);
    }
    out.push(b'Z');
}

/// Appends `text` as a JSON string (quoted, escaped as serde_json escapes it).
pub fn write_json_str(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => {
                out.extend_from_slice(&bytes[start..i]);
                out.extend_from_slice(format!("\\u{b:04x}").as_bytes());
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(escape);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Appends a duel id as its hyphenated lower-case text.
pub fn write_uuid(out: &mut Vec<u8>, id: &uuid::Uuid) {
    let mut buf = uuid::Uuid::encode_buffer();
    out.extend_from_slice(id.hyphenated().encode_lower(&mut buf).as_bytes());
}

/// The header of the outcomes' CSV: the fields of an outcome row, in the order of its NDJSON
/// object (the rows are written by `engine::ExportLabels`, field by field).
pub const OUTCOME_CSV_HEADER: &str = "duel_id,issued_at,recorded_at,rankers,winner,outcomes,metric,\
                                      unit_hash,segment,posted,interleaving,chosen_by\n";

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
    /// This event's share of the credit by ranker, from the stored interleaving (Team-Draft: 1
    /// to the ranker whose team placed the document); `null` if it cannot be read.
    pub credit: Option<std::collections::BTreeMap<&'a str, f64>>,
    /// The duel's result for this metric once the experiment's owner decided it (from all of
    /// the duel's events, as the metric credits them): a ranker, or `"tie"`; `null` before, or
    /// when nothing counted.
    pub duel_winner: Option<&'a str>,
}

impl ConversionExportRow<'_> {
    pub const CSV_HEADER: &'static str = "duel_id,metric,event_id,rankers,document,position,\
                                          value,issued_at,occurred_at,recorded_at,credit,\
                                          duel_winner\n";

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
        out.push(b',');
        if let Some(credit) = &self.credit {
            csv_field(out, &json_text(credit));
        }
        out.push(b',');
        csv_field(out, self.duel_winner.unwrap_or(""));
        out.push(b'\n');
    }
}

pub fn json_text<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("export fields serialise")
}

/// A time as in the JSON rows (RFC 3339, UTC).
fn csv_time(out: &mut Vec<u8>, t: &chrono::DateTime<chrono::Utc>) {
    write_time(out, t);
}

/// One RFC 4180 field: quoted (with quotes doubled) only when it holds a comma, a quote or a
/// line break.
pub fn csv_field(out: &mut Vec<u8>, text: &str) {
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
    use chrono::Timelike;

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
            let mut out = Vec::new();
            write_time(&mut out, &t);
            assert_eq!(String::from_utf8(out).unwrap(), text);
            assert_eq!(serde_json::to_string(&t).unwrap(), format!("\"{text}\""));
        }
    }

    #[test]
    fn times_are_written_as_chrono_writes_them() {
        let mut t = chrono::DateTime::<chrono::Utc>::from_timestamp(-86_400 * 800, 0).unwrap();
        let step = chrono::Duration::nanoseconds(86_400_000_000_123 / 7);
        for i in 0..20_000 {
            let mut out = Vec::new();
            write_time(&mut out, &t);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
                "{i}"
            );
            t += step;
            if i % 3 == 0 {
                t = t
                    .with_nanosecond(t.timestamp_subsec_micros() * 1000)
                    .unwrap();
            }
        }
    }

    #[test]
    fn json_strings_are_escaped_as_serde_json_escapes_them() {
        for text in [
            "plain",
            "quo\"te",
            "back\\slash",
            "line\nbreak\ttab\u{1}\u{1f}",
            "é✓",
        ] {
            let mut out = Vec::new();
            write_json_str(&mut out, text);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(text).unwrap()
            );
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
