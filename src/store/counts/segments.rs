//! Segment labels of experiments and their win and tie counts.

use sqlx::{PgConnection, PgPool, Postgres, Transaction};

use super::upsert::{self as count_upsert, Key};
use crate::store::StoreError;

/// An experiment's segments as stored.
#[derive(Debug, Clone, Default)]
pub struct SegmentRows {
    /// `(index, label)`, by index.
    pub labels: Vec<(i16, String)>,
    /// `(segment, winner, loser, wins)`
    pub wins: Vec<(i16, i32, i32, i64)>,
    /// `(segment, a, b, ties)` with a <= b
    pub ties: Vec<(i16, i32, i32, i64)>,
}

/// What registering a label found.
pub enum Registered {
    /// The label's index, and every label of the experiment (index, label).
    Known(i16, Vec<(i16, String)>),
    /// The experiment has `max_segments` labels already and this is not one of them.
    Full(i32),
    /// No such live experiment.
    NoExperiment,
}

/// The label's index, registering it if the experiment has room. Registrations of one
/// experiment are serialised by a lock on its row, so the limit holds across replicas.
pub async fn register(
    pool: &PgPool,
    experiment: i64,
    label: &str,
) -> Result<Registered, StoreError> {
    let mut tx = pool.begin().await?;
    let max: Option<i32> = sqlx::query_scalar(
        "SELECT max_segments FROM experiments WHERE id = $1 AND deleted_at IS NULL
         FOR NO KEY UPDATE",
    )
    .bind(experiment)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(max) = max else {
        return Ok(Registered::NoExperiment);
    };
    let mut labels = labels(&mut tx, experiment).await?;
    let idx = match labels.iter().find(|(_, l)| l == label) {
        Some((i, _)) => *i,
        None if labels.len() >= max as usize => return Ok(Registered::Full(max)),
        None => {
            let idx = labels.len() as i16;
            sqlx::query(
                "INSERT INTO experiment_segments (experiment_id, idx, label) VALUES ($1, $2, $3)",
            )
            .bind(experiment)
            .bind(idx)
            .bind(label)
            .execute(&mut *tx)
            .await?;
            labels.push((idx, label.to_string()));
            idx
        }
    };
    tx.commit().await?;
    Ok(Registered::Known(idx, labels))
}

/// An experiment's labels, by index.
pub async fn labels(
    conn: &mut PgConnection,
    experiment: i64,
) -> Result<Vec<(i16, String)>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT idx, label FROM experiment_segments WHERE experiment_id = $1 ORDER BY idx",
    )
    .bind(experiment)
    .fetch_all(conn)
    .await?)
}

/// Adds segment win cells `(segment, winner, loser, n)` and tie cells `(segment, a, b, n)`
/// (a <= b), in the transaction that applies the outcomes.
pub async fn add_counts(
    tx: &mut Transaction<'_, Postgres>,
    experiment: i64,
    wins: &[(i16, i32, i32, i64)],
    ties: &[(i16, i32, i32, i64)],
) -> Result<(), StoreError> {
    for (table, cells) in [
        (&count_upsert::SEGMENT_WIN_COUNTS, wins),
        (&count_upsert::SEGMENT_TIE_COUNTS, ties),
    ] {
        let segments: Vec<i16> = cells.iter().map(|c| c.0).collect();
        let cells: Vec<(i32, i32, i64)> = cells.iter().map(|c| (c.1, c.2, c.3)).collect();
        count_upsert::add(tx, table, experiment, Key::Segments(&segments), &cells).await?;
    }
    Ok(())
}
