//! `joust export`: an experiment's outcomes or conversions into an NDJSON or CSV file, from a
//! running service (following its pages, and reading a page again when its body breaks off) or
//! straight from its database (the same rows, read by the same code the service runs).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::{Args, ValueEnum};

use crate::api::{ExportFormat, MAX_EXPORT_LIMIT};
use crate::engine::{ExportLabels, export_page};
use crate::store::export::{ExportKind, ExportPosition};

#[derive(Args)]
pub struct ExportArgs {
    /// The experiment's id.
    #[arg(long)]
    experiment: i64,
    /// Export the conversions instead of the outcomes.
    #[arg(long)]
    conversions: bool,
    /// The file to write (`-` for standard output).
    #[arg(long, short)]
    out: PathBuf,
    /// The file's format; by default from the file's extension (`.csv`: CSV, else NDJSON).
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// A running service's base URL, e.g. http://localhost:8080.
    #[arg(
        long,
        conflicts_with = "database_url",
        required_unless_present = "database_url"
    )]
    url: Option<String>,
    /// An API key of read scope, for a service with keys.
    #[arg(long, env = "JOUST_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// Read straight from the service's database instead.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
    /// Continue an export after this cursor (`--url` only: the `Joust-Cursor` printed at the
    /// end of an earlier export); the file is appended to.
    #[arg(long, requires = "url")]
    after: Option<String>,
    /// Rows per page.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(i64).range(1..=MAX_EXPORT_LIMIT))]
    limit: i64,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Ndjson,
    Csv,
}

pub fn run(args: ExportArgs) -> anyhow::Result<()> {
    let format = match args.format {
        Some(FormatArg::Ndjson) => ExportFormat::Ndjson,
        Some(FormatArg::Csv) => ExportFormat::Csv,
        None if args.out.extension().is_some_and(|e| e == "csv") => ExportFormat::Csv,
        None => ExportFormat::Ndjson,
    };
    let kind = if args.conversions {
        ExportKind::Conversions
    } else {
        ExportKind::Outcomes
    };
    let append = args.after.is_some();
    let mut out: Box<dyn Write> = if args.out.as_os_str() == "-" {
        Box::new(std::io::stdout().lock())
    } else {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(&args.out)
            .with_context(|| format!("cannot open {}", args.out.display()))?;
        Box::new(file)
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 20, &mut out);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let started = Instant::now();
    let rows = runtime.block_on(async {
        match &args.url {
            Some(url) => from_service(&args, url, kind, format, &mut out).await,
            None => {
                let db = args
                    .database_url
                    .as_deref()
                    .expect("clap requires one source");
                from_database(db, args.experiment, kind, format, args.limit, &mut out).await
            }
        }
    })?;
    out.flush()?;
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "{rows} rows in {secs:.1} s ({:.0} rows/s)",
        rows as f64 / secs.max(1e-9)
    );
    Ok(())
}

/// Pages from the service, following `Link`. A body that breaks off (a restart, a dropped
/// connection) is read again from the same URL after a pause, skipping the rows already
/// written: the page starts with the same rows. The next page is asked for before a page ends
/// (see [`read_page`]), so the service finds its bounds while this page's body is read. Returns
/// the number of rows written.
async fn from_service(
    args: &ExportArgs,
    base: &str,
    kind: ExportKind,
    format: ExportFormat,
    out: &mut impl Write,
) -> anyhow::Result<u64> {
    let client = reqwest::Client::new();
    let base = base.trim_end_matches('/');
    let mut path = format!(
        "/v1/experiments/{}/{}?limit={}&format={}",
        args.experiment,
        crate::engine::export_kind_name(kind),
        args.limit,
        format.name()
    );
    if let Some(after) = &args.after {
        path.push_str(&format!("&after={after}"));
    }
    let mut total = 0u64;
    let mut header_written = args.after.is_some();
    let mut resume = None;
    let mut asked: Option<Asked> = None;
    loop {
        let mut written = 0u64;
        let mut attempts = 0;
        let page = loop {
            // The request made ahead for this page, if it got an answer; else a new one.
            let response = match asked.take() {
                Some(a) if a.path == path => a.response.await.ok().and_then(Result::ok),
                _ => None,
            };
            let response = match response {
                Some(r) => r,
                None => match page_request(&client, args, base, &path).send().await {
                    Ok(r) => r,
                    Err(e) => {
                        attempts += 1;
                        if attempts > 30 {
                            return Err(anyhow::Error::from(e).context("the page kept failing"));
                        }
                        eprintln!("asking for a page failed ({e:#}); asking again");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        continue;
                    }
                },
            };
            let ask_next = |next: &str| Asked {
                path: next.to_string(),
                response: tokio::spawn(page_request(&client, args, base, next).send()),
            };
            let read = read_page(
                response,
                format,
                args.limit as u64,
                written,
                &mut header_written,
                out,
                ask_next,
            );
            match read.await {
                Ok((page, next)) => {
                    asked = next;
                    break page;
                }
                Err(PageError::Refused(e)) => return Err(e),
                Err(PageError::Broken(e, rows)) => {
                    written = rows;
                    attempts += 1;
                    if attempts > 30 {
                        return Err(e.context("the page kept breaking off"));
                    }
                    eprintln!("page broke off after {rows} rows ({e:#}); reading it again");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        };
        total += page.rows;
        if page.cursor.is_some() {
            resume = page.cursor;
        }
        match page.next {
            Some(next) => path = next,
            None => break,
        }
    }
    if let Some(cursor) = resume {
        eprintln!("continue later with --after {cursor}");
    }
    Ok(total)
}

/// A page asked for ahead of reading it.
struct Asked {
    path: String,
    response: tokio::task::JoinHandle<reqwest::Result<reqwest::Response>>,
}

fn page_request(
    client: &reqwest::Client,
    args: &ExportArgs,
    base: &str,
    path: &str,
) -> reqwest::RequestBuilder {
    let request = client.get(format!("{base}{path}"));
    match &args.api_key {
        Some(key) => request.bearer_auth(key),
        None => request,
    }
}

struct PageRead {
    rows: u64,
    next: Option<String>,
    cursor: Option<String>,
}

enum PageError {
    /// A 4xx: reading again would not help.
    Refused(anyhow::Error),
    /// The request or its body failed after `.1` rows of the page were written.
    Broken(anyhow::Error, u64),
}

/// Reads one page's answer, writing its whole lines after the first `skip` rows (and the CSV
/// header only once: `header_written` says whether it was). When the headers name a next page,
/// `ask_next` asks for it once nine tenths of this page's `limit` rows are read (a page with a
/// next one is full): early enough that the service has found its bounds when this page ends,
/// late enough that it does not wait long for its reader (the service drops a page whose reader
/// takes nothing for a minute). What it asked is returned with the page.
#[allow(clippy::too_many_arguments)]
async fn read_page(
    mut response: reqwest::Response,
    format: ExportFormat,
    limit: u64,
    skip: u64,
    header_written: &mut bool,
    out: &mut impl Write,
    ask_next: impl FnOnce(&str) -> Asked,
) -> Result<(PageRead, Option<Asked>), PageError> {
    let broken = |e: anyhow::Error, rows| PageError::Broken(e, rows);
    let status = response.status();
    if !status.is_success() {
        let body = response.text().await.unwrap_or_default();
        let e = anyhow::anyhow!("{status}: {body}");
        return Err(if status.is_client_error() {
            PageError::Refused(e)
        } else {
            broken(e, skip)
        });
    }
    let header = |name| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let next = header("link").and_then(|l| {
        l.strip_prefix('<')
            .and_then(|l| l.split_once(">; rel=\"next\""))
            .map(|(url, _)| url.to_string())
    });
    let cursor = header("joust-cursor");
    let ask_at = limit - limit / 10;
    let mut ask = next.as_deref().map(|n| (n, ask_next));
    let mut asked = None;
    let mut lines = Lines {
        seen_header: format != ExportFormat::Csv,
        header_written,
        skip,
        rows: 0,
    };
    // A line begun in one chunk and ended in a later one.
    let mut partial: Vec<u8> = Vec::new();
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(e) => return Err(broken(e.into(), lines.rows.max(skip))),
        };
        let Some(end) = memchr::memrchr(b'\n', &chunk) else {
            partial.extend_from_slice(&chunk);
            continue;
        };
        let (whole, rest) = chunk.split_at(end + 1);
        let written = if partial.is_empty() {
            lines.write(whole, out)
        } else {
            partial.extend_from_slice(whole);
            let written = lines.write(&partial, out);
            partial.clear();
            written
        };
        written.map_err(|e| PageError::Refused(e.into()))?;
        partial.extend_from_slice(rest);
        if lines.rows >= ask_at
            && let Some((next, ask_next)) = ask.take()
        {
            asked = Some(ask_next(next));
        }
    }
    if !partial.is_empty() {
        return Err(broken(
            anyhow::anyhow!("the body ended mid-line"),
            lines.rows.max(skip),
        ));
    }
    let page = PageRead {
        rows: lines.rows,
        next,
        cursor,
    };
    Ok((page, asked))
}

/// Where a page's lines stand: the CSV header (the first line of a CSV page), then one row a
/// line, of which the first `skip` were written before.
struct Lines<'a> {
    seen_header: bool,
    header_written: &'a mut bool,
    skip: u64,
    rows: u64,
}

impl Lines<'_> {
    /// Writes whole lines (`data` ends with a line break).
    fn write(&mut self, data: &[u8], out: &mut impl Write) -> std::io::Result<()> {
        let mut start = 0;
        // The CSV header and the rows to skip, a line at a time; then every whole line at once.
        while start < data.len() && (!self.seen_header || self.rows < self.skip) {
            let len =
                memchr::memchr(b'\n', &data[start..]).expect("data ends with a line break") + 1;
            let line = &data[start..start + len];
            start += len;
            if !self.seen_header {
                self.seen_header = true;
                if !*self.header_written {
                    out.write_all(line)?;
                    *self.header_written = true;
                }
            } else {
                self.rows += 1;
            }
        }
        let rest = &data[start..];
        self.rows += memchr::memchr_iter(b'\n', rest).count() as u64;
        out.write_all(rest)
    }
}

/// Pages straight from the database, by the code the service runs for a page.
async fn from_database(
    url: &str,
    experiment: i64,
    kind: ExportKind,
    format: ExportFormat,
    limit: i64,
    out: &mut impl Write,
) -> anyhow::Result<u64> {
    let pool = crate::store::pool_options()
        .max_connections(2)
        .connect(url)
        .await
        .context("cannot connect to the database")?;
    let labels = Arc::new(
        ExportLabels::read(&pool, experiment)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?,
    );
    out.write_all(ExportLabels::header(kind, format).as_bytes())?;
    let mut after = ExportPosition::START;
    let mut total = 0u64;
    loop {
        let mut page = export_page(
            &pool,
            labels.clone(),
            kind,
            format,
            experiment,
            after,
            limit,
        )
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        while let Some(chunk) = page.chunks.recv().await {
            let (bytes, rows) = chunk.map_err(|e| anyhow::anyhow!("{e}"))?;
            total += rows as u64;
            out.write_all(&bytes)?;
        }
        match page.next {
            Some(next) => after = next.at,
            None => break,
        }
    }
    Ok(total)
}
