//! Adding to the count tables: one upsert for all of them. Each table counts cells of two
//! rankers per experiment (a winner over a loser, or a tie with a <= b), some further keyed by a
//! metric or a segment; every count is added in the transaction that applies the outcomes.

use sqlx::{Postgres, Transaction};

use crate::store::StoreError;

/// A count table: its name, the column keying its cells beyond the experiment (if any), its two
/// ranker columns and its count column.
pub struct CountTable {
    pub name: &'static str,
    pub key: Option<&'static str>,
    pub rankers: [&'static str; 2],
    pub count: &'static str,
}

pub const WIN_COUNTS: CountTable = CountTable {
    name: "win_counts",
    key: None,
    rankers: ["winner", "loser"],
    count: "wins",
};
pub const TIE_COUNTS: CountTable = CountTable {
    name: "tie_counts",
    key: None,
    rankers: ["a", "b"],
    count: "ties",
};
pub const METRIC_WIN_COUNTS: CountTable = CountTable {
    name: "metric_win_counts",
    key: Some("metric"),
    rankers: ["winner", "loser"],
    count: "wins",
};
pub const METRIC_TIE_COUNTS: CountTable = CountTable {
    name: "metric_tie_counts",
    key: Some("metric"),
    rankers: ["a", "b"],
    count: "ties",
};
pub const SEGMENT_WIN_COUNTS: CountTable = CountTable {
    name: "segment_win_counts",
    key: Some("segment"),
    rankers: ["winner", "loser"],
    count: "wins",
};
pub const SEGMENT_TIE_COUNTS: CountTable = CountTable {
    name: "segment_tie_counts",
    key: Some("segment"),
    rankers: ["a", "b"],
    count: "ties",
};
pub const UNIT_WIN_COUNTS: CountTable = CountTable {
    name: "unit_win_counts",
    key: None,
    rankers: ["winner", "loser"],
    count: "wins",
};

/// The value of a table's key column for the cells added.
pub enum Key<'a> {
    /// The table has no key column.
    None,
    /// One metric, for every cell.
    Metric(&'a str),
    /// Each cell's segment, in the order of the cells.
    Segments(&'a [i16]),
}

/// The upsert of an unkeyed `table` as one part of a larger statement (a data-modifying `WITH`
/// query) that writes several experiments: the cells' columns in `$cells` (the number of the
/// write each cell belongs to, `bigint[]`) and `$cells + 1` to `$cells + 3` (`int[]`, `int[]`,
/// `bigint[]`, as [`Columns`] binds them); `written` names a query of the writes that happen, by
/// number `i` with their `experiment_id`. Only their cells are added, to their experiment; empty
/// arrays add nothing. What [`add`] writes, without a round trip of its own.
pub fn upsert_part(table: &CountTable, cells: usize, written: &str) -> String {
    assert!(table.key.is_none(), "{} is keyed", table.name);
    let CountTable {
        name,
        rankers: [x, y],
        count,
        ..
    } = table;
    let (c1, c2, c3) = (cells + 1, cells + 2, cells + 3);
    format!(
        "INSERT INTO {name} (experiment_id, {x}, {y}, {count})
         SELECT w.experiment_id, t.x, t.y, t.n
         FROM UNNEST(${cells}::bigint[], ${c1}::int[], ${c2}::int[], ${c3}::bigint[])
              AS t(i, x, y, n)
         JOIN {written} w ON w.i = t.i
         ON CONFLICT (experiment_id, {x}, {y})
         DO UPDATE SET {count} = {name}.{count} + EXCLUDED.{count}"
    )
}

/// The cells of several writes as [`upsert_part`] binds them: each cell's write, and its
/// `(x, y, n)`.
#[derive(Default)]
pub struct Columns {
    pub write: Vec<i64>,
    pub x: Vec<i32>,
    pub y: Vec<i32>,
    pub n: Vec<i64>,
}

impl Columns {
    /// Adds the cells of write number `write`.
    pub fn add(&mut self, write: i64, cells: &[(i32, i32, i64)]) {
        for &(x, y, n) in cells {
            self.write.push(write);
            self.x.push(x);
            self.y.push(y);
            self.n.push(n);
        }
    }
}

/// The columns of `(x, y, n)` cells, as [`add`] binds them.
fn columns(cells: &[(i32, i32, i64)]) -> (Vec<i32>, Vec<i32>, Vec<i64>) {
    let mut xs = Vec::with_capacity(cells.len());
    let mut ys = Vec::with_capacity(cells.len());
    let mut ns = Vec::with_capacity(cells.len());
    for &(a, b, n) in cells {
        xs.push(a);
        ys.push(b);
        ns.push(n);
    }
    (xs, ys, ns)
}

/// Adds `(x, y, n)` cells to one experiment's counts in `table`.
pub async fn add(
    tx: &mut Transaction<'_, Postgres>,
    table: &CountTable,
    experiment: i64,
    key: Key<'_>,
    cells: &[(i32, i32, i64)],
) -> Result<(), StoreError> {
    if cells.is_empty() {
        return Ok(());
    }
    let CountTable {
        name,
        rankers: [x, y],
        count,
        ..
    } = table;
    let (key_column, key_value, key_unnest) = match (table.key, &key) {
        (Some(column), Key::Metric(_)) => (format!("{column}, "), "$5::text, ", ""),
        (Some(column), Key::Segments(_)) => (format!("{column}, "), "k, ", ", $5::smallint[]"),
        (None, Key::None) => (String::new(), "", ""),
        _ => unreachable!("{name} is keyed by {:?}", table.key),
    };
    let kname = if key_unnest.is_empty() { "" } else { ", k" };
    let sql = format!(
        "INSERT INTO {name} (experiment_id, {key_column}{x}, {y}, {count})
         SELECT $1, {key_value}x, y, n
         FROM UNNEST($2::int[], $3::int[], $4::bigint[]{key_unnest}) AS t(x, y, n{kname})
         ON CONFLICT (experiment_id, {key_column}{x}, {y})
         DO UPDATE SET {count} = {name}.{count} + EXCLUDED.{count}"
    );
    let (xs, ys, ns) = columns(cells);
    let query = sqlx::query(&sql)
        .bind(experiment)
        .bind(&xs)
        .bind(&ys)
        .bind(&ns);
    let query = match key {
        Key::None => query,
        Key::Metric(metric) => query.bind(metric),
        Key::Segments(segments) => query.bind(segments),
    };
    query.execute(&mut **tx).await?;
    Ok(())
}
