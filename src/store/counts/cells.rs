//! Reading every count table of one experiment in one statement: the win and tie counts, each
//! other metric's, each segment's (with the segment labels) and the unit-level wins, and its
//! rankers. One round trip where one statement per table took nine; a reload of a snapshot pays
//! it ([`crate::store::state::load_consistent`]), and replicas that do not own an experiment reload
//! it at every refresh while its version moves.

use std::collections::BTreeMap;

use sqlx::PgConnection;

use super::metrics::MetricCounts;
use super::segments::SegmentRows;
use crate::store::StoreError;
use crate::store::experiments::RankerRow;

/// Every count of one experiment as stored.
#[derive(Debug, Default)]
pub struct Cells {
    /// `(winner, loser, wins)`
    pub wins: Vec<(i32, i32, i64)>,
    /// `(a, b, ties)` with a <= b
    pub ties: Vec<(i32, i32, i64)>,
    /// Every non-primary metric's counts, by metric.
    pub metrics: BTreeMap<String, MetricCounts>,
    /// The segment labels and each segment's counts.
    pub segments: SegmentRows,
    /// The unit-level win cells `(winner, loser, wins)`.
    pub unit_wins: Vec<(i32, i32, i64)>,
    /// The rankers, by index.
    pub rankers: Vec<RankerRow>,
}

/// Which table a row of [`READ`] comes from.
const WINS: i16 = 0;
const TIES: i16 = 1;
const METRIC_WINS: i16 = 2;
const METRIC_TIES: i16 = 3;
const SEGMENT_LABELS: i16 = 4;
const SEGMENT_WINS: i16 = 5;
const SEGMENT_TIES: i16 = 6;
const UNIT_WINS: i16 = 7;
const RANKERS: i16 = 8;

/// Each row: its table, a text (the metric, the segment's label or the ranker's name), the
/// segment index, the cell's two rankers (a ranker's index and whether it is retired, 1 or 0)
/// and its count. Unused columns are NULL.
const READ: &str = "
    SELECT 0::smallint, NULL::text, NULL::smallint, winner, loser, wins
      FROM win_counts WHERE experiment_id = $1
    UNION ALL SELECT 1::smallint, NULL, NULL, a, b, ties
      FROM tie_counts WHERE experiment_id = $1
    UNION ALL SELECT 2::smallint, metric, NULL, winner, loser, wins
      FROM metric_win_counts WHERE experiment_id = $1
    UNION ALL SELECT 3::smallint, metric, NULL, a, b, ties
      FROM metric_tie_counts WHERE experiment_id = $1
    UNION ALL SELECT 4::smallint, label, idx, NULL, NULL, NULL
      FROM experiment_segments WHERE experiment_id = $1
    UNION ALL SELECT 5::smallint, NULL, segment, winner, loser, wins
      FROM segment_win_counts WHERE experiment_id = $1
    UNION ALL SELECT 6::smallint, NULL, segment, a, b, ties
      FROM segment_tie_counts WHERE experiment_id = $1
    UNION ALL SELECT 7::smallint, NULL, NULL, winner, loser, wins
      FROM unit_win_counts WHERE experiment_id = $1
    UNION ALL SELECT 8::smallint, name, NULL, idx, (retired_at IS NOT NULL)::int, NULL
      FROM rankers WHERE experiment_id = $1";

type CellRow = (
    i16,
    Option<String>,
    Option<i16>,
    Option<i32>,
    Option<i32>,
    Option<i64>,
);

/// Reads every count of the experiment (run it in the transaction that reads the state, so the
/// counts belong to it).
pub async fn read(conn: &mut PgConnection, experiment: i64) -> Result<Cells, StoreError> {
    let rows: Vec<CellRow> = sqlx::query_as(READ)
        .bind(experiment)
        .fetch_all(conn)
        .await?;
    let mut out = Cells::default();
    for (table, text, segment, x, y, n) in rows {
        let cell = || -> Result<(i32, i32, i64), StoreError> {
            match (x, y, n) {
                (Some(x), Some(y), Some(n)) => Ok((x, y, n)),
                // The count tables' columns are NOT NULL.
                _ => Err(StoreError::Database(sqlx::Error::Protocol(format!(
                    "a count cell of experiment {experiment} has a NULL column"
                )))),
            }
        };
        let text = || text.clone().unwrap_or_default();
        let seg = || segment.unwrap_or_default();
        match table {
            WINS => out.wins.push(cell()?),
            TIES => out.ties.push(cell()?),
            METRIC_WINS => out.metrics.entry(text()).or_default().wins.push(cell()?),
            METRIC_TIES => out.metrics.entry(text()).or_default().ties.push(cell()?),
            SEGMENT_LABELS => out.segments.labels.push((seg(), text())),
            SEGMENT_WINS => {
                let (w, l, n) = cell()?;
                out.segments.wins.push((seg(), w, l, n));
            }
            SEGMENT_TIES => {
                let (a, b, n) = cell()?;
                out.segments.ties.push((seg(), a, b, n));
            }
            UNIT_WINS => out.unit_wins.push(cell()?),
            RANKERS => match (x, y) {
                (Some(idx), Some(retired)) => out.rankers.push(RankerRow {
                    idx,
                    name: text(),
                    retired: retired != 0,
                }),
                _ => {
                    return Err(StoreError::Database(sqlx::Error::Protocol(format!(
                        "a ranker of experiment {experiment} has a NULL column"
                    ))));
                }
            },
            _ => unreachable!("the statement tags rows 0 to 8"),
        }
    }
    // By index, as the labels and the rankers are numbered.
    out.segments.labels.sort_unstable_by_key(|(idx, _)| *idx);
    out.rankers.sort_unstable_by_key(|r| r.idx);
    Ok(out)
}
