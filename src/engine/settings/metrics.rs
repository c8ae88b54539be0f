//! An experiment's metrics: what it measures a duel by, how a metric's events credit a ranker,
//! how long they may arrive and what a window with no event means, and which metric the policy
//! learns from (`primary_metric`). Parsed and validated here, for the create request and the
//! stored form alike.
//!
//! The metric `click` is the outcome the outcome calls record (`POST /v1/outcomes`, the batch,
//! `POST /v1/clicks`); every other metric is a *conversion metric*, fed by
//! `POST /v1/conversions` (docs/metrics.md). An experiment always has `click`: a list that does
//! not declare it gets it with its defaults, so an experiment created without `metrics` measures
//! clicks only, as before metrics existed.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

use crate::bandit::{Arm, WinMatrix};
use crate::store::counts::metrics::MetricCounts;

use crate::api::{ErrorCode, MetricInput};
use crate::engine::EngineError;

/// The metric the outcome calls record.
pub const CLICK: &str = "click";
/// Most metrics per experiment: each one is a matrix read by every experiment view.
pub const MAX_METRICS: usize = 8;
/// Longest metric name, in bytes.
pub const MAX_METRIC_NAME_LEN: usize = 32;
/// A conversion metric's attribution window when none is given: one day.
pub const DEFAULT_WINDOW_SECS: i64 = 24 * 3600;
/// Longest attribution window: thirty days, as for outcomes.
pub const MAX_WINDOW_SECS: i64 = 30 * 24 * 3600;

/// How a metric's events on the shown documents credit the rankers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Credit {
    /// The first event decides, as the method credits one click on that document; decided as
    /// soon as it is applied.
    First,
    /// Every event counts, as the method credits clicks on all those documents; decided when the
    /// window closes.
    All,
    /// Each event counts with its `value` (e.g. an order's amount): each ranker's credit is the
    /// value-weighted sum of the method's credit for each document; decided when the window closes.
    Value,
}

impl Credit {
    fn parse(s: &str) -> Option<Credit> {
        match s {
            "first" => Some(Credit::First),
            "all" => Some(Credit::All),
            "value" => Some(Credit::Value),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Credit::First => "first",
            Credit::All => "all",
            Credit::Value => "value",
        }
    }
}

/// What a conversion metric's window closing with no event means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Missing {
    /// Nothing is counted (a duel with no purchase says nothing about purchases).
    Ignore,
    /// A tie ("no purchase" from either list), for a duel whose outcome was reported.
    Tie,
}

impl Missing {
    fn parse(s: &str) -> Option<Missing> {
        match s {
            "ignore" => Some(Missing::Ignore),
            "tie" => Some(Missing::Tie),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Missing::Ignore => "ignore",
            Missing::Tie => "tie",
        }
    }
}

/// One metric, validated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub name: String,
    pub credit: Credit,
    /// How long after the duel was issued its events are accepted; `None` for `click`, whose
    /// window is the experiment's `attribution_window_secs`.
    pub window_seconds: Option<i64>,
    pub missing: Missing,
}

impl Metric {
    fn click(credit: Credit) -> Metric {
        Metric {
            name: CLICK.to_string(),
            credit,
            window_seconds: None,
            missing: Missing::Ignore,
        }
    }

    /// Whether `POST /v1/conversions` feeds this metric.
    pub fn is_conversion(&self) -> bool {
        self.name != CLICK
    }

    /// Whether the outcome of a duel is decided only when the window closes.
    pub fn decided_at_close(&self) -> bool {
        self.is_conversion() && self.credit != Credit::First
    }
}

/// An experiment's metrics and the primary one.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// `click` first, then the others in the order declared.
    pub list: Vec<Metric>,
    /// Index in `list` of the metric the policy learns from.
    pub primary: usize,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            list: vec![Metric::click(Credit::All)],
            primary: 0,
        }
    }
}

fn invalid(message: String) -> EngineError {
    EngineError::invalid(ErrorCode::InvalidMetrics, message)
}

fn check_metric_name(name: &str) -> Result<(), EngineError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_METRIC_NAME_LEN
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(invalid(format!(
            "a metric name is 1 to {MAX_METRIC_NAME_LEN} characters of a-z, 0-9 and _, starting \
             with a letter, got {name:?}"
        )))
    }
}

fn validate_one(m: &MetricInput) -> Result<Metric, EngineError> {
    check_metric_name(&m.name)?;
    let credit = match m.credit.as_deref() {
        None => None,
        Some(s) => Some(Credit::parse(s).ok_or_else(|| {
            invalid(format!(
                "metric `{}`: credit must be one of first, all, value, got {s:?}",
                m.name
            ))
        })?),
    };
    let missing = match m.missing.as_deref() {
        None => None,
        Some(s) => Some(Missing::parse(s).ok_or_else(|| {
            invalid(format!(
                "metric `{}`: missing must be one of ignore, tie, got {s:?}",
                m.name
            ))
        })?),
    };
    if m.name == CLICK {
        if m.window_seconds.is_some() || missing.is_some() {
            return Err(invalid(
                "metric `click` takes no `window_seconds` or `missing`: its outcomes come from the \
                 outcome and click calls, within the experiment's attribution_window_secs"
                    .to_string(),
            ));
        }
        let credit = credit.unwrap_or(Credit::All);
        if credit == Credit::Value {
            return Err(invalid(
                "metric `click`: credit must be first or all (clicks carry no value)".to_string(),
            ));
        }
        return Ok(Metric::click(credit));
    }
    let window = m.window_seconds.unwrap_or(DEFAULT_WINDOW_SECS);
    if !(1..=MAX_WINDOW_SECS).contains(&window) {
        return Err(invalid(format!(
            "metric `{}`: window_seconds must be in 1..={MAX_WINDOW_SECS}, got {window}",
            m.name
        )));
    }
    Ok(Metric {
        name: m.name.clone(),
        credit: credit.unwrap_or(Credit::First),
        window_seconds: Some(window),
        missing: missing.unwrap_or(Missing::Ignore),
    })
}

impl Metrics {
    /// The metrics of a create request: `None` and `None` give the default (`click`, primary).
    pub fn from_request(
        metrics: Option<&[MetricInput]>,
        primary: Option<&str>,
        rankers_per_query: usize,
    ) -> Result<Metrics, EngineError> {
        let inputs = metrics.unwrap_or(&[]);
        if metrics.is_some() && !(1..=MAX_METRICS).contains(&inputs.len()) {
            return Err(invalid(format!(
                "metrics must list 1 to {MAX_METRICS} metrics, got {}",
                inputs.len()
            )));
        }
        let mut list: Vec<Metric> = Vec::with_capacity(inputs.len() + 1);
        for m in inputs {
            let metric = validate_one(m)?;
            if list.iter().any(|x| x.name == metric.name) {
                return Err(invalid(format!("metric `{}` is listed twice", metric.name)));
            }
            list.push(metric);
        }
        // `click` first, declared or not.
        match list.iter().position(|m| m.name == CLICK) {
            Some(p) => {
                let click = list.remove(p);
                list.insert(0, click);
            }
            None => list.insert(0, Metric::click(Credit::All)),
        }
        if list.len() > MAX_METRICS {
            return Err(invalid(format!(
                "an experiment has at most {MAX_METRICS} metrics, `click` included"
            )));
        }
        if rankers_per_query > 2 && list.iter().any(Metric::is_conversion) {
            return Err(invalid(
                "conversion metrics are available for two-ranker duels (rankers_per_query 2)"
                    .to_string(),
            ));
        }
        let primary = match primary {
            None => 0,
            Some(name) => list.iter().position(|m| m.name == name).ok_or_else(|| {
                EngineError::invalid(
                    ErrorCode::UnknownMetric,
                    format!(
                        "primary_metric `{name}` is not one of the metrics: {}",
                        list.iter()
                            .map(|m| m.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?,
        };
        Ok(Metrics { list, primary })
    }

    /// The stored form: `None` for the default, so experiments without metrics store nothing.
    pub fn to_stored(&self) -> (Option<Value>, Option<String>) {
        if *self == Metrics::default() {
            return (None, None);
        }
        (
            Some(serde_json::to_value(&self.list).expect("metrics serialise")),
            Some(self.primary().name.clone()),
        )
    }

    /// Reads the stored form back.
    pub fn from_stored(list: Option<&Value>, primary: Option<&str>) -> Result<Metrics, String> {
        let Some(list) = list else {
            return Ok(Metrics::default());
        };
        let list: Vec<Metric> = serde_json::from_value(list.clone()).map_err(|e| e.to_string())?;
        let primary = match primary {
            None => 0,
            Some(name) => list
                .iter()
                .position(|m| m.name == name)
                .ok_or_else(|| format!("primary metric `{name}` is not a metric"))?,
        };
        Ok(Metrics { list, primary })
    }

    pub fn primary(&self) -> &Metric {
        &self.list[self.primary]
    }

    /// Whether the policy learns from the outcome calls (the primary metric is `click`).
    pub fn click_is_primary(&self) -> bool {
        self.primary().name == CLICK
    }

    pub fn get(&self, name: &str) -> Option<&Metric> {
        self.list.iter().find(|m| m.name == name)
    }

    pub fn click(&self) -> &Metric {
        &self.list[0]
    }

    /// The conversion metrics (every metric but `click`).
    pub fn conversion_metrics(&self) -> impl Iterator<Item = &Metric> {
        self.list.iter().filter(|m| m.is_conversion())
    }

    /// The metrics as the experiment view shows them.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "primary_metric": self.primary().name,
            "metrics": self.list.iter().map(|m| {
                let mut v = serde_json::json!({"name": m.name, "credit": m.credit.as_str()});
                if let Some(w) = m.window_seconds {
                    v["window_seconds"] = w.into();
                    v["missing"] = m.missing.as_str().into();
                }
                v
            }).collect::<Vec<_>>(),
        })
    }
}

/// The win matrix of every metric but the primary one, over `k` rankers, from stored counts (a
/// metric with no counts yet has an empty matrix).
pub fn matrices(
    metrics: &Metrics,
    k: usize,
    counts: &BTreeMap<String, MetricCounts>,
) -> BTreeMap<String, WinMatrix> {
    metrics
        .list
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != metrics.primary)
        .map(|(_, m)| {
            let mut w = WinMatrix::new(k);
            if let Some(c) = counts.get(&m.name) {
                add_cells(&mut w, &c.wins, &c.ties);
            }
            (m.name.clone(), w)
        })
        .collect()
}

/// Adds win cells `(winner, loser, n)` and tie cells `(a, b, n)` to a matrix (cells of rankers it
/// does not know are dropped: they cannot occur, the counts come from its own experiment).
pub fn add_cells(w: &mut WinMatrix, wins: &[(i32, i32, i64)], ties: &[(i32, i32, i64)]) {
    let k = w.k() as i32;
    for &(a, b, n) in wins {
        if (0..k).contains(&a) && (0..k).contains(&b) {
            w.add_wins(a as Arm, b as Arm, n as u32);
        }
    }
    for &(a, b, n) in ties {
        if (0..k).contains(&a) && (0..k).contains(&b) {
            w.add_ties(a as Arm, b as Arm, n as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(
        name: &str,
        credit: Option<&str>,
        window: Option<i64>,
        missing: Option<&str>,
    ) -> MetricInput {
        MetricInput {
            name: name.to_string(),
            credit: credit.map(str::to_string),
            window_seconds: window,
            missing: missing.map(str::to_string),
        }
    }

    #[test]
    fn omitted_metrics_are_click_only_and_stored_as_nothing() {
        let m = Metrics::from_request(None, None, 2).unwrap();
        assert_eq!(m, Metrics::default());
        assert!(m.click_is_primary());
        assert_eq!(m.to_stored(), (None, None));
        assert_eq!(Metrics::from_stored(None, None).unwrap(), m);
    }

    #[test]
    fn click_is_added_first_and_the_stored_form_reads_back() {
        let list = [input("purchase", Some("value"), Some(3600), Some("tie"))];
        let m = Metrics::from_request(Some(&list), Some("purchase"), 2).unwrap();
        assert_eq!(m.list[0].name, CLICK);
        assert_eq!(m.list[1].credit, Credit::Value);
        assert_eq!(m.list[1].missing, Missing::Tie);
        assert_eq!(m.primary().name, "purchase");
        assert!(m.list[1].decided_at_close());
        let (list, primary) = m.to_stored();
        assert_eq!(
            Metrics::from_stored(list.as_ref(), primary.as_deref()).unwrap(),
            m
        );
    }

    #[test]
    fn bad_metrics_are_refused_with_their_code() {
        let code =
            |list: &[MetricInput], primary: Option<&str>, k: usize| match Metrics::from_request(
                Some(list),
                primary,
                k,
            ) {
                Err(EngineError::Invalid { code, .. }) => code,
                other => panic!("expected a refusal, got {other:?}"),
            };
        let bad = ErrorCode::InvalidMetrics;
        assert_eq!(code(&[], None, 2), bad);
        assert_eq!(code(&[input("Purchase", None, None, None)], None, 2), bad);
        assert_eq!(code(&[input("p", Some("most"), None, None)], None, 2), bad);
        assert_eq!(code(&[input("p", None, Some(0), None)], None, 2), bad);
        assert_eq!(code(&[input("p", None, None, Some("zero"))], None, 2), bad);
        assert_eq!(code(&[input("click", None, Some(60), None)], None, 2), bad);
        assert_eq!(
            code(&[input("click", Some("value"), None, None)], None, 2),
            bad
        );
        assert_eq!(
            code(
                &[input("p", None, None, None), input("p", None, None, None)],
                None,
                2
            ),
            bad
        );
        assert_eq!(code(&[input("p", None, None, None)], None, 3), bad);
        assert_eq!(
            code(&[input("p", None, None, None)], Some("q"), 2),
            ErrorCode::UnknownMetric
        );
    }
}
