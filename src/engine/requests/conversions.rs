//! `POST /v1/conversions`: later events (a purchase, a booking) on a document of a shown
//! interleaving, for one of the experiment's conversion metrics. Checked against the signed
//! interleaving token (the document must have been shown, the metric declared, the metric's
//! window still open by the service clock) and acknowledged once durable, exactly once per
//! (duel, metric, event id). The owner applies them later (`apply::metric_outcomes`).

use crate::api::{ConversionInput, ConversionRecord, ErrorCode};
use crate::engine::model::DuelRankers;
use crate::engine::runtime::MAX_OFFSET_SECS;
use crate::engine::{Engine, EngineError};
use crate::store::conversions::{self as store_conversions, Inserted, NewConversion};

/// Most conversions in one batch.
pub const MAX_CONVERSION_BATCH: usize = 1_000;
/// Longest event id, in bytes.
pub const MAX_EVENT_ID_LEN: usize = 200;
/// Largest absolute value accepted: an amount of up to a billion in any unit (ten million in
/// cents), so that a value credits what a purchase could be worth and no more.
pub const MAX_VALUE: f64 = 1e9;

impl ConversionInput {
    /// The checks that need no token: a usable event id and value.
    fn check(&self) -> Result<(), EngineError> {
        if self.event_id.is_empty()
            || self.event_id.len() > MAX_EVENT_ID_LEN
            || self.event_id.chars().any(char::is_control)
        {
            return Err(EngineError::invalid(
                ErrorCode::InvalidConversion,
                format!(
                    "event_id must be 1 to {MAX_EVENT_ID_LEN} bytes without control characters"
                ),
            ));
        }
        if let Some(v) = self.value.filter(|v| !v.is_finite() || v.abs() > MAX_VALUE) {
            return Err(EngineError::invalid(
                ErrorCode::InvalidConversion,
                format!("value must be a finite number of at most {MAX_VALUE:e} in size, got {v}"),
            ));
        }
        Ok(())
    }
}

/// Refuses a whole batch when an item breaks the request's schema (its event id) or carries an
/// unusable value, as a batch of outcomes is refused: nothing of it is recorded.
pub fn check_batch(inputs: &[ConversionInput]) -> Result<(), EngineError> {
    for (i, input) in inputs.iter().enumerate() {
        if let Err(EngineError::Invalid { code, message }) = input.check() {
            return Err(EngineError::invalid(
                code,
                format!("conversions[{i}]: {message}"),
            ));
        }
    }
    Ok(())
}

impl Engine {
    /// Checks one conversion and turns it into a row to insert.
    async fn prepare_conversion(
        &self,
        input: &ConversionInput,
    ) -> Result<NewConversion, EngineError> {
        input.check()?;
        let claims = self
            .signer
            .verify_interleaving(&input.interleaving_token)
            .ok_or(EngineError::InvalidToken)?;
        let duel = &claims.duel;
        // The metric's window, not the token's outcome window, bounds a conversion.
        let snap = self.snapshot(duel.experiment_id).await?;
        let Some(metric) = snap.metrics.get(&input.metric) else {
            let names: Vec<&str> = snap
                .metrics
                .conversion_metrics()
                .map(|m| m.name.as_str())
                .collect();
            return Err(EngineError::invalid(
                ErrorCode::UnknownMetric,
                format!(
                    "metric `{}` is not a conversion metric of this experiment (it has: {})",
                    input.metric,
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            ));
        };
        let Some(window) = metric.window_seconds.filter(|_| metric.is_conversion()) else {
            return Err(EngineError::invalid(
                ErrorCode::UnknownMetric,
                "`click` is recorded with POST /v1/clicks or /v1/outcomes, not as a conversion",
            ));
        };
        let DuelRankers::Pair { first, second } = duel.rankers else {
            return Err(EngineError::invalid(
                ErrorCode::InvalidConversion,
                "conversions are recorded for two-ranker duels",
            ));
        };
        if (first.max(second) as usize) >= snap.names.len() {
            return Err(EngineError::InvalidToken);
        }
        let now = self.clock.now_ms();
        let closes = duel.issued_at_ms + window * 1000;
        if now > closes {
            return Err(EngineError::invalid(
                ErrorCode::ConversionWindowClosed,
                format!(
                    "the `{}` window of this duel closed {} s after it was issued ({} s ago)",
                    metric.name,
                    window,
                    (now - closes) / 1000
                ),
            ));
        }
        let position = claims
            .interleaving
            .shown()
            .iter()
            .position(|d| *d == input.document)
            .ok_or_else(|| {
                EngineError::invalid(
                    ErrorCode::ConversionNotShown,
                    format!(
                        "document `{}` was not shown in this interleaving",
                        input.document
                    ),
                )
            })?;
        let at = |ms: i64| chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default();
        Ok(NewConversion {
            duel_id: duel.duel_uuid(),
            metric: metric.name.clone(),
            event_id: input.event_id.clone(),
            experiment_id: duel.experiment_id,
            first: first as i32,
            second: second as i32,
            document: input.document.clone(),
            position: position as i32,
            value: input.value,
            interleaving: serde_json::to_value(&claims.interleaving)
                .expect("interleavings serialise"),
            issued_at: at(duel.issued_at_ms),
            occurred_at: at(now),
        })
    }

    /// Records one conversion; answers once it is durable.
    pub async fn record_conversion(
        &self,
        input: ConversionInput,
    ) -> Result<ConversionRecord, EngineError> {
        self.record_conversions(vec![input])
            .await?
            .pop()
            .expect("one result per conversion")
    }

    /// Records many conversions in one transaction; each gets its own result. Valid ones are
    /// durable before the answer even when others are refused.
    pub async fn record_conversions(
        &self,
        inputs: Vec<ConversionInput>,
    ) -> Result<Vec<Result<ConversionRecord, EngineError>>, EngineError> {
        let mut results: Vec<Option<Result<ConversionRecord, EngineError>>> =
            Vec::with_capacity(inputs.len());
        let mut rows = Vec::new();
        let mut slots = Vec::new();
        for (i, input) in inputs.iter().enumerate() {
            match self.prepare_conversion(input).await {
                Ok(row) => {
                    rows.push(row);
                    slots.push(i);
                    results.push(None);
                }
                Err(EngineError::Unavailable) => return Err(EngineError::Unavailable),
                Err(e) => {
                    metrics::counter!("joust_conversions_rejected_total").increment(1);
                    results.push(Some(Err(e)));
                }
            }
        }
        if !rows.is_empty() {
            self.require_db()?;
            let written = store_conversions::insert_all(&self.pool, &rows)
                .await
                .map_err(EngineError::from);
            let written = self.observe(written)?;
            let mut experiments = Vec::new();
            for ((row, i), w) in rows.iter().zip(slots).zip(written) {
                let record = |status| ConversionRecord {
                    duel_id: row.duel_id.to_string(),
                    experiment_id: row.experiment_id,
                    metric: row.metric.clone(),
                    event_id: row.event_id.clone(),
                    status,
                };
                results[i] = Some(match w {
                    Inserted::Recorded => {
                        metrics::counter!("joust_conversions_recorded_total").increment(1);
                        experiments.push(row.experiment_id);
                        Ok(record("recorded"))
                    }
                    Inserted::Duplicate => Ok(record("duplicate")),
                    Inserted::Conflict => Err(EngineError::conflict(
                        ErrorCode::ConversionConflict,
                        format!(
                            "event `{}` of metric `{}` was recorded for this duel with another \
                             document or value",
                            row.event_id, row.metric
                        ),
                    )),
                    Inserted::LimitReached => Err(EngineError::conflict(
                        ErrorCode::ConversionLimit,
                        format!(
                            "this duel has {} conversions, the most one duel may have",
                            store_conversions::MAX_PER_DUEL
                        ),
                    )),
                    Inserted::UnknownExperiment => {
                        Err(EngineError::UnknownExperiment(row.experiment_id))
                    }
                });
            }
            experiments.sort_unstable();
            experiments.dedup();
            for id in experiments {
                self.owners.poke(id);
            }
        }
        Ok(results
            .into_iter()
            .map(|r| r.expect("every conversion has a result"))
            .collect())
    }

    /// Moves the test clock (a server started with `--test-clock`); `None` when it is off.
    pub fn set_clock_offset(&self, secs: f64) -> Result<Option<f64>, EngineError> {
        if !secs.is_finite() || secs.abs() > MAX_OFFSET_SECS as f64 {
            return Err(EngineError::invalid(
                ErrorCode::InvalidClock,
                format!(
                    "offset_seconds must be within ±{}, got {secs}",
                    MAX_OFFSET_SECS
                ),
            ));
        }
        Ok(self
            .clock
            .set_offset_secs(secs)
            .then(|| self.clock.offset_secs()))
    }
}
