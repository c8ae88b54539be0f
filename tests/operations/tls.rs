//! TLS both ways, with a private CA made here: joust reaches a Postgres that accepts only TLS
//! connections (`hostssl` in its pg_hba.conf) with `sslmode=verify-full`, while a plain
//! connection, a certificate from an unknown CA and a name the certificate does not carry are
//! refused; and `joust serve --tls-cert --tls-key` serves HTTPS, and serves a certificate swapped
//! on disk to the next connection, without a restart.

use crate::helpers::eventually::eventually;
use crate::helpers::postgres::{self, TempDir};
use crate::helpers::process::{Server, free_port, serve_command};
use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use sqlx::{Connection, PgConnection};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A private CA that issues server certificates.
struct TestCa {
    cert: rcgen::Certificate,
    key: KeyPair,
}

/// A certificate issued by a [`TestCa`], as PEM, and its DER (to compare with what a server
/// presented).
struct Issued {
    cert_pem: String,
    key_pem: String,
    der: Vec<u8>,
}

impl TestCa {
    fn new(name: &str) -> TestCa {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        TestCa {
            cert: params.self_signed(&key).unwrap(),
            key,
        }
    }

    /// A certificate for `names` (host names or IP addresses), with a fresh key.
    fn issue(&self, names: &[&str]) -> Issued {
        let key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let cert = CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &self.cert, &self.key)
            .unwrap();
        Issued {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            der: cert.der().to_vec(),
        }
    }

    fn write_pem(&self, dir: &Path) -> PathBuf {
        let path = dir.join("ca.pem");
        std::fs::write(&path, self.cert.pem()).unwrap();
        path
    }
}

/// Writes `contents` to `path` with `mode`, owned by the owner of `owner_of`.
fn write_private(path: &Path, contents: &str, mode: u32, owner_of: &Path) {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    std::fs::write(path, contents).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    let owner = std::fs::metadata(owner_of).unwrap();
    std::os::unix::fs::chown(path, Some(owner.uid()), Some(owner.gid())).unwrap();
}

/// Turns `pg` into a server that accepts only TLS connections, presenting `issued`.
async fn require_tls(pg: &mut joust::store::embedded::EmbeddedPostgres, issued: &Issued) {
    let data = pg.data_dir().to_path_buf();
    // Postgres refuses a key readable by others, and runs as the data directory's owner.
    write_private(&data.join("server.crt"), &issued.cert_pem, 0o644, &data);
    write_private(&data.join("server.key"), &issued.key_pem, 0o600, &data);
    let conf = data.join("postgresql.conf");
    let mut text = std::fs::read_to_string(&conf).unwrap();
    text.push_str("\nssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n");
    std::fs::write(&conf, text).unwrap();
    let hba = data.join("pg_hba.conf");
    let rules: String = std::fs::read_to_string(&hba)
        .unwrap()
        .lines()
        .map(|line| match line.strip_prefix("host ") {
            Some(rest) => format!("hostssl {rest}\n"),
            None => format!("{line}\n"),
        })
        .collect();
    assert!(
        rules.contains("hostssl"),
        "no host rule to restrict: {rules}"
    );
    std::fs::write(&hba, rules).unwrap();
    pg.restart().await.unwrap();
}

async fn connect_error(url: &str) -> String {
    match PgConnection::connect(url).await {
        Ok(_) => panic!("{url} connected"),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn joust_reaches_a_postgres_that_accepts_only_tls_with_verify_full() {
    let (mut pg, url, dir) = postgres::private_server().await;
    let ca = TestCa::new("joust test database CA");
    let server_cert = ca.issue(&["localhost"]);
    require_tls(&mut pg, &server_cert).await;
    let ca_file = ca.write_pem(dir.path());
    let ca_file = ca_file.to_str().unwrap();
    let by_name = url.replace("@127.0.0.1:", "@localhost:");

    let plain = connect_error(&format!("{url}?sslmode=disable")).await;
    assert!(plain.contains("no encryption"), "{plain}");
    let unknown_ca = connect_error(&format!("{by_name}?sslmode=verify-full")).await;
    assert!(unknown_ca.contains("UnknownIssuer"), "{unknown_ca}");
    // The certificate names `localhost`, not the address.
    let wrong_name =
        connect_error(&format!("{url}?sslmode=verify-full&sslrootcert={ca_file}")).await;
    assert!(wrong_name.contains("not valid for name"), "{wrong_name}");
    // verify-ca checks the issuer (sqlx 0.8 with current rustls also checks the name, so the
    // name the certificate carries is used here too).
    let unknown_ca = connect_error(&format!("{by_name}?sslmode=verify-ca")).await;
    assert!(unknown_ca.contains("UnknownIssuer"), "{unknown_ca}");
    let conn = PgConnection::connect(&format!(
        "{by_name}?sslmode=verify-ca&sslrootcert={ca_file}"
    ))
    .await
    .expect("verify-ca with the CA in the URL");
    let _ = conn.close().await;
    let mut conn = PgConnection::connect(&format!(
        "{by_name}?sslmode=verify-full&sslrootcert={ca_file}"
    ))
    .await
    .expect("verify-full with the CA in the URL");
    let ssl: bool = sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert!(ssl);
    let _ = conn.close().await;

    // joust itself, with the CA given by its flag.
    let server = Server::start_with(&[
        "--database-url",
        &format!("{by_name}?sslmode=verify-full"),
        "--database-ca-file",
        ca_file,
    ]);
    let client = reqwest::Client::new();
    server.wait_ready(&client).await;
    let created = client
        .post(format!("{}/v1/experiments", server.base))
        .json(&serde_json::json!({"name": "over tls", "rankers": ["a", "b"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201, "{:?}", created.text().await);
}

/// `joust serve` over HTTPS with `cert` and `key` in `dir`.
fn https_server(dir: &Path, db_url: &str) -> (Server, String) {
    let port = free_port();
    let cert = dir.join("server.crt");
    let key = dir.join("server.key");
    let command = serve_command(
        port,
        &[
            "--database-url",
            db_url,
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
    );
    (
        Server::spawn(command, port),
        format!("https://localhost:{port}"),
    )
}

/// Replaces `path` as a deployment tool does: a new file renamed over the old one.
fn replace_file(path: &Path, contents: &str) {
    let fresh = path.with_extension("new");
    std::fs::write(&fresh, contents).unwrap();
    std::fs::rename(&fresh, path).unwrap();
}

/// The certificate a fresh connection to `base` is served (answering `/readyz` 200), if any.
async fn served_certificate(ca: &reqwest::Certificate, base: &str) -> Option<Vec<u8>> {
    let client = reqwest::Client::builder()
        .add_root_certificate(ca.clone())
        .tls_info(true)
        .build()
        .unwrap();
    let response = client.get(format!("{base}/readyz")).send().await.ok()?;
    if response.status() != 200 {
        return None;
    }
    let info = response.extensions().get::<reqwest::tls::TlsInfo>()?;
    info.peer_certificate().map(<[u8]>::to_vec)
}

#[tokio::test]
async fn https_serving_picks_up_a_certificate_swapped_on_disk() {
    let db = postgres::fresh_database().await;
    let dir = TempDir::new();
    let ca = TestCa::new("joust test HTTPS CA");
    let first = ca.issue(&["localhost"]);
    std::fs::write(dir.path().join("server.crt"), &first.cert_pem).unwrap();
    std::fs::write(dir.path().join("server.key"), &first.key_pem).unwrap();
    let (_server, base) = https_server(dir.path(), &db);
    let trusted = reqwest::Certificate::from_pem(ca.cert.pem().as_bytes()).unwrap();

    eventually("the HTTPS server answers", Duration::from_secs(60), || {
        let (trusted, base) = (trusted.clone(), base.clone());
        async move { served_certificate(&trusted, &base).await.is_some() }
    })
    .await;
    let served = served_certificate(&trusted, &base).await;
    assert_eq!(served.as_deref(), Some(&first.der[..]));
    // Plain HTTP on the HTTPS port gets no answer.
    let plain = reqwest::get(base.replace("https://", "http://") + "/readyz").await;
    assert!(plain.is_err(), "{plain:?}");

    // The key first, then its certificate: in between the pair does not match, and the server
    // keeps serving the old one until it does.
    let second = ca.issue(&["localhost"]);
    replace_file(&dir.path().join("server.key"), &second.key_pem);
    replace_file(&dir.path().join("server.crt"), &second.cert_pem);
    eventually(
        "a new connection is served the new certificate",
        Duration::from_secs(10),
        || {
            let (trusted, base, expected) = (trusted.clone(), base.clone(), second.der.clone());
            async move { served_certificate(&trusted, &base).await == Some(expected) }
        },
    )
    .await;
}
