//! Reading an export page's outcome rows with `COPY (SELECT ...) TO STDOUT (FORMAT binary)`:
//! Postgres sends each row as one message of fixed-width binary fields, which cost it and joust
//! far less than a result set's rows decoded column by column (an exported row is read once, so
//! its decoding is most of joust's share of an export). The statement takes no parameters, so
//! the page's bounds are written into it: typed numbers and a UUID, never text from a client.

use futures_util::TryStreamExt;

use super::StoreError;
use super::export::{ExportPosition, ExportedOutcome};

/// The columns read, in the order [`parse_outcome`] reads them.
const COLUMNS: &str = "duel_id, first_idx, second_idx, rankers, results, winner_idx, issued_at, \
                       recorded_at, unit_hash, segment, posted_as, posted::text, method, chosen_by";

/// The statement that copies experiment `experiment`'s outcome rows after `after` up to `last`
/// (inclusive), in apply order.
pub fn outcomes_statement(experiment: i64, after: ExportPosition, last: ExportPosition) -> String {
    format!(
        "COPY (SELECT {COLUMNS} FROM outcomes
               WHERE experiment_id = {experiment}
                 AND (xid, duel_id) > ({}, '{}') AND (xid, duel_id) <= ({}, '{}')
               ORDER BY xid, duel_id) TO STDOUT (FORMAT binary)",
        after.xid,
        after.key.hyphenated(),
        last.xid,
        last.key.hyphenated(),
    )
}

/// Streams the rows of `statement` (an [`outcomes_statement`]) on `conn`, calling `deliver` with
/// each batch of at most `batch_rows`; stops early (without error) when `deliver` returns false.
pub async fn stream_outcomes<F, Fut>(
    conn: &mut sqlx::PgConnection,
    statement: &str,
    batch_rows: usize,
    mut deliver: F,
) -> Result<(), StoreError>
where
    F: FnMut(Vec<ExportedOutcome>) -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let mut chunks = conn.copy_out_raw(statement).await?;
    let mut reader = CopyReader::default();
    let mut batch = Vec::with_capacity(batch_rows);
    while let Some(chunk) = chunks.try_next().await? {
        reader.feed(&chunk, &mut batch)?;
        if batch.len() >= batch_rows {
            let full = std::mem::replace(&mut batch, Vec::with_capacity(batch_rows));
            if !deliver(full).await {
                return Ok(());
            }
        }
    }
    if !reader.ended {
        return Err(malformed("the copy ended without its trailer"));
    }
    if !batch.is_empty() {
        deliver(batch).await;
    }
    Ok(())
}

/// The binary copy format's signature, flags and header extension length.
const SIGNATURE: &[u8] = b"PGCOPY\n\xff\r\n\0";
const HEADER_LEN: usize = SIGNATURE.len() + 4 + 4;

/// Microseconds from the Unix epoch to Postgres' (2000-01-01).
const POSTGRES_EPOCH_MICROS: i64 = 946_684_800_000_000;

/// Splits copy data into rows: whole rows are parsed straight from each message; a row split
/// across messages waits in `pending`.
#[derive(Default)]
struct CopyReader {
    pending: Vec<u8>,
    header_read: bool,
    ended: bool,
}

impl CopyReader {
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<ExportedOutcome>) -> Result<(), StoreError> {
        if self.pending.is_empty() {
            let used = self.parse(chunk, out)?;
            self.pending.extend_from_slice(&chunk[used..]);
        } else {
            let mut pending = std::mem::take(&mut self.pending);
            pending.extend_from_slice(chunk);
            let used = self.parse(&pending, out)?;
            pending.drain(..used);
            self.pending = pending;
        }
        Ok(())
    }

    /// Parses the whole rows at the start of `data`; returns the bytes they took.
    fn parse(&mut self, data: &[u8], out: &mut Vec<ExportedOutcome>) -> Result<usize, StoreError> {
        let mut at = 0;
        if !self.header_read {
            if data.len() < HEADER_LEN {
                return Ok(0);
            }
            if &data[..SIGNATURE.len()] != SIGNATURE {
                return Err(malformed("no binary copy signature"));
            }
            let extension = be_u32(&data[SIGNATURE.len() + 4..]) as usize;
            if data.len() < HEADER_LEN + extension {
                return Ok(0);
            }
            at = HEADER_LEN + extension;
            self.header_read = true;
        }
        while at < data.len() {
            if self.ended {
                return Err(malformed("data after the trailer"));
            }
            match parse_outcome(&data[at..])? {
                Parsed::Row(row, len) => {
                    out.push(row);
                    at += len;
                }
                Parsed::Trailer => {
                    self.ended = true;
                    at += 2;
                }
                Parsed::Incomplete => break,
            }
        }
        Ok(at)
    }
}

enum Parsed {
    Row(ExportedOutcome, usize),
    Trailer,
    Incomplete,
}

fn malformed(what: &str) -> StoreError {
    StoreError::Database(sqlx::Error::Protocol(format!("export copy: {what}")))
}

fn be_u32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// The fields of one row, in order: each is `None` for NULL.
struct Fields<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    /// The next field, `Err(())` when the row is not whole yet.
    fn next(&mut self) -> Result<Option<&'a [u8]>, ()> {
        let len_bytes = self.data.get(self.at..self.at + 4).ok_or(())?;
        let len = i32::from_be_bytes(len_bytes.try_into().expect("4 bytes"));
        self.at += 4;
        if len < 0 {
            return Ok(None);
        }
        let field = self.data.get(self.at..self.at + len as usize).ok_or(())?;
        self.at += len as usize;
        Ok(Some(field))
    }
}

fn int2(f: &[u8]) -> Result<i16, StoreError> {
    Ok(i16::from_be_bytes(
        f.try_into().map_err(|_| malformed("int2"))?,
    ))
}

fn int4(f: &[u8]) -> Result<i32, StoreError> {
    Ok(i32::from_be_bytes(
        f.try_into().map_err(|_| malformed("int4"))?,
    ))
}

fn time(f: &[u8]) -> Result<chrono::DateTime<chrono::Utc>, StoreError> {
    let micros = i64::from_be_bytes(f.try_into().map_err(|_| malformed("timestamptz"))?);
    chrono::DateTime::from_timestamp_micros(micros.saturating_add(POSTGRES_EPOCH_MICROS))
        .ok_or_else(|| malformed("timestamptz out of range"))
}

fn text(f: &[u8]) -> Result<String, StoreError> {
    String::from_utf8(f.to_vec()).map_err(|_| malformed("text"))
}

/// A one-dimensional array of int2 or int4 without NULLs (`width` bytes each).
fn int_array(f: &[u8], width: usize) -> Result<Vec<i32>, StoreError> {
    if f.len() < 12 {
        return Err(malformed("array header"));
    }
    let ndim = be_u32(f);
    if ndim == 0 {
        return Ok(Vec::new());
    }
    if ndim != 1 || f.len() < 20 {
        return Err(malformed("array dimensions"));
    }
    let n = be_u32(&f[12..]) as usize;
    let mut out = Vec::with_capacity(n);
    let mut at = 20;
    for _ in 0..n {
        let len = f
            .get(at..at + 4)
            .map(be_u32)
            .ok_or_else(|| malformed("array"))?;
        at += 4;
        if len as usize != width {
            return Err(malformed("array element"));
        }
        let e = &f.get(at..at + width).ok_or_else(|| malformed("array"))?;
        out.push(if width == 2 {
            int2(e)? as i32
        } else {
            int4(e)?
        });
        at += width;
    }
    Ok(out)
}

/// One row at the start of `data` (the columns of [`COLUMNS`]).
fn parse_outcome(data: &[u8]) -> Result<Parsed, StoreError> {
    let Some(count) = data.get(..2) else {
        return Ok(Parsed::Incomplete);
    };
    let count = i16::from_be_bytes([count[0], count[1]]);
    if count == -1 {
        return Ok(Parsed::Trailer);
    }
    if count != 14 {
        return Err(malformed("a row of 14 fields"));
    }
    let mut fields = Fields { data, at: 2 };
    let mut raw: [Option<&[u8]>; 14] = [None; 14];
    for field in &mut raw {
        match fields.next() {
            Ok(f) => *field = f,
            Err(()) => return Ok(Parsed::Incomplete),
        }
    }
    fn required(f: Option<&[u8]>) -> Result<&[u8], StoreError> {
        f.ok_or_else(|| malformed("a NULL in a NOT NULL column"))
    }
    let duel_id = uuid::Uuid::from_slice(required(raw[0])?).map_err(|_| malformed("uuid"))?;
    let rankers = raw[3].map(|f| int_array(f, 4)).transpose()?;
    let results = raw[4]
        .map(|f| int_array(f, 2).map(|r| r.into_iter().map(|v| v as i16).collect()))
        .transpose()?;
    let row = ExportedOutcome {
        duel_id,
        first: int4(required(raw[1])?)?,
        second: int4(required(raw[2])?)?,
        set: rankers.zip(results),
        winner: raw[5].map(int4).transpose()?,
        issued_at: time(required(raw[6])?)?,
        recorded_at: time(required(raw[7])?)?,
        unit_hash: raw[8].map(<[u8]>::to_vec),
        segment: raw[9].map(int2).transpose()?,
        posted_as: raw[10].map(int2).transpose()?,
        posted: raw[11].map(text).transpose()?,
        method: raw[12].map(text).transpose()?,
        chosen_by: raw[13].map(int2).transpose()?,
    };
    Ok(Parsed::Row(row, fields.at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(out: &mut Vec<u8>, f: Option<&[u8]>) {
        match f {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(f) => {
                out.extend_from_slice(&(f.len() as i32).to_be_bytes());
                out.extend_from_slice(f);
            }
        }
    }

    fn array(values: &[i32], width: usize) -> Vec<u8> {
        let mut a = Vec::new();
        for v in [
            1u32,
            0,
            if width == 2 { 21 } else { 23 },
            values.len() as u32,
            1,
        ] {
            a.extend_from_slice(&v.to_be_bytes());
        }
        for &v in values {
            a.extend_from_slice(&(width as u32).to_be_bytes());
            if width == 2 {
                a.extend_from_slice(&(v as i16).to_be_bytes());
            } else {
                a.extend_from_slice(&v.to_be_bytes());
            }
        }
        a
    }

    fn copy_data(rows: usize) -> Vec<u8> {
        let mut out = SIGNATURE.to_vec();
        out.extend_from_slice(&[0; 8]);
        for i in 0..rows {
            out.extend_from_slice(&14i16.to_be_bytes());
            field(&mut out, Some(&[i as u8; 16]));
            field(&mut out, Some(&1i32.to_be_bytes()));
            field(&mut out, Some(&2i32.to_be_bytes()));
            let set = i % 2 == 1;
            field(&mut out, set.then(|| array(&[1, 2, 0], 4)).as_deref());
            field(&mut out, set.then(|| array(&[1, -1, 0], 2)).as_deref());
            field(
                &mut out,
                (!set).then(|| 2i32.to_be_bytes()).as_ref().map(|b| &b[..]),
            );
            field(&mut out, Some(&0i64.to_be_bytes()));
            field(&mut out, Some(&1_500_000i64.to_be_bytes()));
            field(&mut out, Some(&[0xab; 16]));
            field(&mut out, None);
            field(&mut out, Some(&2i16.to_be_bytes()));
            field(&mut out, Some(br#"{"a": 1}"#));
            field(&mut out, None);
            field(&mut out, Some(&1i16.to_be_bytes()));
        }
        out.extend_from_slice(&(-1i16).to_be_bytes());
        out
    }

    #[test]
    fn rows_split_anywhere_across_messages_read_the_same() {
        let data = copy_data(5);
        for size in [1, 3, 7, 64, data.len()] {
            let mut reader = CopyReader::default();
            let mut rows = Vec::new();
            for chunk in data.chunks(size) {
                reader.feed(chunk, &mut rows).unwrap();
            }
            assert!(reader.ended, "{size}");
            assert_eq!(rows.len(), 5, "{size}");
            let r = &rows[1];
            assert_eq!(r.duel_id, uuid::Uuid::from_bytes([1; 16]));
            assert_eq!((r.first, r.second, r.winner), (1, 2, None));
            assert_eq!(r.set, Some((vec![1, 2, 0], vec![1, -1, 0])));
            assert_eq!(rows[0].winner, Some(2));
            assert_eq!(r.issued_at.to_rfc3339(), "2000-01-01T00:00:00+00:00");
            assert_eq!(
                r.recorded_at.timestamp_micros(),
                POSTGRES_EPOCH_MICROS + 1_500_000
            );
            assert_eq!(r.unit_hash.as_deref(), Some(&[0xab; 16][..]));
            assert_eq!(
                (r.segment, r.posted_as, r.posted.as_deref(), r.chosen_by),
                (None, Some(2), Some(r#"{"a": 1}"#), Some(1))
            );
        }
    }

    #[test]
    fn a_bad_signature_or_row_is_an_error() {
        let mut data = copy_data(1);
        data[0] = b'X';
        assert!(CopyReader::default().feed(&data, &mut Vec::new()).is_err());
        let mut data = copy_data(1);
        data[HEADER_LEN + 1] = 3;
        assert!(CopyReader::default().feed(&data, &mut Vec::new()).is_err());
    }
}
