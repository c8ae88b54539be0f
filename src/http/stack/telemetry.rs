//! Request metrics per route, and the process-wide Prometheus recorder.

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::OnceLock;

use crate::engine::{ExperimentCounters, MetricCounters};

/// A per-metric series: its name, its help and its value.
type MetricFamily = (&'static str, &'static str, fn(&MetricCounters) -> u64);

/// Latency buckets in seconds: from 50 microseconds (a duel from memory) to 5 s.
const LATENCY_BUCKETS: &[f64] = &[
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0,
];
const BATCH_BUCKETS: &[f64] = &[
    1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0, 20000.0,
];

/// The recorder is global to the process; several servers in one process (tests) share it.
pub fn handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            PrometheusBuilder::new()
                .set_buckets_for_metric(
                    Matcher::Full("joust_http_request_duration_seconds".into()),
                    LATENCY_BUCKETS,
                )
                .and_then(|b| {
                    b.set_buckets_for_metric(
                        Matcher::Full("joust_ingest_batch_size".into()),
                        BATCH_BUCKETS,
                    )
                })
                .expect("valid buckets")
                .install_recorder()
                .expect("the metrics recorder is installed once")
        })
        .clone()
}

/// The counter and histogram of one (route, method, status).
type Handles = (metrics::Counter, metrics::Histogram);

/// Per route, the handles of each (method, status) seen.
type ByRoute = HashMap<String, Vec<(axum::http::Method, u16, Handles)>>;

thread_local! {
    /// Each thread's own handles, looked up once per (route, method, status): building labelled
    /// metric keys costs several allocations, and a cache shared by the workers costs a lock and
    /// two reference counts bouncing between cores on every request.
    static HANDLES: RefCell<ByRoute> = RefCell::default();
}

/// Counts a request and records its latency per route, method and status (called by the front
/// layer, which wraps the whole router).
pub fn record_request(
    route: &str,
    method: &axum::http::Method,
    status: u16,
    elapsed: std::time::Duration,
) {
    HANDLES.with_borrow_mut(|cache| {
        let found = cache
            .get(route)
            .and_then(|seen| seen.iter().find(|(m, s, _)| m == method && *s == status));
        if let Some((_, _, (requests, latency))) = found {
            requests.increment(1);
            latency.record(elapsed.as_secs_f64());
            return;
        }
        let labels = [
            ("route", route.to_string()),
            ("method", method.to_string()),
            ("status", status.to_string()),
        ];
        let (requests, latency) = (
            metrics::counter!("joust_http_requests_total", &labels),
            metrics::histogram!("joust_http_request_duration_seconds", &labels),
        );
        requests.increment(1);
        latency.record(elapsed.as_secs_f64());
        cache.entry(route.to_string()).or_default().push((
            method.clone(),
            status,
            (requests, latency),
        ));
    });
}

/// A metric family of the per-experiment series: name, type, help, and its value.
type Family = (
    &'static str,
    &'static str,
    &'static str,
    fn(&ExperimentCounters) -> i64,
);

/// The per-experiment series, in Prometheus text format, rendered at scrape time from the
/// current figures: an experiment that stops running leaves `/metrics` at once, so the number
/// of series never exceeds the configured cap.
pub fn experiment_series(experiments: &[ExperimentCounters], running: i64) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let families: [Family; 4] = [
        (
            "joust_experiment_outcomes_applied_total",
            "counter",
            "Non-tie outcomes applied to the experiment's bandit.",
            |s| s.outcomes_applied,
        ),
        (
            "joust_experiment_ties_total",
            "counter",
            "Ties recorded for the experiment.",
            |s| s.ties_recorded,
        ),
        (
            "joust_experiment_duels_issued_total",
            "counter",
            "Duels issued for the experiment by every replica.",
            |s| s.duels_issued,
        ),
        (
            "joust_experiment_champion_confident",
            "gauge",
            "1 when the experiment's champion beats every other ranker with confidence.",
            |s| i64::from(s.champion_confident),
        ),
    ];
    for (name, kind, help, value) in families {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for s in experiments {
            let _ = writeln!(out, "{name}{{experiment=\"{}\"}} {}", s.id, value(s));
        }
    }
    // Per metric, for experiments with more than one metric.
    let metric_families: [MetricFamily; 3] = [
        (
            "joust_experiment_metric_outcomes",
            "Decided (non-tie) outcomes of each metric of the experiment.",
            |m| m.outcomes,
        ),
        (
            "joust_experiment_metric_ties",
            "Ties of each metric of the experiment.",
            |m| m.ties,
        ),
        (
            "joust_experiment_metric_champion_confident",
            "1 when the metric's champion beats every other ranker with confidence.",
            |m| u64::from(m.champion_confident),
        ),
    ];
    for (name, help, value) in metric_families {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
        for s in experiments {
            for m in &s.metrics {
                let _ = writeln!(
                    out,
                    "{name}{{experiment=\"{}\",metric=\"{}\"}} {}",
                    s.id,
                    m.name,
                    value(m)
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "# HELP joust_experiment_metrics_agree 1 when every metric with a champion names the same one (experiments with more than one metric).\n# TYPE joust_experiment_metrics_agree gauge"
    );
    for s in experiments.iter().filter(|s| !s.metrics.is_empty()) {
        let _ = writeln!(
            out,
            "joust_experiment_metrics_agree{{experiment=\"{}\"}} {}",
            s.id,
            u8::from(s.metrics_agree)
        );
    }
    let _ = writeln!(
        out,
        "# HELP joust_experiments_running Running experiments (those beyond the series cap have no series of their own).\n\
         # TYPE joust_experiments_running gauge\njoust_experiments_running {running}"
    );
    out
}
