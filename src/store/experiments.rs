//! Queries on experiments and their rankers. Every change that affects what replicas cache bumps
//! the experiment's state version, so one poll of versions tells a replica what to reload.

use serde_json::Value;
use sqlx::{PgPool, Postgres, Row, Transaction};

use super::StoreError;

/// An experiment's settings as stored (everything but the bandit state).
#[derive(Debug, Clone)]
pub struct ExperimentRow {
    pub id: i64,
    /// The project it belongs to.
    pub project_id: i64,
    pub name: String,
    pub status: String,
    pub policy: Value,
    pub tie_rule: String,
    pub interleaving: Value,
    /// Rankers compared per query: 2 for a duel, more for multileaving.
    pub rankers_per_query: i32,
    pub attribution_window_secs: i64,
    pub seed: i64,
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// The origins whose pages may post clicks without a key; `None` when browser clicks are off.
    pub browser_click_origins: Option<Vec<String>>,
    /// The decision settings; `None` for the defaults.
    pub decision: Option<Value>,
    /// `{"min_outcomes": N}`; `None` when the experiment does not conclude itself.
    pub stop_rule: Option<Value>,
    /// Where its events are posted; the secret is read only by the delivery task.
    pub webhook_url: Option<String>,
    /// The decision at the conclusion (set when the experiment concluded).
    pub final_decision: Option<Value>,
    /// The winners the last `decided` or `champion_changed` event named; `None` before `decided`.
    pub announced_winners: Option<Vec<i32>>,
    /// The metrics and the primary one; `None` for the default (`click` only).
    pub metrics: Option<Value>,
    pub primary_metric: Option<String>,
    /// The unit settings; `None` for the defaults.
    pub units: Option<Value>,
    /// The most distinct segment labels accepted.
    pub max_segments: i32,
}

/// A ranker of an experiment.
#[derive(Debug, Clone)]
pub struct RankerRow {
    pub idx: i32,
    pub name: String,
    pub retired: bool,
}

/// What creating an experiment writes.
pub struct NewExperiment<'a> {
    pub project_id: i64,
    pub name: &'a str,
    pub rankers: &'a [String],
    pub policy: Value,
    pub tie_rule: &'a str,
    pub interleaving: Value,
    pub rankers_per_query: i32,
    pub attribution_window_secs: i64,
    pub seed: i64,
    pub policy_state: Value,
    pub browser_click_origins: Option<&'a [String]>,
    pub decision: Value,
    pub stop_rule: Option<Value>,
    /// `(url, secret)`
    pub webhook: Option<(&'a str, &'a str)>,
    pub metrics: Option<Value>,
    pub primary_metric: Option<String>,
    pub units: Option<Value>,
    pub max_segments: i32,
}

pub async fn insert(pool: &PgPool, new: NewExperiment<'_>) -> Result<i64, StoreError> {
    let mut tx = pool.begin().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO experiments
             (name, status, policy, tie_rule, interleaving, attribution_window_secs, seed,
              rankers_per_query, browser_click_origins, decision, stop_rule, webhook_url,
              webhook_secret, metrics, primary_metric, units, max_segments, project_id)
         VALUES ($1, 'running', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
                 $17)
         RETURNING id",
    )
    .bind(new.name)
    .bind(&new.policy)
    .bind(new.tie_rule)
    .bind(&new.interleaving)
    .bind(new.attribution_window_secs)
    .bind(new.seed)
    .bind(new.rankers_per_query)
    .bind(new.browser_click_origins)
    .bind(&new.decision)
    .bind(&new.stop_rule)
    .bind(new.webhook.map(|w| w.0))
    .bind(new.webhook.map(|w| w.1))
    .bind(&new.metrics)
    .bind(&new.primary_metric)
    .bind(&new.units)
    .bind(new.max_segments)
    .bind(new.project_id)
    .fetch_one(&mut *tx)
    .await?;
    let idx: Vec<i32> = (0..new.rankers.len() as i32).collect();
    sqlx::query(
        "INSERT INTO rankers (experiment_id, idx, name)
         SELECT $1, * FROM UNNEST($2::int[], $3::text[])",
    )
    .bind(id)
    .bind(&idx)
    .bind(new.rankers)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO experiment_state (experiment_id, version, policy_state) VALUES ($1, 1, $2)",
    )
    .bind(id)
    .bind(&new.policy_state)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(id)
}

fn experiment_from_row(row: &sqlx::postgres::PgRow) -> Result<ExperimentRow, sqlx::Error> {
    Ok(ExperimentRow {
        id: row.try_get("id")?,
        project_id: row.try_get("project_id")?,
        name: row.try_get("name")?,
        status: row.try_get("status")?,
        policy: row.try_get("policy")?,
        tie_rule: row.try_get("tie_rule")?,
        interleaving: row.try_get("interleaving")?,
        rankers_per_query: row.try_get("rankers_per_query")?,
        attribution_window_secs: row.try_get("attribution_window_secs")?,
        seed: row.try_get("seed")?,
        created_at: row.try_get("created_at")?,
        browser_click_origins: row.try_get("browser_click_origins")?,
        decision: row.try_get("decision")?,
        stop_rule: row.try_get("stop_rule")?,
        webhook_url: row.try_get("webhook_url")?,
        final_decision: row.try_get("final_decision")?,
        announced_winners: row.try_get("announced_winners")?,
        metrics: row.try_get("metrics")?,
        primary_metric: row.try_get("primary_metric")?,
        units: row.try_get("units")?,
        max_segments: row.try_get("max_segments")?,
    })
}

const EXPERIMENT_COLUMNS: &str = "id, project_id, name, status, policy, tie_rule, interleaving, rankers_per_query, attribution_window_secs, \
     seed, created_at, browser_click_origins, decision, stop_rule, webhook_url, final_decision, \
     announced_winners, metrics, primary_metric, units, max_segments";

/// A live (not deleted) experiment.
pub async fn get<'e, E: sqlx::PgExecutor<'e>>(
    db: E,
    id: i64,
) -> Result<Option<ExperimentRow>, StoreError> {
    let row = sqlx::query(&format!(
        "SELECT {EXPERIMENT_COLUMNS} FROM experiments WHERE id = $1 AND deleted_at IS NULL"
    ))
    .bind(id)
    .fetch_optional(db)
    .await?;
    Ok(row.as_ref().map(experiment_from_row).transpose()?)
}

/// Live experiments with id > `after`, oldest first: of project `only`, or of every project
/// when `None`.
pub async fn list(
    pool: &PgPool,
    after: i64,
    limit: i64,
    only: Option<i64>,
) -> Result<Vec<ExperimentRow>, StoreError> {
    let rows = sqlx::query(&format!(
        "SELECT {EXPERIMENT_COLUMNS} FROM experiments
         WHERE deleted_at IS NULL AND id > $1 AND ($3::bigint IS NULL OR project_id = $3)
         ORDER BY id LIMIT $2"
    ))
    .bind(after)
    .bind(limit)
    .bind(only)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .iter()
        .map(experiment_from_row)
        .collect::<Result<_, _>>()?)
}

/// Locks the experiment's state row for the rest of the transaction and returns its version,
/// or `None` if the experiment does not exist or was deleted.
pub async fn lock_state(
    tx: &mut Transaction<'_, Postgres>,
    id: i64,
) -> Result<Option<i64>, StoreError> {
    let version = sqlx::query_scalar(
        "SELECT s.version FROM experiment_state s JOIN experiments e ON e.id = s.experiment_id
         WHERE s.experiment_id = $1 AND e.deleted_at IS NULL FOR UPDATE OF s",
    )
    .bind(id)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(version)
}

/// Bumps the version after a change that replicas must reload.
pub async fn bump_version(
    tx: &mut Transaction<'_, Postgres>,
    id: i64,
    policy_state: Option<&Value>,
) -> Result<i64, StoreError> {
    let version = sqlx::query_scalar(
        "UPDATE experiment_state SET version = version + 1, updated_at = now(),
                policy_state = COALESCE($2, policy_state)
         WHERE experiment_id = $1 RETURNING version",
    )
    .bind(id)
    .bind(policy_state)
    .fetch_one(&mut **tx)
    .await?;
    Ok(version)
}

pub async fn set_status(
    tx: &mut Transaction<'_, Postgres>,
    id: i64,
    status: &str,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE experiments SET status = $2 WHERE id = $1")
        .bind(id)
        .bind(status)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Stores the decision an experiment concluded with: from now on it is the experiment's decision.
pub async fn set_final_decision(
    tx: &mut Transaction<'_, Postgres>,
    id: i64,
    decision: &Value,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE experiments SET final_decision = $2 WHERE id = $1")
        .bind(id)
        .bind(decision)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Records the winners a `decided` or `champion_changed` event announced.
pub async fn set_announced_winners(
    tx: &mut Transaction<'_, Postgres>,
    id: i64,
    winners: &[i32],
) -> Result<(), StoreError> {
    sqlx::query("UPDATE experiments SET announced_winners = $2 WHERE id = $1")
        .bind(id)
        .bind(winners)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Sets the origins whose pages may post clicks without a key (`None` turns browser clicks off).
pub async fn set_browser_click_origins(
    tx: &mut Transaction<'_, Postgres>,
    id: i64,
    origins: Option<&[String]>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE experiments SET browser_click_origins = $2 WHERE id = $1")
        .bind(id)
        .bind(origins)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Sets the decision settings (they change how duels are chosen: bump the version).
pub async fn set_decision(
    tx: &mut Transaction<'_, Postgres>,
    id: i64,
    decision: &Value,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE experiments SET decision = $2 WHERE id = $1")
        .bind(id)
        .bind(decision)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Sets the stop rule (`None`: the experiment does not conclude itself).
pub async fn set_stop_rule(
    tx: &mut Transaction<'_, Postgres>,
    id: i64,
    stop_rule: Option<&Value>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE experiments SET stop_rule = $2 WHERE id = $1")
        .bind(id)
        .bind(stop_rule)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Sets the webhook as `(url, secret)`, or removes it.
pub async fn set_webhook(
    tx: &mut Transaction<'_, Postgres>,
    id: i64,
    webhook: Option<(&str, &str)>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE experiments SET webhook_url = $2, webhook_secret = $3 WHERE id = $1")
        .bind(id)
        .bind(webhook.map(|w| w.0))
        .bind(webhook.map(|w| w.1))
        .execute(&mut **tx)
        .await?;
    Ok(())
}

pub async fn mark_deleted(tx: &mut Transaction<'_, Postgres>, id: i64) -> Result<(), StoreError> {
    sqlx::query("UPDATE experiments SET deleted_at = now() WHERE id = $1")
        .bind(id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

pub async fn insert_ranker(
    tx: &mut Transaction<'_, Postgres>,
    id: i64,
    idx: i32,
    name: &str,
) -> Result<(), StoreError> {
    sqlx::query("INSERT INTO rankers (experiment_id, idx, name) VALUES ($1, $2, $3)")
        .bind(id)
        .bind(idx)
        .bind(name)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

pub async fn retire_ranker(
    tx: &mut Transaction<'_, Postgres>,
    id: i64,
    idx: i32,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE rankers SET retired_at = now() WHERE experiment_id = $1 AND idx = $2")
        .bind(id)
        .bind(idx)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Current versions of every live experiment: what a replica polls to find changes.
pub async fn versions(
    pool: &PgPool,
) -> Result<Vec<(i64, i64, chrono::DateTime<chrono::Utc>)>, StoreError> {
    let rows = sqlx::query_as(
        "SELECT s.experiment_id, s.version, s.updated_at FROM experiment_state s
         JOIN experiments e ON e.id = s.experiment_id WHERE e.deleted_at IS NULL",
    )
    .fetch_all(pool)
    .await?;
    Ok(rows)
}

/// The browser-click origins of the given live experiments, with their state versions: what a
/// replica reads for the experiments whose version changed since it last looked.
pub async fn browser_click_origins(
    pool: &PgPool,
    ids: &[i64],
) -> Result<Vec<(i64, i64, Option<Vec<String>>)>, StoreError> {
    let rows = sqlx::query_as(
        "SELECT e.id, s.version, e.browser_click_origins FROM experiments e
         JOIN experiment_state s ON s.experiment_id = e.id
         WHERE e.id = ANY($1) AND e.deleted_at IS NULL",
    )
    .bind(ids)
    .fetch_all(pool)
    .await?;
    Ok(rows)
}
