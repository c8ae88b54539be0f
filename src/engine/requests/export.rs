//! Exports: an experiment's outcome or conversion rows, a page at a time, in the order its owner
//! applies them, streamed as they are read.
//!
//! A page is the first `limit` final rows after its cursor (`store::export`). Final rows are
//! those below the horizon, and a row that becomes final later sorts after every row final
//! before it (its transaction id is at or above the old horizon, theirs below it). So the
//! sequence of final rows only grows at its end: a page read again from the same cursor starts
//! with the same rows, and the cursor after a page's last row resumes with exactly the rows not
//! yet exported, whichever replica answers and however many restarts happen in between.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use tokio::sync::{Semaphore, mpsc};

use super::export_priority;
use crate::api::{
    ConversionExportRow, ExportFormat, OUTCOME_CSV_HEADER, PairOutcome, csv_field, json_text,
    write_json_str, write_time, write_uuid,
};
use crate::engine::model::{ExportCursor, SetResult, TIE};
use crate::engine::{Engine, EngineError};
use crate::interleave::Interleaving;
use crate::store::export::{
    self as store_export, ExportBatch, ExportKind, ExportPosition, ExportedConversion,
    ExportedOutcome,
};
use crate::store::export_copy;
use crate::store::outcomes::{CHOSEN_BY_CONFIRMATION, CHOSEN_BY_POLICY, PostedAs};

/// Pages streamed at once per process: each holds a Postgres connection of its own.
const CONCURRENT_PAGES: usize = 4;
static PAGES: Semaphore = Semaphore::const_new(CONCURRENT_PAGES);

/// A reader that takes no rows for this long is dropped, and its page's scan ends.
const STALLED_READER: Duration = Duration::from_secs(60);

/// Chunks formatted ahead of the reader: the memory a page in flight holds (about 1.5 MB).
const READ_AHEAD: usize = 4;

/// What the rows' indices name: the experiment's rankers and segment labels, with each name's
/// text as the rows write it, encoded once per page rather than once per row.
pub struct ExportLabels {
    rankers: Vec<String>,
    segments: HashMap<i16, String>,
    /// Each ranker's name as a JSON string, and as that JSON string inside a quoted CSV field
    /// (its quotes doubled).
    json_names: Vec<Vec<u8>>,
    csv_json_names: Vec<Vec<u8>>,
}

/// One page being streamed.
pub struct ExportPage {
    /// Where the next page starts, when more final rows follow this page.
    pub next: Option<ExportCursor>,
    /// The position after this page's last row: where an export continues later, for rows
    /// recorded since.
    pub resume: ExportCursor,
    /// The rows, formatted, in chunks with the number of rows each holds; an error ends the
    /// page.
    pub chunks: mpsc::Receiver<Result<(Bytes, usize), EngineError>>,
}

impl ExportLabels {
    /// The labels of experiment `id`; `UnknownExperiment` when it does not exist or was deleted.
    pub async fn read(pool: &sqlx::PgPool, id: i64) -> Result<ExportLabels, EngineError> {
        let rankers = store_export::ranker_names(pool, id)
            .await?
            .ok_or(EngineError::UnknownExperiment(id))?;
        let segments = store_export::segment_labels(pool, id)
            .await?
            .into_iter()
            .collect();
        Ok(ExportLabels::new(rankers, segments))
    }

    fn new(rankers: Vec<String>, segments: HashMap<i16, String>) -> ExportLabels {
        let json_names: Vec<Vec<u8>> = rankers
            .iter()
            .map(|n| {
                let mut out = Vec::new();
                write_json_str(&mut out, n);
                out
            })
            .collect();
        let csv_json_names = json_names
            .iter()
            .map(|j| {
                let mut out = Vec::with_capacity(j.len() + 4);
                for &b in j {
                    if b == b'"' {
                        out.push(b'"');
                    }
                    out.push(b);
                }
                out
            })
            .collect();
        ExportLabels {
            rankers,
            segments,
            json_names,
            csv_json_names,
        }
    }

    fn name(&self, idx: i32) -> &str {
        usize::try_from(idx)
            .ok()
            .and_then(|i| self.rankers.get(i))
            .map_or("", String::as_str)
    }

    fn json_name(&self, idx: i32) -> &[u8] {
        usize::try_from(idx)
            .ok()
            .and_then(|i| self.json_names.get(i))
            .map_or(&b"\"\""[..], Vec::as_slice)
    }

    fn csv_json_name(&self, idx: i32) -> &[u8] {
        usize::try_from(idx)
            .ok()
            .and_then(|i| self.csv_json_names.get(i))
            .map_or(&b"\"\"\"\""[..], Vec::as_slice)
    }

    /// The header a file of `kind`'s rows starts with (CSV only).
    pub fn header(kind: ExportKind, format: ExportFormat) -> &'static str {
        match (kind, format) {
            (_, ExportFormat::Ndjson) => "",
            (ExportKind::Outcomes, ExportFormat::Csv) => OUTCOME_CSV_HEADER,
            (ExportKind::Conversions, ExportFormat::Csv) => ConversionExportRow::CSV_HEADER,
        }
    }

    /// Appends a batch of rows in `format`.
    pub fn write(&self, batch: &ExportBatch, format: ExportFormat, out: &mut Vec<u8>) {
        match batch {
            ExportBatch::Outcomes(rows) => {
                for row in rows {
                    self.write_outcome(row, format, out);
                }
            }
            ExportBatch::Conversions(rows) => {
                for row in rows {
                    let row = self.conversion(row);
                    match format {
                        ExportFormat::Ndjson => write_json_line(&row, out),
                        ExportFormat::Csv => row.write_csv(out),
                    }
                }
            }
        }
    }

    /// Appends one outcome row: an NDJSON object or a CSV record, field by field in the order
    /// of [`OUTCOME_CSV_HEADER`]. Written by hand: this runs once per exported row.
    fn write_outcome(&self, r: &ExportedOutcome, format: ExportFormat, out: &mut Vec<u8>) {
        let csv = format == ExportFormat::Csv;
        let field = |out: &mut Vec<u8>, name: &str| {
            if csv {
                if name != "duel_id" {
                    out.push(b',');
                }
            } else {
                out.extend_from_slice(if name == "duel_id" { b"{\"" } else { b",\"" });
                out.extend_from_slice(name.as_bytes());
                out.extend_from_slice(b"\":");
            }
        };
        // A JSON value: as it is in NDJSON, a quoted CSV field (quotes doubled) in CSV.
        let json = |out: &mut Vec<u8>, text: &[u8]| {
            if csv {
                csv_field(out, std::str::from_utf8(text).unwrap_or(""));
            } else {
                out.extend_from_slice(text);
            }
        };
        let null = |out: &mut Vec<u8>| {
            if !csv {
                out.extend_from_slice(b"null");
            }
        };
        // Text: a JSON string, or a CSV field.
        let text = |out: &mut Vec<u8>, t: &str| {
            if csv {
                csv_field(out, t);
            } else {
                write_json_str(out, t);
            }
        };
        let quote = |out: &mut Vec<u8>| {
            if !csv {
                out.push(b'"');
            }
        };

        field(out, "duel_id");
        quote(out);
        write_uuid(out, &r.duel_id);
        quote(out);
        field(out, "issued_at");
        quote(out);
        write_time(out, &r.issued_at);
        quote(out);
        field(out, "recorded_at");
        quote(out);
        write_time(out, &r.recorded_at);
        quote(out);

        field(out, "rankers");
        let pair = [r.first, r.second];
        let shown: &[i32] = match &r.set {
            Some((set, _)) => set,
            None => &pair,
        };
        out.extend_from_slice(if csv { b"\"[" } else { b"[" });
        for (i, &idx) in shown.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(if csv {
                self.csv_json_name(idx)
            } else {
                self.json_name(idx)
            });
        }
        out.extend_from_slice(if csv { b"]\"" } else { b"]" });

        // The recorded winner's name as JSON (a two-ranker duel's).
        let winner_json: &[u8] = match r.winner {
            Some(w) => self.json_name(w),
            None => b"\"tie\"",
        };
        field(out, "winner");
        match (&r.set, r.winner) {
            (Some(_), _) => null(out),
            (None, Some(w)) => text(out, self.name(w)),
            (None, None) => text(out, TIE),
        }
        field(out, "outcomes");
        match &r.set {
            Some((set, results)) => {
                let set_result = SetResult {
                    rankers: set.iter().map(|&i| i.max(0) as usize).collect(),
                    results: results.clone(),
                };
                let outcomes: Vec<PairOutcome> = set_result.named(&self.rankers);
                json(out, json_text(&outcomes).as_bytes());
            }
            None => null(out),
        }
        field(out, "metric");
        text(out, CLICK);
        field(out, "unit_hash");
        match &r.unit_hash {
            Some(h) => text(out, &hex(h)),
            None => null(out),
        }
        field(out, "segment");
        match r.segment.and_then(|s| self.segments.get(&s)) {
            Some(label) => text(out, label),
            None => null(out),
        }

        field(out, "posted");
        match r.posted_as.and_then(PostedAs::from_code) {
            Some(posted_as) => {
                let mut posted = Vec::with_capacity(64);
                posted.extend_from_slice(b"{\"");
                posted.extend_from_slice(posted_as.name().as_bytes());
                posted.extend_from_slice(b"\":");
                match (&r.posted, posted_as) {
                    (Some(value), _) => posted.extend_from_slice(value.as_bytes()),
                    // A winner recorded as posted.
                    (None, PostedAs::Winner) => posted.extend_from_slice(winner_json),
                    (None, _) => posted.extend_from_slice(b"null"),
                }
                posted.push(b'}');
                json(out, &posted);
            }
            None => null(out),
        }
        field(out, "interleaving");
        match &r.method {
            Some(method) => text(out, method),
            None => null(out),
        }
        field(out, "chosen_by");
        match r.chosen_by {
            Some(CHOSEN_BY_POLICY) => text(out, "policy"),
            Some(CHOSEN_BY_CONFIRMATION) => text(out, "confirmation"),
            _ => null(out),
        }
        out.extend_from_slice(if csv { b"\n" } else { b"}\n" });
    }

    fn conversion<'a>(&'a self, r: &'a ExportedConversion) -> ConversionExportRow<'a> {
        let rankers = [self.name(r.first), self.name(r.second)];
        let credit = serde_json::from_value::<Interleaving<String>>(r.interleaving.clone())
            .ok()
            .and_then(|il| {
                usize::try_from(r.position)
                    .ok()
                    .map(|p| il.ranker_credit(&[p]))
            })
            .map(|values| {
                // A ranker interleaved with itself holds both lists' credit.
                let mut credit = BTreeMap::new();
                for (name, value) in rankers.iter().zip(values) {
                    *credit.entry(*name).or_insert(0.0) += value;
                }
                credit
            });
        ConversionExportRow {
            duel_id: r.duel_id,
            metric: &r.metric,
            event_id: &r.event_id,
            rankers,
            document: &r.document,
            position: r.position,
            value: r.value,
            issued_at: r.issued_at,
            occurred_at: r.occurred_at,
            recorded_at: r.recorded_at,
            credit,
            duel_winner: match r.duel_result {
                Some(1) => Some(rankers[0]),
                Some(-1) => Some(rankers[1]),
                Some(_) => Some(TIE),
                None => None,
            },
        }
    }
}

/// The metric outcome rows are evidence for: the outcome posted, or credited from clicks.
const CLICK: &str = "click";

fn write_json_line<T: serde::Serialize>(row: &T, out: &mut Vec<u8>) {
    serde_json::to_writer(&mut *out, row).expect("export rows serialise");
    out.push(b'\n');
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Starts streaming the page of at most `limit` final rows after `after`: finds its bounds, then
/// reads and formats its rows on a thread of its own (see [`read_page`]), which hands them on as
/// they are formatted, at most [`READ_AHEAD`] chunks ahead of the reader (so memory stays flat
/// however large the export), and stops when the reader goes away or stalls. The bounds are
/// found on the pool, so that a poll for rows recorded since (an empty page, most of them)
/// costs one statement and no thread or connection.
pub async fn export_page(
    pool: &sqlx::PgPool,
    labels: Arc<ExportLabels>,
    kind: ExportKind,
    format: ExportFormat,
    experiment: i64,
    after: ExportPosition,
    limit: i64,
) -> Result<ExportPage, EngineError> {
    let bounds = store_export::page_bounds(pool, kind, experiment, after, limit).await?;
    let cursor = |at| ExportCursor {
        kind,
        experiment,
        at,
    };
    let (tx, rx) = mpsc::channel(READ_AHEAD);
    let Some(bounds) = bounds else {
        return Ok(ExportPage {
            next: None,
            resume: cursor(after),
            chunks: rx,
        });
    };
    let permit = PAGES.acquire().await.map_err(EngineError::internal)?;
    let options = pool.connect_options();
    let page = PageRead {
        labels,
        kind,
        format,
        experiment,
        after,
        last: bounds.last,
    };
    std::thread::Builder::new()
        .name("joust-export".into())
        .spawn(move || {
            let _permit = permit;
            export_priority::lower_thread_priority();
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => {
                    let _ = tx.blocking_send(Err(EngineError::internal(e)));
                    return;
                }
            };
            runtime.block_on(async move {
                if let Err(e) = read_page(&options, page, &tx).await {
                    let _ = tx.send(Err(e)).await;
                }
            });
        })
        .map_err(EngineError::internal)?;
    Ok(ExportPage {
        next: bounds.more.then(|| cursor(bounds.last)),
        resume: cursor(bounds.last),
        chunks: rx,
    })
}

/// What one page's thread reads and how it writes it.
struct PageRead {
    labels: Arc<ExportLabels>,
    kind: ExportKind,
    format: ExportFormat,
    experiment: i64,
    after: ExportPosition,
    last: ExportPosition,
}

/// Rows formatted into one chunk of the body: about 300 kB of NDJSON.
const CHUNK_ROWS: usize = 1024;

/// A chunk's buffer: room for [`CHUNK_ROWS`] two-ranker rows (about 290 bytes each), so that it
/// is not grown (and copied) while it fills.
const CHUNK_BYTES: usize = CHUNK_ROWS * 384;

/// Reads the page's rows on a connection of its own (a page streams for as long as its reader
/// takes, and the requests the pool serves must not wait for it), whose backend runs at the
/// export's lower priority where it can (`export_priority`), formats them a chunk at a time and
/// sends the chunks to `tx`. Outcomes are read with a binary `COPY`; conversions, a handful by
/// comparison, with a query.
async fn read_page(
    options: &sqlx::postgres::PgConnectOptions,
    page: PageRead,
    tx: &mpsc::Sender<Result<(Bytes, usize), EngineError>>,
) -> Result<(), EngineError> {
    use sqlx::ConnectOptions;
    let mut conn = options.connect().await.map_err(store_error)?;
    export_priority::lower_backend_priority(&mut conn).await;
    let send = |rows: ExportBatch| {
        let mut out = Vec::with_capacity(CHUNK_BYTES);
        page.labels.write(&rows, page.format, &mut out);
        let count = match &rows {
            ExportBatch::Outcomes(r) => r.len(),
            ExportBatch::Conversions(r) => r.len(),
        };
        async move {
            matches!(
                tokio::time::timeout(STALLED_READER, tx.send(Ok((Bytes::from(out), count)))).await,
                Ok(Ok(()))
            )
        }
    };
    match page.kind {
        ExportKind::Outcomes => {
            let statement = export_copy::outcomes_statement(page.experiment, page.after, page.last);
            export_copy::stream_outcomes(&mut conn, &statement, CHUNK_ROWS, |rows| {
                send(ExportBatch::Outcomes(rows))
            })
            .await?
        }
        ExportKind::Conversions => {
            store_export::stream_rows(
                &mut conn,
                page.kind,
                page.experiment,
                page.after,
                page.last,
                send,
            )
            .await?
        }
    }
    Ok(())
}

fn store_error(e: sqlx::Error) -> EngineError {
    crate::store::StoreError::from(e).into()
}

impl Engine {
    /// The text of a cursor, signed.
    pub fn export_cursor_text(&self, cursor: &ExportCursor) -> String {
        self.signer.sign_cursor(&cursor.encode())
    }

    /// The position a cursor text names, if this service signed it for this experiment's export
    /// of `kind`; otherwise why not, for a 400 `invalid_cursor`.
    pub fn read_export_cursor(
        &self,
        experiment: i64,
        kind: ExportKind,
        text: &str,
    ) -> Result<ExportPosition, String> {
        let cursor = self
            .signer
            .verify_cursor(text)
            .and_then(|body| ExportCursor::decode(&body))
            .ok_or_else(|| {
                "after is not a cursor this service issued: pass the cursor of a Link or \
                 Joust-Cursor header unchanged"
                    .to_string()
            })?;
        if cursor.experiment != experiment || cursor.kind != kind {
            return Err(format!(
                "after is a cursor of experiment {}'s {} export, not of this one",
                cursor.experiment,
                kind_name(cursor.kind)
            ));
        }
        Ok(cursor.at)
    }

    /// Starts streaming a page of experiment `id`'s export in `format` (see [`export_page`]).
    pub async fn export(
        &self,
        id: i64,
        kind: ExportKind,
        format: ExportFormat,
        after: ExportPosition,
        limit: i64,
    ) -> Result<ExportPage, EngineError> {
        let labels = Arc::new(ExportLabels::read(&self.pool, id).await?);
        export_page(&self.pool, labels, kind, format, id, after, limit).await
    }
}

/// A kind of rows as the API's paths name it.
pub fn kind_name(kind: ExportKind) -> &'static str {
    match kind {
        ExportKind::Outcomes => "outcomes",
        ExportKind::Conversions => "conversions",
    }
}
