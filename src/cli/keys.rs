//! `joust keys create|list|revoke`: the API keys stored by a running server, through its API
//! (`/v1/keys`) with an admin key. The admin key comes from `JOUST_API_KEY` (or `--key`, which
//! shows in `ps`); the created key is printed once, on stdout, and is not kept anywhere else.

use anyhow::Context;
use serde_json::{Value, json};

#[derive(Debug, clap::Args)]
pub struct KeysArgs {
    /// The server's base URL.
    #[arg(long, env = "JOUST_URL", default_value = "http://127.0.0.1:8080")]
    url: String,
    /// An admin key: a global one manages every key, a project's its project's keys.
    #[arg(long, env = "JOUST_API_KEY", hide_env_values = true)]
    key: Option<String>,
    #[command(subcommand)]
    action: KeysAction,
}

#[derive(Debug, clap::Subcommand)]
enum KeysAction {
    /// Make a key and print it (shown this once).
    Create {
        /// admin, ingest or read.
        #[arg(long)]
        scope: String,
        /// The key's project; omitted: the admin key's project, or a global key when the admin
        /// key is global.
        #[arg(long)]
        project: Option<String>,
        /// A label for people: who holds the key.
        #[arg(long)]
        name: Option<String>,
        /// When the key stops working: an RFC 3339 time, or a span from now (`90d`, `12h`,
        /// `30m`).
        #[arg(long)]
        expires: Option<String>,
    },
    /// List the keys (id, prefix, project, scope, name, expiry, revocation); never the keys.
    List,
    /// Revoke a key by its id: refused by every replica within seconds.
    Revoke { id: i64 },
}

/// `90d`, `12h`, `30m`, `45s` from now, or an RFC 3339 time, as RFC 3339.
fn expiry(text: &str) -> anyhow::Result<String> {
    if let Ok(at) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(at.to_rfc3339());
    }
    let (number, unit) = text.split_at(text.len().saturating_sub(1));
    let n: i64 = number
        .parse()
        .with_context(|| format!("--expires {text:?}: give an RFC 3339 time or e.g. 90d"))?;
    let span = match unit {
        "d" => chrono::Duration::days(n),
        "h" => chrono::Duration::hours(n),
        "m" => chrono::Duration::minutes(n),
        "s" => chrono::Duration::seconds(n),
        _ => anyhow::bail!("--expires {text:?}: the unit is d, h, m or s"),
    };
    Ok((chrono::Utc::now() + span).to_rfc3339())
}

pub fn run(args: KeysArgs) -> anyhow::Result<()> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(run_async(args))
}

async fn run_async(args: KeysArgs) -> anyhow::Result<()> {
    let client = reqwest::Client::new();
    let base = args.url.trim_end_matches('/');
    let (method, path, body) = match &args.action {
        KeysAction::Create {
            scope,
            project,
            name,
            expires,
        } => {
            let mut body = json!({ "scope": scope });
            if let Some(p) = project {
                body["project"] = json!(p);
            }
            if let Some(n) = name {
                body["name"] = json!(n);
            }
            if let Some(e) = expires {
                body["expires_at"] = json!(expiry(e)?);
            }
            (reqwest::Method::POST, "/v1/keys".to_string(), Some(body))
        }
        KeysAction::List => (reqwest::Method::GET, "/v1/keys".to_string(), None),
        KeysAction::Revoke { id } => (reqwest::Method::DELETE, format!("/v1/keys/{id}"), None),
    };
    let mut request = client.request(method, format!("{base}{path}"));
    if let Some(key) = &args.key {
        request = request.bearer_auth(key);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request
        .send()
        .await
        .with_context(|| format!("cannot reach {base}"))?;
    let status = response.status();
    let answer: Value = response.json().await.unwrap_or(Value::Null);
    if !status.is_success() {
        let message = answer["error"]["message"].as_str().unwrap_or("no message");
        anyhow::bail!("{status}: {message}");
    }
    match &args.action {
        KeysAction::Create { .. } => {
            eprintln!(
                "key {} ({}, {}): shown this once",
                answer["id"],
                answer["scope"].as_str().unwrap_or("?"),
                answer["project"].as_str().unwrap_or("global"),
            );
            println!("{}", answer["key"].as_str().unwrap_or_default());
        }
        KeysAction::List => {
            println!("id\tprefix\tproject\tscope\tname\texpires_at\trevoked_at");
            for key in answer["keys"].as_array().into_iter().flatten() {
                let text = |field: &str| key[field].as_str().unwrap_or("-").to_string();
                println!(
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}",
                    key["id"],
                    text("prefix"),
                    key["project"].as_str().unwrap_or("(global)"),
                    text("scope"),
                    text("name"),
                    text("expires_at"),
                    text("revoked_at"),
                );
            }
        }
        KeysAction::Revoke { id } => println!("key {id} revoked"),
    }
    Ok(())
}
