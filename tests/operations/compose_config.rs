//! docker-compose.yml and the Dockerfile must configure joust with the settings its CLI reads.
//!
//! The names below are the CLI's own (`joust::service::env`), so a renamed setting breaks this test
//! rather than a deployment.

use serde_yaml::{Mapping, Value};
use std::collections::BTreeMap;

use joust::service::env::{API_KEYS, DATA_DIR, DATABASE_URL, LISTEN};
const API_KEY_SCOPES: [&str; 3] = ["admin", "ingest", "read"];

fn compose() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docker-compose.yml"))
        .expect("docker-compose.yml at the package root");
    serde_yaml::from_str(&text).expect("docker-compose.yml is valid YAML")
}

fn dockerfile() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Dockerfile"))
        .expect("Dockerfile at the package root")
}

fn service<'a>(compose: &'a Value, name: &str) -> &'a Mapping {
    compose["services"][name]
        .as_mapping()
        .unwrap_or_else(|| panic!("docker-compose.yml has no `{name}` service"))
}

fn str_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        other => panic!("expected a scalar, got {other:?}"),
    }
}

/// A service's environment, in either compose syntax (a map, or a list of `NAME=value`).
fn environment(service: &Mapping) -> BTreeMap<String, String> {
    match service.get("environment") {
        None => BTreeMap::new(),
        Some(Value::Mapping(map)) => map.iter().map(|(k, v)| (str_of(k), str_of(v))).collect(),
        Some(Value::Sequence(list)) => list
            .iter()
            .map(|item| {
                let item = str_of(item);
                let (name, value) = item.split_once('=').unwrap_or((&item, ""));
                (name.to_string(), value.to_string())
            })
            .collect(),
        Some(other) => panic!("unexpected environment syntax: {other:?}"),
    }
}

/// The port of a `host:port` address.
fn port_of(address: &str) -> u16 {
    address
        .rsplit_once(':')
        .and_then(|(_, port)| port.parse().ok())
        .unwrap_or_else(|| panic!("not host:port: {address}"))
}

/// The container ports a service publishes, from short (`[ip:]host:container[/proto]`) or long
/// (`target:`) syntax.
fn published_container_ports(service: &Mapping) -> Vec<u16> {
    let Some(Value::Sequence(ports)) = service.get("ports") else {
        return Vec::new();
    };
    ports
        .iter()
        .map(|entry| match entry {
            Value::Mapping(long) => str_of(&long[&Value::from("target")]).parse().unwrap(),
            short => {
                let short = str_of(short);
                let without_proto = short.split('/').next().unwrap();
                without_proto.rsplit(':').next().unwrap().parse().unwrap()
            }
        })
        .collect()
}

#[test]
fn joust_gets_exactly_the_settings_the_cli_reads() {
    let compose = compose();
    let env = environment(service(&compose, "joust"));
    let names: Vec<&str> = env.keys().map(String::as_str).collect();
    let mut expected = vec![DATABASE_URL, LISTEN, DATA_DIR, API_KEYS];
    expected.sort_unstable();
    assert_eq!(names, expected);
    assert_eq!(env[LISTEN], "0.0.0.0:8080");
    assert_eq!(env[DATA_DIR], "/var/lib/joust");
}

#[test]
fn joust_uses_the_compose_postgres_once_it_is_healthy() {
    let compose = compose();
    let postgres = service(&compose, "postgres");
    let joust = service(&compose, "joust");

    let image = str_of(&postgres["image"]);
    assert!(image.starts_with("postgres:15"), "{image}");
    assert!(
        postgres
            .get("healthcheck")
            .is_some_and(|h| !h["test"].is_null()),
        "postgres needs a healthcheck for joust to wait on"
    );
    assert_eq!(
        str_of(&joust["depends_on"]["postgres"]["condition"]),
        "service_healthy"
    );
    let data_volume = postgres["volumes"]
        .as_sequence()
        .expect("postgres keeps its data in a volume");
    assert!(
        data_volume
            .iter()
            .any(|v| str_of(v).ends_with(":/var/lib/postgresql/data")),
        "{data_volume:?}"
    );

    // DATABASE_URL names that service, its user and its database.
    let pg_env = environment(postgres);
    let url = &environment(joust)[DATABASE_URL];
    let user = &pg_env["POSTGRES_USER"];
    let database = &pg_env["POSTGRES_DB"];
    assert!(
        url.starts_with(&format!("postgres://{user}:")),
        "DATABASE_URL must use POSTGRES_USER: {url}"
    );
    assert!(
        url.ends_with(&format!("@postgres:5432/{database}")),
        "DATABASE_URL must point at the postgres service and POSTGRES_DB: {url}"
    );
    assert!(
        url.contains(&pg_env["POSTGRES_PASSWORD"]),
        "DATABASE_URL must carry POSTGRES_PASSWORD"
    );
}

#[test]
fn the_published_port_is_the_one_joust_listens_on() {
    let compose = compose();
    let joust = service(&compose, "joust");
    let listen_port = port_of(&environment(joust)[LISTEN]);
    assert_eq!(published_container_ports(joust), vec![listen_port]);

    let exposed: Vec<u16> = dockerfile()
        .lines()
        .filter_map(|line| line.trim().strip_prefix("EXPOSE "))
        .flat_map(|ports| ports.split_whitespace().map(|p| p.parse().unwrap()))
        .collect();
    assert_eq!(exposed, vec![listen_port]);
}

#[test]
fn joust_listening_beyond_loopback_requires_api_keys() {
    let compose = compose();
    let env = environment(service(&compose, "joust"));
    let host = env[LISTEN].rsplit_once(':').unwrap().0.to_string();
    let loopback = host == "localhost" || host.starts_with("127.") || host == "[::1]";
    if loopback {
        return;
    }
    let keys = env
        .get(API_KEYS)
        .expect("JOUST_API_KEYS is required when listening beyond loopback");
    // Either compose demands it from the environment (`${VAR:?message}` fails when unset)...
    if let Some(reference) = keys.strip_prefix("${") {
        assert!(
            reference.starts_with(&format!("{API_KEYS}:?")),
            "an unset JOUST_API_KEYS must stop compose, not become empty: {keys}"
        );
        return;
    }
    // ...or it is given literally, as scope:key pairs.
    for pair in keys.split(',') {
        let (scope, key) = pair.split_once(':').expect("scope:key");
        assert!(API_KEY_SCOPES.contains(&scope), "unknown scope {scope}");
        assert!(!key.is_empty(), "empty key for {scope}");
    }
}

#[test]
fn the_image_runs_joust_serve() {
    let entrypoint = dockerfile()
        .lines()
        .filter_map(|line| line.trim().strip_prefix("ENTRYPOINT "))
        .next_back()
        .expect("the Dockerfile has an ENTRYPOINT")
        .to_string();
    let args: Vec<String> =
        serde_json::from_str(&entrypoint).expect("ENTRYPOINT in exec (JSON) form");
    let program = args[0].rsplit('/').next().unwrap();
    assert_eq!(program, "joust", "{args:?}");
    assert_eq!(args.get(1).map(String::as_str), Some("serve"), "{args:?}");

    // Compose must not replace it.
    let compose = compose();
    let joust = service(&compose, "joust");
    assert!(joust.get("entrypoint").is_none() && joust.get("command").is_none());
}
