//! The embedded local Postgres and the test-database harness built on it.

use crate::helpers::postgres::{TempDir, fresh_database, private_server, with_database};
use joust::store::embedded::{BinarySearch, EmbeddedError, EmbeddedPostgres};
use sqlx::{Connection, PgConnection, PgPool};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Set in the child process of `server_stops_when_its_parent_is_killed`: where to start a server.
const CHILD_DIR_ENV: &str = "JOUST_TEST_PARENT_DIR";

async fn count_rows(url: &str) -> i64 {
    let mut conn = PgConnection::connect(url).await.expect("connect");
    let n = sqlx::query_scalar("SELECT count(*) FROM notes")
        .fetch_one(&mut conn)
        .await
        .expect("count");
    conn.close().await.expect("close");
    n
}

async fn write_note(url: &str, text: &str) {
    let mut conn = PgConnection::connect(url).await.expect("connect");
    sqlx::query("CREATE TABLE IF NOT EXISTS notes (text TEXT NOT NULL)")
        .execute(&mut conn)
        .await
        .expect("create table");
    sqlx::query("INSERT INTO notes (text) VALUES ($1)")
        .bind(text)
        .execute(&mut conn)
        .await
        .expect("insert");
    conn.close().await.expect("close");
}

#[tokio::test]
async fn data_survives_stop_and_restart_on_the_same_port() {
    let dir = TempDir::new();
    let mut pg = EmbeddedPostgres::start(dir.path()).await.expect("start");
    let url = pg.url("joust");
    let pool = PgPool::connect(&url).await.expect("connect");
    let one: i32 = sqlx::query_scalar("SELECT 1")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(one, 1);
    pool.close().await;
    write_note(&url, "before the outage").await;
    let port = pg.port();

    pg.stop().await.expect("stop");
    pg.stop().await.expect("a second stop is a no-op");
    assert!(!pg.is_running());
    assert!(
        PgConnection::connect(&url).await.is_err(),
        "a stopped server must refuse connections"
    );

    pg.restart().await.expect("restart");
    assert_eq!(pg.port(), port, "restart reuses the free port");
    assert_eq!(pg.url("joust"), url);
    assert_eq!(count_rows(&url).await, 1);
}

#[tokio::test]
async fn a_second_start_on_the_same_directory_reuses_the_cluster() {
    let dir = TempDir::new();
    let mut first = EmbeddedPostgres::start(dir.path()).await.expect("start");
    write_note(&first.url("joust"), "kept").await;
    first.stop().await.expect("stop");
    drop(first);

    let second = EmbeddedPostgres::start(dir.path())
        .await
        .expect("start again");
    assert_eq!(count_rows(&second.url("joust")).await, 1);
}

#[tokio::test]
async fn the_password_in_the_url_is_required() {
    let dir = TempDir::new();
    let pg = EmbeddedPostgres::start(dir.path()).await.expect("start");
    let url = pg.url("joust");
    let password = url
        .split_once("joust:")
        .and_then(|(_, rest)| rest.split_once('@'))
        .map(|(password, _)| password.to_string())
        .expect("the URL carries a password");
    assert_eq!(password.len(), 32);

    let wrong = url.replace(&password, "not-the-password");
    let missing = url.replace(&format!(":{password}"), "");
    for bad in [wrong, missing] {
        match PgConnection::connect(&bad).await {
            Ok(_) => panic!("connected without the right password: {bad}"),
            // 28P01 invalid_password; sqlx reports a missing password the same way.
            Err(sqlx::Error::Database(e)) => assert_eq!(e.code().as_deref(), Some("28P01")),
            Err(e) => panic!("expected an authentication error, got {e}"),
        }
    }
    PgConnection::connect(&url).await.expect("right password");

    // The password file is private to its owner.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir.path().join("postgres/password"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn missing_binaries_error_says_how_to_get_them() {
    let dir = TempDir::new();
    let search = BinarySearch {
        path: Some(dir.path().as_os_str().to_owned()),
        versioned_root: dir.path().join("nothing-here"),
    };
    let err = search
        .locate()
        .expect_err("an empty search path has no binaries");
    assert!(matches!(err, EmbeddedError::NoBinaries { .. }));
    let message = err.to_string();
    assert!(message.contains("apt-get install postgresql"), "{message}");
    assert!(message.contains("DATABASE_URL"), "{message}");
}

fn fake_bin_dir(dir: &Path, programs: &[&str]) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    for program in programs {
        let path = dir.join(program);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn binaries_come_from_path_first_then_the_newest_versioned_install() {
    let dir = TempDir::new();
    let root = dir.path().join("lib/postgresql");
    // 16 is newer than 9.6 although it sorts first as a string; 17 lacks initdb.
    fake_bin_dir(&root.join("9.6/bin"), &["initdb", "postgres"]);
    fake_bin_dir(&root.join("16/bin"), &["initdb", "postgres"]);
    fake_bin_dir(&root.join("17/bin"), &["postgres"]);
    let on_path = dir.path().join("on-path");
    let incomplete = dir.path().join("incomplete");
    fake_bin_dir(&incomplete, &["initdb"]);

    let versioned = BinarySearch {
        path: Some(incomplete.as_os_str().to_owned()),
        versioned_root: root.clone(),
    };
    assert_eq!(versioned.locate().unwrap().bin_dir, root.join("16/bin"));

    fake_bin_dir(&on_path, &["initdb", "postgres"]);
    let path = std::env::join_paths([&incomplete, &on_path]).unwrap();
    let with_path = BinarySearch {
        path: Some(path),
        versioned_root: root,
    };
    assert_eq!(with_path.locate().unwrap().bin_dir, on_path);
}

#[tokio::test]
async fn a_stale_postmaster_pid_does_not_block_the_next_start() {
    let dir = TempDir::new();
    let mut pg = EmbeddedPostgres::start(dir.path()).await.expect("start");
    write_note(&pg.url("joust"), "kept").await;
    pg.stop().await.expect("stop");
    let data = pg.data_dir().to_path_buf();
    drop(pg);
    // What a killed server leaves behind, in the case Postgres's own check gets wrong: the pid
    // has been reused by a live, unrelated process of the server's own user. (Postgres takes its
    // parent's and grandparent's pids, and processes it may not signal, for stale; so this is a
    // sibling running as the owner of the data directory.)
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::metadata(&data).unwrap();
    let mut unrelated = Command::new("setpriv")
        .arg(format!("--reuid={}", owner.uid()))
        .arg(format!("--regid={}", owner.gid()))
        .args(["--clear-groups", "sleep", "60"])
        .spawn()
        .expect("spawn sleep");
    let stale = format!("{}\n{}\n", unrelated.id(), data.display());
    std::fs::write(data.join("postmaster.pid"), stale).unwrap();

    let started = EmbeddedPostgres::start(dir.path()).await;
    unrelated.kill().unwrap();
    unrelated.wait().unwrap();
    let pg = started.expect("start over a stale postmaster.pid");
    assert_eq!(count_rows(&pg.url("joust")).await, 1);
}

/// Not a test of its own: the child process of `server_stops_when_its_parent_is_killed`. It starts
/// a server in the directory it is given and waits to be killed.
#[tokio::test]
#[ignore = "run as a child process by server_stops_when_its_parent_is_killed"]
async fn child_holds_a_server_until_killed() {
    let dir = std::env::var(CHILD_DIR_ENV).expect("run by server_stops_when_its_parent_is_killed");
    let pg = EmbeddedPostgres::start(Path::new(&dir))
        .await
        .expect("start");
    // Written whole under another name and renamed, so the parent never reads a half-written URL.
    let partial = Path::new(&dir).join("ready.partial");
    std::fs::write(&partial, pg.url("joust")).unwrap();
    std::fs::rename(&partial, Path::new(&dir).join("ready")).unwrap();
    // The sleep is the test's point: this process stays alive until its parent kills it.
    tokio::time::sleep(Duration::from_secs(600)).await;
    panic!("the parent should have killed this process long ago");
}

#[tokio::test]
async fn server_stops_when_its_parent_is_killed() {
    let dir = TempDir::new();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "embedded_postgres::child_holds_a_server_until_killed",
            "--include-ignored",
        ])
        .env(CHILD_DIR_ENV, dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the child");
    let ready = dir.path().join("ready");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready.exists() {
        assert!(
            Instant::now() < deadline,
            "the child never got its server up"
        );
        assert!(child.try_wait().unwrap().is_none(), "the child died early");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let url = std::fs::read_to_string(&ready).unwrap();
    write_note(&url, "acknowledged before the kill").await;
    let pid_file = dir.path().join("postgres/data/postmaster.pid");
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let pid = pid.lines().next().unwrap().trim().to_string();

    child.kill().expect("SIGKILL the parent");
    child.wait().unwrap();

    // The parent-death signal triggers a fast shutdown, which removes postmaster.pid on exit.
    let deadline = Instant::now() + Duration::from_secs(30);
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            Instant::now() < deadline,
            "postgres (pid {pid}) outlived its killed parent"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The directory is usable again, with the acknowledged row.
    let pg = EmbeddedPostgres::start(dir.path())
        .await
        .expect("start after the kill");
    assert_eq!(count_rows(&pg.url("joust")).await, 1);
}

#[tokio::test]
async fn a_data_directory_the_server_user_cannot_reach_fails_clearly() {
    // Only root has to switch users; as anyone else the server runs as that same user.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let dir = TempDir::new();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();

    let err = EmbeddedPostgres::start(&locked.join("data"))
        .await
        .expect_err("the server's user cannot enter a 0700 root-owned directory");
    assert!(
        matches!(err, EmbeddedError::DirectoryNotReachable { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("search (x) permission"), "{err}");
}

#[tokio::test]
async fn fresh_databases_are_migrated_and_isolated() {
    let a = fresh_database().await;
    let b = fresh_database().await;
    assert_ne!(a, b);
    let expected = joust::store::MIGRATOR.migrations.len() as i64;
    for url in [&a, &b] {
        let mut conn = PgConnection::connect(url).await.expect("connect");
        let applied: i64 =
            sqlx::query_scalar("SELECT count(*) FROM _sqlx_migrations WHERE success")
                .fetch_one(&mut conn)
                .await
                .unwrap();
        assert_eq!(applied, expected);
        let has_table: bool = sqlx::query_scalar("SELECT to_regclass('experiments') IS NOT NULL")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert!(has_table);
    }
    write_note(&a, "only in a").await;
    let mut conn = PgConnection::connect(&b).await.unwrap();
    let visible: bool = sqlx::query_scalar("SELECT to_regclass('notes') IS NOT NULL")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert!(
        !visible,
        "a table made in one test database leaked into another"
    );
}

#[tokio::test]
async fn a_private_server_can_be_taken_down_and_brought_back() {
    let (mut pg, url, _dir) = private_server().await;
    write_note(&url, "survives").await;
    pg.stop().await.expect("stop");
    assert!(PgConnection::connect(&url).await.is_err());
    pg.restart().await.expect("restart");
    assert_eq!(count_rows(&url).await, 1);
    let mut conn = PgConnection::connect(&url).await.unwrap();
    let has_table: bool = sqlx::query_scalar("SELECT to_regclass('experiments') IS NOT NULL")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert!(has_table, "the private database is migrated");
}

#[test]
fn urls_get_their_database_replaced() {
    assert_eq!(
        with_database("postgres://u:p@h:5/old?sslmode=disable", "new"),
        "postgres://u:p@h:5/new?sslmode=disable"
    );
    assert_eq!(
        with_database("postgres://u:p@h:5", "new"),
        "postgres://u:p@h:5/new"
    );
    assert_eq!(with_database("postgres://h/old", "new"), "postgres://h/new");
}

/// The cluster's directory and the server's log are its owner's alone: the log names users,
/// databases and failed statements, and the directory holds the password file.
#[tokio::test]
async fn the_cluster_directory_and_its_log_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let (_pg, _url, dir) = private_server().await;
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let root = dir.path().join("postgres");
    assert_eq!(mode(&root), 0o700, "{}", root.display());
    assert_eq!(mode(&root.join("server.log")), 0o600);
    assert_eq!(mode(&root.join("password")), 0o600);
    assert_eq!(mode(&root.join("data")), 0o700);
}

#[tokio::test]
async fn the_service_role_is_no_superuser_and_takes_over_an_older_clusters_tables() {
    let dir = TempDir::new();
    let mut pg = EmbeddedPostgres::start(dir.path()).await.expect("start");
    // A table the superuser made, as every table of a cluster from before the service role.
    write_note(&pg.url("joust"), "older").await;
    pg.stop().await.expect("stop");
    drop(pg);

    let pg = EmbeddedPostgres::start(dir.path())
        .await
        .expect("start again");
    let url = pg.service_url();
    assert!(url.starts_with("postgres://joust_service:"), "{url}");
    let mut conn = PgConnection::connect(&url)
        .await
        .expect("connect as the service");
    let superuser: bool =
        sqlx::query_scalar("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
            .fetch_one(&mut conn)
            .await
            .unwrap();
    assert!(!superuser);
    // It owns the older table now: it can change it, as a migration would.
    sqlx::query("ALTER TABLE notes ADD COLUMN at TIMESTAMPTZ")
        .execute(&mut conn)
        .await
        .expect("the service owns the older table");
    // What only a superuser may do is refused: reading the server's files, making databases.
    for statement in [
        "SELECT pg_read_file('PG_VERSION')",
        "CREATE DATABASE elsewhere",
        "COPY notes FROM PROGRAM 'true'",
    ] {
        let refused = sqlx::query(statement).execute(&mut conn).await;
        let err = refused.expect_err(statement).to_string();
        assert!(
            err.contains("permission denied")
                || err.contains("must be superuser")
                || err.contains("privilege"),
            "{statement}: {err}"
        );
    }
    conn.close().await.unwrap();
    // The password file is private, like the superuser's.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir.path().join("postgres/service_password"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "{mode:o}");
}
