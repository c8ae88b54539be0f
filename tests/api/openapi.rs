//! `openapi.yaml` against what the server really does: every documented operation is called,
//! every response's status must be documented for it and its body must match the documented
//! schema, and every documented operation is seen answering with success.

use crate::helpers::http_server;
use joust::bandit::{POLICY_NAMES, multi_ranker_policies};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::collections::BTreeSet;

fn spec() -> Value {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.yaml")).unwrap();
    serde_yaml::from_str(&text).expect("openapi.yaml parses")
}

/// Follows `$ref` JSON pointers within the document.
fn resolve<'a>(doc: &'a Value, mut v: &'a Value) -> &'a Value {
    while let Some(r) = v.get("$ref").and_then(Value::as_str) {
        let pointer = r.strip_prefix('#').expect("local refs only");
        v = doc
            .pointer(pointer)
            .unwrap_or_else(|| panic!("dangling $ref {r}"));
    }
    v
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        other => panic!("unsupported schema type {other}"),
    }
}

/// Validates `v` against the subset of JSON Schema the spec uses; returns the first mismatch.
fn validate(doc: &Value, schema: &Value, v: &Value, at: &str) -> Result<(), String> {
    let schema = resolve(doc, schema);
    if let Some(options) = schema.get("oneOf").and_then(Value::as_array) {
        let matching = options
            .iter()
            .filter(|s| validate(doc, s, v, at).is_ok())
            .count();
        return if matching == 1 {
            Ok(())
        } else {
            Err(format!(
                "{at}: {matching} of the oneOf alternatives match {v}"
            ))
        };
    }
    // OpenAPI 3.0's way of saying "or null".
    if v.is_null() && schema.get("nullable").and_then(Value::as_bool) == Some(true) {
        return Ok(());
    }
    if let Some(t) = schema.get("type") {
        let ok = match t {
            Value::String(t) => type_matches(t, v),
            Value::Array(ts) => ts.iter().any(|t| type_matches(t.as_str().unwrap(), v)),
            _ => panic!("bad type in schema at {at}"),
        };
        if !ok {
            return Err(format!("{at}: expected type {t}, got {v}"));
        }
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        if !values.contains(v) {
            return Err(format!("{at}: {v} not in enum {values:?}"));
        }
    }
    if let Some(obj) = v.as_object() {
        for req in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = req.as_str().unwrap();
            if !obj.contains_key(name) {
                return Err(format!("{at}: missing required field `{name}` in {v}"));
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        for (k, val) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(s) => validate(doc, s, val, &format!("{at}.{k}"))?,
                None if props.is_some() => return Err(format!("{at}: undocumented field `{k}`")),
                None => {}
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
        for (i, item) in arr.iter().enumerate() {
            validate(doc, items, item, &format!("{at}[{i}]"))?;
        }
    }
    if let Some(arr) = v.as_array() {
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64) {
            if (arr.len() as u64) < min {
                return Err(format!("{at}: fewer than {min} items"));
            }
        }
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64) {
            if arr.len() as u64 > max {
                return Err(format!("{at}: more than {max} items"));
            }
        }
    }
    Ok(())
}

struct Checker {
    doc: Value,
    app: http_server::TestApp,
    succeeded: BTreeSet<(String, String)>,
}

impl Checker {
    /// Calls `path` (concrete) documented as `template`, and checks the answer against the spec.
    async fn call(
        &mut self,
        method: Method,
        template: &str,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut rb = self
            .app
            .client
            .request(method.clone(), format!("{}{path}", self.app.base));
        if let Some(key) = &self.app.key {
            rb = rb.bearer_auth(key);
        }
        if let Some(b) = &body {
            rb = rb.json(b);
        }
        let resp = rb.send().await.unwrap();
        let status = resp.status();
        let content_type = resp
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        let text = resp.text().await.unwrap();
        let m = method.as_str().to_lowercase();
        let op = self.doc["paths"][template][&m].clone();
        assert!(op.is_object(), "{method} {template} is not documented");
        let documented = op["responses"].get(status.as_str()).unwrap_or_else(|| {
            panic!("{method} {template} answered {status}, which openapi.yaml does not document: {text}")
        });
        let documented = resolve(&self.doc, documented).clone();
        let value = match documented.get("content") {
            None => {
                assert!(
                    text.is_empty(),
                    "{method} {template} {status}: documented without a body, got {text}"
                );
                Value::Null
            }
            Some(content) if content.get("application/json").is_some() => {
                assert!(
                    content_type.starts_with("application/json"),
                    "{method} {template}: content type {content_type}"
                );
                let value: Value = serde_json::from_str(&text).unwrap();
                let schema = &content["application/json"]["schema"];
                if let Err(e) = validate(&self.doc, schema, &value, "body") {
                    panic!("{method} {template} {status}: {e}");
                }
                value
            }
            // An export: each line of an NDJSON body matches the row schema; CSV is text.
            Some(content) if content_type.starts_with("application/x-ndjson") => {
                let schema = &content["application/x-ndjson"]["schema"];
                assert!(
                    schema.is_object(),
                    "{method} {template}: NDJSON not documented"
                );
                for (i, line) in text.lines().enumerate() {
                    let value: Value = serde_json::from_str(line).unwrap();
                    if let Err(e) = validate(&self.doc, schema, &value, &format!("line {i}")) {
                        panic!("{method} {template} {status}: {e}");
                    }
                }
                Value::String(text)
            }
            Some(content) if content_type.starts_with("text/csv") => {
                assert!(
                    content.get("text/csv").is_some(),
                    "{method} {template}: CSV not documented"
                );
                Value::String(text)
            }
            Some(_) => {
                assert!(
                    content_type.starts_with("text/plain"),
                    "{method} {template}: content type {content_type}"
                );
                Value::String(text)
            }
        };
        if status.is_success() {
            self.succeeded.insert((m, template.to_string()));
        }
        (status, value)
    }
}

#[tokio::test]
async fn every_operation_matches_the_spec() {
    let doc = spec();
    // With the test clock, so that its endpoints are exercised too.
    let db = crate::helpers::postgres::fresh_database().await;
    let options = joust::engine::EngineOptions {
        test_clock: true,
        ..crate::helpers::http_server::test_options()
    };
    let app = crate::helpers::http_server::spawn_app_with(&db, "", options).await;
    let mut c = Checker {
        doc: doc.clone(),
        app,
        succeeded: BTreeSet::new(),
    };
    let create = json!({"name": "spec", "rankers": ["a", "b", "c"], "policy": {"name": "uniform"}, "seed": 3});
    let (_, e) = c
        .call(
            Method::POST,
            "/v1/experiments",
            "/v1/experiments",
            Some(create),
        )
        .await;
    let id = e["id"].as_i64().unwrap();
    let one = "/v1/experiments/{id}";
    let p = |suffix: &str| format!("/v1/experiments/{id}{suffix}");
    c.call(
        Method::POST,
        "/v1/experiments",
        "/v1/experiments",
        Some(json!({"name": "x"})),
    )
    .await;
    c.call(
        Method::GET,
        "/v1/experiments",
        "/v1/experiments?limit=1",
        None,
    )
    .await;
    c.call(
        Method::GET,
        "/v1/experiments",
        "/v1/experiments?limit=-1",
        None,
    )
    .await;
    c.call(Method::GET, one, &p(""), None).await;
    c.call(Method::GET, one, "/v1/experiments/424242", None)
        .await;
    let (_, d) = c
        .call(
            Method::POST,
            "/v1/experiments/{id}/duels",
            &p("/duels"),
            None,
        )
        .await;
    let token = d["duel_token"].as_str().unwrap().to_string();
    let winner = d["rankers"][0].clone();
    let outcome = json!({"duel_token": token, "winner": winner});
    c.call(
        Method::POST,
        "/v1/outcomes",
        "/v1/outcomes",
        Some(outcome.clone()),
    )
    .await;
    c.call(
        Method::POST,
        "/v1/outcomes",
        "/v1/outcomes",
        Some(outcome.clone()),
    )
    .await;
    c.call(
        Method::POST,
        "/v1/outcomes",
        "/v1/outcomes",
        Some(json!({"duel_token": token, "winner": "tie"})),
    )
    .await;
    c.call(
        Method::POST,
        "/v1/outcomes",
        "/v1/outcomes",
        Some(json!({"duel_token": "x", "winner": "a"})),
    )
    .await;
    let (_, d2) = c
        .call(
            Method::POST,
            "/v1/experiments/{id}/duels",
            &p("/duels"),
            None,
        )
        .await;
    let batch = json!({"outcomes": [
        {"duel_token": d2["duel_token"], "winner": d2["rankers"][1]},
        outcome,
        {"duel_token": "forged", "winner": "a"},
    ]});
    c.call(
        Method::POST,
        "/v1/outcomes/batch",
        "/v1/outcomes/batch",
        Some(batch),
    )
    .await;
    c.call(
        Method::POST,
        "/v1/outcomes/batch",
        "/v1/outcomes/batch",
        Some(json!({"outcomes": []})),
    )
    .await;
    // Interleaving and clicks, on a third duel.
    let (_, d3) = c
        .call(
            Method::POST,
            "/v1/experiments/{id}/duels",
            &p("/duels"),
            None,
        )
        .await;
    let names: Vec<String> = d3["rankers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect();
    let mut lists = serde_json::Map::new();
    lists.insert(names[0].clone(), json!(["d1", "d2", "d3"]));
    lists.insert(names[1].clone(), json!(["d2", "d4", "d1"]));
    let (_, il) = c
        .call(
            Method::POST,
            "/v1/interleavings",
            "/v1/interleavings",
            Some(json!({"duel_token": d3["duel_token"], "lists": lists})),
        )
        .await;
    c.call(
        Method::POST,
        "/v1/interleavings",
        "/v1/interleavings",
        Some(json!({"duel_token": d3["duel_token"], "lists": {"nobody": []}})),
    )
    .await;
    let clicked = il["documents"][0]["id"].clone();
    let clicks = json!({"interleaving_token": il["interleaving_token"], "clicks": [clicked]});
    c.call(
        Method::POST,
        "/v1/clicks",
        "/v1/clicks",
        Some(clicks.clone()),
    )
    .await;
    c.call(Method::POST, "/v1/clicks", "/v1/clicks", Some(clicks))
        .await;
    c.call(Method::OPTIONS, "/v1/clicks", "/v1/clicks", None)
        .await;
    c.call(
        Method::POST,
        "/v1/clicks",
        "/v1/clicks",
        Some(json!({"interleaving_token": il["interleaving_token"], "clicks": ["unshown"]})),
    )
    .await;
    // A multi-ranker experiment: duel, multileave, clicks, and an outcome by credits.
    let (_, multi) = c
        .call(
            Method::POST,
            "/v1/experiments",
            "/v1/experiments",
            Some(
                json!({"name": "multi", "rankers": ["m1", "m2", "m3", "m4", "m5"],
                        "policy": {"name": "mdb"}, "rankers_per_query": 4, "seed": 2}),
            ),
        )
        .await;
    let multi_duels = format!("/v1/experiments/{}/duels", multi["id"]);
    let (_, md) = c
        .call(
            Method::POST,
            "/v1/experiments/{id}/duels",
            &multi_duels,
            None,
        )
        .await;
    let mut lists = serde_json::Map::new();
    for (i, name) in md["rankers"].as_array().unwrap().iter().enumerate() {
        lists.insert(
            name.as_str().unwrap().to_string(),
            json!([format!("x{i}"), "shared"]),
        );
    }
    let (_, mil) = c
        .call(
            Method::POST,
            "/v1/interleavings",
            "/v1/interleavings",
            Some(json!({"duel_token": md["duel_token"], "lists": lists})),
        )
        .await;
    c.call(
        Method::POST,
        "/v1/clicks",
        "/v1/clicks",
        Some(json!({"interleaving_token": mil["interleaving_token"], "click_positions": [0]})),
    )
    .await;
    let (_, md2) = c
        .call(
            Method::POST,
            "/v1/experiments/{id}/duels",
            &multi_duels,
            None,
        )
        .await;
    let credits: serde_json::Map<String, Value> = md2["rankers"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str().unwrap().to_string(), json!(i)))
        .collect();
    c.call(
        Method::POST,
        "/v1/outcomes",
        "/v1/outcomes",
        Some(json!({"duel_token": md2["duel_token"], "credits": credits})),
    )
    .await;
    c.call(
        Method::GET,
        "/v1/experiments/{id}/matrix",
        &p("/matrix"),
        None,
    )
    .await;
    c.call(
        Method::GET,
        "/v1/experiments/{id}/history",
        &p("/history?max_points=10"),
        None,
    )
    .await;
    c.call(
        Method::GET,
        "/v1/experiments/{id}/history",
        &p("/history?max_points=0"),
        None,
    )
    .await;
    // The exports, of this experiment and of the multi-ranker one (whose rows list pairs).
    let multi = multi_duels.trim_end_matches("/duels").to_string();
    for (template, path) in [
        ("/v1/experiments/{id}/outcomes", p("/outcomes")),
        ("/v1/experiments/{id}/outcomes", format!("{multi}/outcomes")),
        ("/v1/experiments/{id}/outcomes", p("/outcomes?format=csv")),
        ("/v1/experiments/{id}/outcomes", p("/outcomes?after=forged")),
        ("/v1/experiments/{id}/conversions", p("/conversions")),
        (
            "/v1/experiments/{id}/conversions",
            p("/conversions?limit=0"),
        ),
    ] {
        c.call(Method::GET, template, &path, None).await;
    }
    c.call(Method::GET, "/v1/key", "/v1/key", None).await;
    c.call(
        Method::POST,
        "/v1/experiments/{id}/rankers",
        &p("/rankers"),
        Some(json!({"name": "d"})),
    )
    .await;
    c.call(
        Method::POST,
        "/v1/experiments/{id}/rankers",
        &p("/rankers"),
        Some(json!({"name": "d"})),
    )
    .await;
    c.call(
        Method::DELETE,
        "/v1/experiments/{id}/rankers/{name}",
        &p("/rankers/a"),
        None,
    )
    .await;
    c.call(
        Method::DELETE,
        "/v1/experiments/{id}/rankers/{name}",
        &p("/rankers/zz"),
        None,
    )
    .await;
    c.call(
        Method::PATCH,
        one,
        &p(""),
        Some(json!({"status": "paused"})),
    )
    .await;
    c.call(
        Method::POST,
        "/v1/experiments/{id}/duels",
        &p("/duels"),
        None,
    )
    .await;
    c.call(
        Method::PATCH,
        one,
        &p(""),
        Some(json!({"status": "concluded"})),
    )
    .await;
    c.call(
        Method::POST,
        "/v1/experiments/{id}/duels",
        &p("/duels"),
        None,
    )
    .await;
    c.call(
        Method::PATCH,
        one,
        &p(""),
        Some(json!({"status": "running"})),
    )
    .await;
    c.call(
        Method::PATCH,
        one,
        &p(""),
        Some(json!({"browser_clicks": {"origins": ["https://search.example.com"]}})),
    )
    .await;
    c.call(
        Method::PATCH,
        one,
        &p(""),
        Some(json!({"browser_clicks": {"origins": ["https://search.example.com/"]}})),
    )
    .await;
    c.call(
        Method::PATCH,
        one,
        &p(""),
        Some(json!({"browser_clicks": null})),
    )
    .await;
    c.call(Method::DELETE, one, &p(""), None).await;
    c.call(Method::DELETE, one, &p(""), None).await;
    // Conversions, on an experiment with a conversion metric.
    let with_metrics = json!({
        "name": "spec-metrics", "rankers": ["a", "b"], "policy": {"name": "uniform"},
        "metrics": [{"name": "purchase", "credit": "value", "window_seconds": 600, "missing": "tie"}],
    });
    let (_, e) = c
        .call(
            Method::POST,
            "/v1/experiments",
            "/v1/experiments",
            Some(with_metrics),
        )
        .await;
    let mid = e["id"].as_i64().unwrap();
    let (_, d) = c
        .call(
            Method::POST,
            "/v1/experiments/{id}/duels",
            &format!("/v1/experiments/{mid}/duels"),
            None,
        )
        .await;
    let mut lists = serde_json::Map::new();
    for (i, r) in d["rankers"].as_array().unwrap().iter().enumerate() {
        lists.insert(r.as_str().unwrap().to_string(), json!([format!("d{i}")]));
    }
    let (_, il) = c
        .call(
            Method::POST,
            "/v1/interleavings",
            "/v1/interleavings",
            Some(json!({"duel_token": d["duel_token"], "lists": lists})),
        )
        .await;
    let doc0 = il["documents"][0]["id"].clone();
    let conversion = json!({"interleaving_token": il["interleaving_token"], "metric": "purchase",
                            "document": doc0, "value": 12.5, "event_id": "o-1"});
    c.call(
        Method::POST,
        "/v1/conversions",
        "/v1/conversions",
        Some(conversion.clone()),
    )
    .await;
    c.call(
        Method::POST,
        "/v1/conversions",
        "/v1/conversions",
        Some(
            json!({"interleaving_token": il["interleaving_token"], "metric": "refund",
                    "document": doc0, "event_id": "o-2"}),
        ),
    )
    .await;
    c.call(
        Method::POST,
        "/v1/conversions/batch",
        "/v1/conversions/batch",
        Some(
            json!({"conversions": [conversion, {"interleaving_token": "x", "metric": "purchase",
                                                  "document": "d0", "event_id": "o-3"}]}),
        ),
    )
    .await;
    c.call(Method::GET, one, &format!("/v1/experiments/{mid}"), None)
        .await;
    c.call(Method::GET, "/v1/admin/clock", "/v1/admin/clock", None)
        .await;
    c.call(
        Method::PUT,
        "/v1/admin/clock",
        "/v1/admin/clock",
        Some(json!({"offset_seconds": 60})),
    )
    .await;
    c.call(
        Method::PUT,
        "/v1/admin/clock",
        "/v1/admin/clock",
        Some(json!({"offset_seconds": 1e12})),
    )
    .await;
    c.call(Method::GET, "/healthz", "/healthz", None).await;
    c.call(Method::GET, "/readyz", "/readyz", None).await;
    c.call(Method::GET, "/metrics", "/metrics", None).await;

    // Projects and keys last: once a key is stored the server is no longer open, and the calls
    // go on with the global admin key made here.
    c.call(Method::GET, "/v1/projects", "/v1/projects", None)
        .await;
    c.call(
        Method::POST,
        "/v1/projects",
        "/v1/projects",
        Some(json!({"name": "spec"})),
    )
    .await;
    c.call(
        Method::POST,
        "/v1/projects",
        "/v1/projects",
        Some(json!({"name": "spec"})),
    )
    .await;
    let (_, admin) = c
        .call(
            Method::POST,
            "/v1/keys",
            "/v1/keys",
            Some(json!({"scope": "admin", "name": "spec"})),
        )
        .await;
    c.app.key = Some(admin["key"].as_str().unwrap().to_string());
    let (_, k) = c
        .call(
            Method::POST,
            "/v1/keys",
            "/v1/keys",
            Some(json!({"scope": "read", "project": "spec", "expires_at": "2999-01-01T00:00:00Z"})),
        )
        .await;
    c.call(
        Method::POST,
        "/v1/keys",
        "/v1/keys",
        Some(json!({"scope": "read", "project": "nowhere"})),
    )
    .await;
    c.call(Method::GET, "/v1/keys", "/v1/keys", None).await;
    c.call(Method::GET, "/v1/key", "/v1/key", None).await;
    let revoke = format!("/v1/keys/{}", k["id"]);
    c.call(Method::DELETE, "/v1/keys/{key_id}", &revoke, None)
        .await;
    c.call(Method::DELETE, "/v1/keys/{key_id}", "/v1/keys/999999", None)
        .await;

    let documented: BTreeSet<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, ops)| {
            ops.as_object()
                .unwrap()
                .keys()
                .filter(|m| *m != "parameters")
                .map(move |m| (m.clone(), path.clone()))
        })
        .collect();
    let missing: Vec<_> = documented.difference(&c.succeeded).collect();
    assert!(
        missing.is_empty(),
        "documented operations never seen succeeding: {missing:?}"
    );
    c.app.stop().await;
}

#[test]
fn the_validator_catches_mismatches() {
    let doc = spec();
    let schema = json!({"$ref": "#/components/schemas/OutcomeRecord"});
    let good = json!({"duel_id": "x", "experiment_id": 1, "winner": "a", "status": "recorded"});
    assert!(validate(&doc, &schema, &good, "body").is_ok());
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("status");
    assert!(validate(&doc, &schema, &missing, "body").is_err());
    let mut extra = good.clone();
    extra["surprise"] = json!(1);
    assert!(validate(&doc, &schema, &extra, "body").is_err());
    let mut bad_enum = good;
    bad_enum["status"] = json!("maybe");
    assert!(validate(&doc, &schema, &bad_enum, "body").is_err());
}

/// Every JSON body can be refused for its size or its content type before it is read, and for
/// not arriving whole within the body timeout (408) while it is read.
#[test]
fn every_json_body_operation_documents_408_413_and_415() {
    let doc = spec();
    let mut seen = 0;
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            if op
                .pointer("/requestBody/content/application~1json")
                .is_none()
            {
                continue;
            }
            seen += 1;
            for status in ["408", "413", "415"] {
                assert!(
                    op["responses"].get(status).is_some(),
                    "{method} {path} takes a JSON body but does not document {status}"
                );
            }
        }
    }
    assert_eq!(seen, 13, "JSON body operations");
}

/// The interleaving methods the spec accepts are the registry's, in its order.
#[test]
fn interleaving_methods_match_the_registry() {
    let doc = spec();
    let listed: Vec<&str> = doc
        .pointer("/components/schemas/InterleavingSettings/properties/method/enum")
        .and_then(Value::as_array)
        .expect("InterleavingSettings lists its methods")
        .iter()
        .map(|v| v.as_str().expect("method names are strings"))
        .collect();
    let registry: Vec<&str> = joust::interleave::METHODS.iter().map(|m| m.name).collect();
    assert_eq!(listed, registry);
}

/// The error codes the spec lists are exactly those the server can send: every `code` of an
/// error answer is an `ErrorCode` (the server has no other way to spell one), so a code missing
/// from the spec, or listed there but gone from the server, fails here.
#[test]
fn the_spec_lists_exactly_the_server_error_codes() {
    let doc = spec();
    let listed: BTreeSet<&str> = doc
        .pointer("/components/schemas/ErrorCode/enum")
        .and_then(Value::as_array)
        .expect("the Error schema lists its codes")
        .iter()
        .map(|c| c.as_str().expect("codes are strings"))
        .collect();
    let sent: BTreeSet<&str> = joust::api::ErrorCode::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    let undocumented: Vec<_> = sent.difference(&listed).collect();
    assert!(
        undocumented.is_empty(),
        "codes the server sends but openapi.yaml does not list: {undocumented:?}"
    );
    let unknown: Vec<_> = listed.difference(&sent).collect();
    assert!(
        unknown.is_empty(),
        "codes openapi.yaml lists but the server never sends: {unknown:?}"
    );
}

/// The spec's policy names are the registry's, and the multi-ranker policies it lists for
/// `rankers_per_query` are the registry's multi-ranker policies.
#[test]
fn policy_names_match_the_registry() {
    let doc = spec();
    let schemas = &doc["components"]["schemas"];
    let documented: BTreeSet<&str> = schemas["PolicySpec"]["properties"]["name"]["enum"]
        .as_array()
        .expect("PolicySpec.name has an enum")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let registered: BTreeSet<&str> = POLICY_NAMES.iter().copied().collect();
    assert_eq!(documented, registered, "PolicySpec.name's enum");

    let text = schemas["CreateExperiment"]["properties"]["rankers_per_query"]["description"]
        .as_str()
        .expect("rankers_per_query has a description");
    let listed: BTreeSet<&str> = text
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|word| registered.contains(word))
        .collect();
    let multi: BTreeSet<&str> = multi_ranker_policies().collect();
    assert_eq!(
        listed, multi,
        "policies named by rankers_per_query's description"
    );
}

/// The decision settings' documented defaults are the server's.
#[test]
fn decision_defaults_match_the_server() {
    let doc = spec();
    let props = doc
        .pointer("/components/schemas/DecisionSettingsInput/properties")
        .expect("DecisionSettingsInput");
    let d = joust::bandit::DecisionSettings::default();
    let documented = |name: &str| props[name]["default"].clone();
    assert_eq!(documented("delta"), json!(d.delta));
    assert_eq!(documented("epsilon").as_f64(), Some(d.epsilon));
    assert_eq!(documented("confirmation"), json!(d.confirmation));
    assert_eq!(
        documented("max_confirmation_share"),
        json!(d.max_confirmation_share)
    );
}
