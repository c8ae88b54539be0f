//! The Grafana dashboard and the compose `monitoring` profile against what joust exports: every
//! metric the dashboard queries must be on `/metrics`, the per-experiment series must respect
//! their cap, and the compose file must wire Prometheus and Grafana to the files in docs/grafana.

use crate::helpers::http_server::{TestApp, spawn_app_with};
use crate::helpers::postgres;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::BTreeSet;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn dashboard() -> Value {
    let text = std::fs::read_to_string(format!("{ROOT}/docs/grafana/joust.json")).unwrap();
    serde_json::from_str(&text).expect("docs/grafana/joust.json is JSON")
}

/// Every PromQL expression in the dashboard: panel targets and template variable queries.
fn expressions(d: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for p in d["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().unwrap() {
            out.push(t["expr"].as_str().unwrap().to_string());
        }
    }
    for v in d["templating"]["list"].as_array().unwrap() {
        out.push(v["definition"].as_str().unwrap().to_string());
    }
    out
}

/// The metric names an expression reads: identifiers starting with `joust_`, a histogram's
/// `_bucket`/`_sum`/`_count` series named after their histogram.
fn metric_names(expr: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let bytes = expr.as_bytes();
    let mut i = 0;
    while let Some(at) = expr[i..].find("joust_") {
        let start = i + at;
        let mut end = start;
        while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
            end += 1;
        }
        let name = &expr[start..end];
        let base = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .unwrap_or(name);
        names.insert(base.to_string());
        i = end;
    }
    names
}

/// Names with a `# TYPE` line on /metrics, and the `experiment` labels of a family.
async fn scrape(app: &TestApp) -> String {
    let resp = app.get_response("/metrics").await;
    assert_eq!(resp.status(), StatusCode::OK);
    resp.text().await.unwrap()
}

fn exported(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

fn experiment_labels(text: &str, family: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter_map(|l| l.strip_prefix(&format!("{family}{{experiment=\"")))
        .map(|rest| {
            let (id, value) = rest.split_once("\"} ").unwrap();
            (id.to_string(), value.parse().unwrap())
        })
        .collect()
}

async fn play(app: &TestApp, id: i64, n: usize) {
    for _ in 0..n {
        let (token, rankers) = app.duel(id).await;
        let (s, b) = app.outcome(&token, &rankers[1]).await;
        assert_eq!(s, StatusCode::OK, "{b}");
    }
}

#[tokio::test]
async fn every_metric_the_dashboard_queries_is_exported_and_series_are_capped() {
    let db = postgres::fresh_database().await;
    let options = joust::engine::EngineOptions {
        metrics_max_experiments: 2,
        ..Default::default()
    };
    let app = spawn_app_with(&db, "", options).await;
    let ids: Vec<i64> = {
        let mut ids = Vec::new();
        for _ in 0..3 {
            ids.push(
                app.create_experiment(&["a", "b"], json!({"name": "uniform"}))
                    .await,
            );
        }
        ids
    };
    play(&app, ids[0], 3).await;
    // One batch so that the ingest histogram has a sample.
    let (token, rankers) = app.duel(ids[1]).await;
    let (s, b) = app
        .post(
            "/v1/outcomes/batch",
            json!({"outcomes": [{"duel_token": token, "winner": "tie"}]}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{b} {rankers:?}");
    let (s, _) = app.get("/v1/experiments/999999").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    // Outcomes are applied just after they are acknowledged; reading the experiments on this
    // replica waits for that, so the scrape below sees them.
    for &id in &ids[..2] {
        app.experiment(id).await;
    }

    let text = scrape(&app).await;
    let have = exported(&text);
    let d = dashboard();
    let mut queried = BTreeSet::new();
    for e in expressions(&d) {
        queried.extend(metric_names(&e));
    }
    assert!(queried.len() >= 6, "{queried:?}");
    let missing: Vec<_> = queried.difference(&have).collect();
    assert!(
        missing.is_empty(),
        "the dashboard queries {missing:?}, which /metrics does not export"
    );

    // The two lowest running ids have series; the third only counts as running.
    let outcomes = experiment_labels(&text, "joust_experiment_outcomes_applied_total");
    let want: Vec<(String, f64)> = vec![(ids[0].to_string(), 3.0), (ids[1].to_string(), 0.0)];
    assert_eq!(outcomes, want, "{text}");
    let ties = experiment_labels(&text, "joust_experiment_ties_total");
    assert_eq!(ties[1], (ids[1].to_string(), 1.0));
    let duels = experiment_labels(&text, "joust_experiment_duels_issued_total");
    assert_eq!(
        duels,
        vec![(ids[0].to_string(), 3.0), (ids[1].to_string(), 1.0)]
    );
    assert!(text.contains("joust_experiments_running 3\n"), "{text}");

    // A paused experiment leaves the series at once; the third takes its place.
    let (s, b) = app
        .send(
            reqwest::Method::PATCH,
            &format!("/v1/experiments/{}", ids[0]),
            Some(json!({"status": "paused"})),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let text = scrape(&app).await;
    let confident = experiment_labels(&text, "joust_experiment_champion_confident");
    assert_eq!(
        confident
            .iter()
            .map(|(id, _)| id.clone())
            .collect::<Vec<_>>(),
        [ids[1].to_string(), ids[2].to_string()]
    );
    assert!(confident.iter().all(|(_, v)| *v == 0.0));
    assert!(text.contains("joust_experiments_running 2\n"), "{text}");
    app.stop().await;
}

#[test]
fn the_monitoring_profile_provisions_prometheus_and_grafana() {
    let text = std::fs::read_to_string(format!("{ROOT}/docker-compose.yml")).unwrap();
    let compose: serde_yaml::Value = serde_yaml::from_str(&text).expect("compose is YAML");
    let services = compose["services"].as_mapping().unwrap();
    // The default `docker compose up` stays joust and Postgres only.
    for (name, service) in services {
        let profiles = service.get("profiles");
        let name = name.as_str().unwrap();
        let monitoring = matches!(name, "prometheus" | "grafana");
        assert_eq!(
            profiles.is_some(),
            monitoring,
            "{name}: only the monitoring services have a profile"
        );
        if monitoring {
            assert_eq!(profiles.unwrap()[0].as_str(), Some("monitoring"));
        }
    }
    // Every file mounted from the repository exists.
    for name in ["prometheus", "grafana"] {
        for v in compose["services"][name]["volumes"].as_sequence().unwrap() {
            let v = v.as_str().unwrap();
            if let Some(local) = v.strip_prefix("./") {
                let path = local.split(':').next().unwrap();
                assert!(
                    std::path::Path::new(ROOT).join(path).exists(),
                    "{name} mounts {path}, which does not exist"
                );
            } else {
                let volume = v.split(':').next().unwrap();
                assert!(
                    compose["volumes"].get(volume).is_some(),
                    "undeclared volume {volume}"
                );
            }
        }
    }
    // Prometheus scrapes joust where it listens in compose; Grafana reads that Prometheus.
    let prom: serde_yaml::Value = serde_yaml::from_str(
        &std::fs::read_to_string(format!("{ROOT}/docs/grafana/prometheus.yml")).unwrap(),
    )
    .unwrap();
    let job = &prom["scrape_configs"][0];
    assert_eq!(job["metrics_path"].as_str(), Some("/metrics"));
    let listen = compose["services"]["joust"]["environment"]["JOUST_LISTEN"]
        .as_str()
        .unwrap();
    let port = listen.rsplit(':').next().unwrap();
    assert_eq!(
        job["static_configs"][0]["targets"][0].as_str(),
        Some(format!("joust:{port}").as_str())
    );
    let ds: serde_yaml::Value = serde_yaml::from_str(
        &std::fs::read_to_string(format!(
            "{ROOT}/docs/grafana/provisioning/datasources/prometheus.yml"
        ))
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        ds["datasources"][0]["url"].as_str(),
        Some("http://prometheus:9090")
    );
    // The dashboard's panels use that data source.
    let uid = ds["datasources"][0]["uid"].as_str().unwrap();
    for p in dashboard()["panels"].as_array().unwrap() {
        assert_eq!(p["datasource"]["uid"].as_str(), Some(uid), "{}", p["title"]);
    }
}
