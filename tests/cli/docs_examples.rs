//! Runs the shell examples of `README.md` and `docs/*.md` as a reader would paste them, and checks
//! that they answer what the docs show.
//!
//! Conventions (docs/testing.md explains them to writers of docs):
//! - Every ```` ```sh ```` block runs, in order per file, in one `bash -euo pipefail` (so shell
//!   variables carry from one block to the next, as in a reader's terminal), with the `joust`
//!   binary of this build first on `PATH` and a working directory whose `data/` and `scripts/` are
//!   the repository's. Each file gets a fresh `joust serve` on a fresh database (so experiment ids
//!   start at 1); the docs' `localhost:8080` is rewritten to that server's port.
//! - A block that cannot run here (Docker, `scripts/serve`, long simulations, ...) is preceded by
//!   `<!-- no-run: why -->`; the test counts those and prints why.
//! - A comment `# => ANSWER` after commands (continued on lines starting `#    `) is what those
//!   commands print, checked against what they really print. JSON is compared by value: `...` as
//!   a value or an array member matches any one value, `[...]` any array, `...` as a member of
//!   an object any further keys (without it the keys must be exactly those shown), and a string
//!   ending in `...` any string starting with the rest. Any other answer is text: each
//!   of its lines must appear, in order, among the printed lines, `...` matching any characters
//!   and runs of spaces counting as one.
//! - Shell blocks are fenced as `sh`: `bash`, `shell` and `console` fences are refused, so that no
//!   example escapes the test by its fence.

use crate::helpers::postgres;
use crate::helpers::process::{Server, free_port, serve_command};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What a block marks itself with to be skipped, in an HTML comment on the line before it.
const NO_RUN: &str = "<!-- no-run:";
/// How the docs address the server; rewritten to the test server's address.
const DOC_ADDRESSES: [&str; 2] = ["localhost:8080", "127.0.0.1:8080"];
/// A whole file's examples may take this long (the longest is a short simulation).
const FILE_TIMEOUT_SECS: u32 = 300;

/// One fenced shell block of a document.
struct Block {
    /// Line of the opening fence (1-based).
    line: usize,
    /// `Some(reason)` when marked no-run.
    skip: Option<String>,
    /// Commands and the answers shown after them.
    steps: Vec<Step>,
}

/// Commands, then what they print (`None` when the docs show nothing to check).
struct Step {
    line: usize,
    commands: String,
    expected: Option<String>,
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, then docs/*.md by name.
fn documents() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    docs.insert(0, repo().join("README.md"));
    docs
}

/// The shell blocks of a Markdown text; refuses shell blocks fenced as anything but `sh`.
fn parse_blocks(text: &str, file: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim_start();
        let Some(info) = trimmed.strip_prefix("```") else {
            i += 1;
            continue;
        };
        let indent = lines[i].len() - trimmed.len();
        let lang = info.split_whitespace().next().unwrap_or("");
        assert!(
            !matches!(lang, "bash" | "shell" | "console" | "shell-session" | "zsh"),
            "{file}:{}: fence shell examples as ```sh (so that the docs test runs them)",
            i + 1
        );
        let start = i;
        i += 1;
        let mut body = Vec::new();
        while i < lines.len() && !lines[i].trim_start().starts_with("```") {
            let line = lines[i];
            body.push((i + 1, line.get(indent..).unwrap_or(line.trim_start())));
            i += 1;
        }
        i += 1;
        if lang != "sh" {
            continue;
        }
        let skip = lines[..start]
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| l.trim().strip_prefix(NO_RUN))
            .map(|rest| rest.trim_end_matches("-->").trim().to_string());
        if let Some(reason) = &skip {
            assert!(
                !reason.is_empty(),
                "{file}:{}: say why in <!-- no-run: why -->",
                start + 1
            );
        }
        blocks.push(Block {
            line: start + 1,
            skip,
            steps: steps(&body),
        });
    }
    blocks
}

/// Splits a block's lines at its `# =>` answers.
fn steps(body: &[(usize, &str)]) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut commands = String::new();
    let mut first_line = body.first().map_or(0, |(n, _)| *n);
    let mut k = 0;
    while k < body.len() {
        let (n, line) = body[k];
        if let Some(answer) = line.trim_start().strip_prefix("# =>") {
            let mut expected = answer.trim().to_string();
            k += 1;
            while k < body.len() && body[k].1.trim_start().starts_with("#    ") {
                expected.push('\n');
                expected.push_str(body[k].1.trim_start()[1..].trim());
                k += 1;
            }
            steps.push(Step {
                line: n,
                commands: std::mem::take(&mut commands),
                expected: Some(expected),
            });
            first_line = body.get(k).map_or(n, |(n, _)| *n);
            continue;
        }
        commands.push_str(line);
        commands.push('\n');
        k += 1;
    }
    if !commands.trim().is_empty() {
        steps.push(Step {
            line: first_line,
            commands,
            expected: None,
        });
    }
    steps
}

/// Turns an answer as the docs show it into JSON values with wildcards marked, or `None` when it
/// is not JSON.
fn parse_expected_json(text: &str) -> Option<Vec<Value>> {
    let mut out = String::with_capacity(text.len());
    let mut stack: Vec<char> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut prev = ' ';
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        if c == '.' && chars.get(i + 1) == Some(&'.') && chars.get(i + 2) == Some(&'.') {
            match (prev, stack.last()) {
                (':', _) => out.push_str(r#""\u0001ANY""#),
                // In an array, `...` is one member, any; `[...]` alone is any array.
                ('[', Some('[')) if next_non_space(&chars, i + 3) == Some(']') => {
                    out.push_str(r#""\u0001REST""#)
                }
                (_, Some('[')) => out.push_str(r#""\u0001ANY""#),
                (_, Some('{')) => out.push_str(r#""\u0001REST": null"#),
                _ => return None,
            }
            prev = '.';
            i += 3;
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => stack.push(c),
            '}' | ']' => {
                stack.pop();
            }
            _ => {}
        }
        if !c.is_whitespace() {
            prev = c;
        }
        out.push(c);
        i += 1;
    }
    let values: Result<Vec<Value>, _> = serde_json::Deserializer::from_str(&out)
        .into_iter::<Value>()
        .collect();
    values
        .ok()
        .filter(|v| !v.is_empty() && v.iter().all(|v| v.is_object() || v.is_array()))
}

fn next_non_space(chars: &[char], from: usize) -> Option<char> {
    chars[from..].iter().copied().find(|c| !c.is_whitespace())
}

const ANY: &str = "\u{1}ANY";
const REST: &str = "\u{1}REST";

/// Whether `actual` is what `expected` (with wildcards) shows.
fn json_matches(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::String(e), _) if e == ANY => true,
        (Value::String(e), Value::String(a)) => match e.strip_suffix("...") {
            Some(prefix) => a.starts_with(prefix),
            None => e == a,
        },
        (Value::Number(e), Value::Number(a)) => e.as_f64() == a.as_f64(),
        (Value::Object(e), Value::Object(a)) => {
            let open = e.contains_key(REST);
            e.iter()
                .filter(|(k, _)| *k != REST)
                .all(|(k, v)| a.get(k).is_some_and(|a| json_matches(v, a)))
                && (open || a.keys().all(|k| e.contains_key(k)))
        }
        (Value::Array(e), Value::Array(a)) => {
            let open = e.last().is_some_and(|v| v == REST);
            let shown = if open { &e[..e.len() - 1] } else { &e[..] };
            (if open {
                a.len() >= shown.len()
            } else {
                a.len() == shown.len()
            }) && shown.iter().zip(a).all(|(e, a)| json_matches(e, a))
        }
        _ => expected == actual,
    }
}

/// Whether `line` matches `pattern`, in which `...` matches any characters.
fn glob_matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split("...").collect();
    let mut rest = line;
    for (k, part) in parts.iter().enumerate() {
        if k == 0 {
            let Some(r) = rest.strip_prefix(part) else {
                return false;
            };
            rest = r;
        } else if k == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            let Some(at) = rest.find(part) else {
                return false;
            };
            rest = &rest[at + part.len()..];
        }
    }
    rest.is_empty()
}

fn squeeze(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `None` when `actual` is what the docs show, else why not.
fn compare(expected: &str, actual: &str) -> Option<String> {
    if let Some(shown) = parse_expected_json(expected) {
        let got: Result<Vec<Value>, _> = serde_json::Deserializer::from_str(actual)
            .into_iter::<Value>()
            .collect();
        return match got {
            Ok(got) if got.len() == shown.len() => {
                let ok = shown.iter().zip(&got).all(|(e, a)| json_matches(e, a));
                (!ok).then(|| "the JSON differs".to_string())
            }
            Ok(got) => Some(format!(
                "{} JSON values shown, {} printed",
                shown.len(),
                got.len()
            )),
            Err(e) => Some(format!("the docs show JSON but the output is not: {e}")),
        };
    }
    let printed: Vec<String> = actual.lines().map(squeeze).collect();
    let mut from = 0;
    for want in expected.lines().map(squeeze) {
        match printed[from..].iter().position(|l| glob_matches(&want, l)) {
            Some(at) => from += at + 1,
            None => return Some(format!("no printed line (in order) matches `{want}`")),
        }
    }
    None
}

/// The script that runs a file's blocks, each step's output going to `out/STEP`.
fn script(blocks: &[&Block], port: u16, state: &Path) -> String {
    let mut s = String::new();
    let address = format!("127.0.0.1:{port}");
    let mut n = 0;
    for block in blocks {
        for step in &block.steps {
            let mut commands = step.commands.clone();
            for doc_address in DOC_ADDRESSES {
                commands = commands.replace(doc_address, &address);
            }
            writeln!(s, "echo {} > {}/at", step.line, state.display()).unwrap();
            if step.expected.is_some() {
                writeln!(s, "{{\n{commands}\n}} > {}/out.{n}", state.display()).unwrap();
            } else {
                s.push_str(&commands);
                s.push('\n');
            }
            n += 1;
        }
    }
    s
}

/// A scratch directory whose `data/` and `scripts/` are the repository's.
fn workdir(root: &Path) -> PathBuf {
    let work = root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    for dir in ["data", "scripts"] {
        std::os::unix::fs::symlink(repo().join(dir), work.join(dir)).unwrap();
    }
    work
}

/// Runs one file's runnable blocks on a fresh server; returns its failures.
async fn run_file(name: &str, blocks: &[&Block], root: &Path) -> Vec<String> {
    // A fresh database (experiment ids start at 1) on the test binary's Postgres: much faster to
    // make than a cluster of its own, and the server is the real `joust serve` all the same.
    let database = postgres::fresh_database().await;
    let port = free_port();
    let mut command = serve_command(port, &["--database-url", &database]);
    // Its shutdown at the end of each file is not news.
    command.env("RUST_LOG", "error");
    let mut server = Server::spawn(command, port);
    server.wait_ready(&reqwest::Client::new()).await;
    let state = root.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let script_path = root.join("examples.sh");
    std::fs::write(&script_path, script(blocks, port, &state)).unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_joust")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("timeout")
        .arg(FILE_TIMEOUT_SECS.to_string())
        .args(["bash", "-euo", "pipefail"])
        .arg(&script_path)
        .current_dir(workdir(root))
        .env("PATH", path)
        .env_remove("DATABASE_URL")
        .env("RUST_LOG", "warn")
        .output()
        .expect("run bash");
    server.terminate();

    let mut failures = Vec::new();
    if !output.status.success() {
        let at = std::fs::read_to_string(state.join("at")).unwrap_or_default();
        failures.push(format!(
            "{name}:{}: the example failed ({}):\n--- stdout\n{}--- stderr\n{}",
            at.trim(),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let mut n = 0;
    for block in blocks {
        for step in &block.steps {
            if let Some(expected) = &step.expected {
                if let Ok(actual) = std::fs::read_to_string(state.join(format!("out.{n}"))) {
                    if let Some(why) = compare(expected, &actual) {
                        failures.push(format!(
                            "{name}:{}: {why}\n--- the docs show\n{expected}\n--- printed\n{actual}",
                            step.line
                        ));
                    }
                }
            }
            n += 1;
        }
    }
    failures
}

#[tokio::test]
async fn docs_examples_run_as_shown() {
    for tool in ["bash", "curl", "jq", "timeout"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            found,
            "the docs examples need {tool} (apt-get install curl jq coreutils)"
        );
    }
    let mut ran = 0;
    let mut checked = 0;
    let mut skipped = Vec::new();
    let mut failures = Vec::new();
    for path in documents() {
        let name = path.strip_prefix(repo()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let blocks = parse_blocks(&text, &name);
        for block in &blocks {
            if let Some(reason) = &block.skip {
                skipped.push(format!("{name}:{}: {reason}", block.line));
            }
        }
        let runnable: Vec<&Block> = blocks.iter().filter(|b| b.skip.is_none()).collect();
        if runnable.is_empty() {
            continue;
        }
        ran += runnable.len();
        checked += runnable
            .iter()
            .flat_map(|b| &b.steps)
            .filter(|s| s.expected.is_some())
            .count();
        let root = postgres::TempDir::new();
        failures.extend(run_file(&name, &runnable, root.path()).await);
    }
    println!(
        "docs examples: {ran} blocks ran ({checked} answers checked), {} skipped",
        skipped.len()
    );
    for s in &skipped {
        println!("  skipped {s}");
    }
    assert!(ran > 0, "no runnable example found");
    assert!(
        failures.is_empty(),
        "{} docs example(s) failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn answers_compare_with_wildcards() {
    let actual = r#"{"id": 1, "rankers": ["a", "b"], "duel_token": "AQAAxyz", "extra": true}"#;
    assert_eq!(
        compare(
            r#"{"id": 1, "rankers": [...], "duel_token": "AQAA...", ...}"#,
            actual
        ),
        None
    );
    assert!(compare(r#"{"id": 2, ...}"#, actual).is_some());
    assert!(compare(r#"{"id": 1}"#, actual).is_some(), "closed object");
    assert!(compare(r#"{"rankers": ["a"], ...}"#, actual).is_some());
    assert_eq!(compare(r#"{"rankers": ["a", ...], ...}"#, actual), None);
    assert_eq!(compare(r#"{"rankers": [...], ...}"#, actual), None);
    assert!(compare(r#"{"rankers": [..., ..., ...], ...}"#, actual).is_some());
    assert!(compare(r#"{"rankers": [...], "id": 1}"#, actual).is_some());
    assert!(compare(r#"{"id": 1, ...}"#, "not json").is_some());
    let text = "header\nrucb    12 steps/s   regret   1215.4 +- 24.6\nwrote x";
    assert_eq!(compare("rucb ... regret 1215.4 +- 24.6", text), None);
    assert!(compare("rucb ... regret 1215.5 +- 24.6", text).is_some());
    assert!(compare("wrote x\nheader", text).is_some(), "order counts");
}
