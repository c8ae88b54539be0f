//! An application that writes only the state row and its counts is one statement, a
//! transaction of its own, that turns off the wait for its WAL flush for that transaction alone.
//! Here a deferred trigger reads the setting at the moment of the commit; the session's setting
//! afterwards must be the default again, or the acknowledgements that session runs next would
//! be answered before they are durable.

use serde_json::json;

use crate::helpers::http_server::{TestApp, spawn_app_with, test_options};
use crate::helpers::postgres::fresh_database;
use joust::store::{StateWrite, write_state_alone};

/// Records `synchronous_commit` as it is when a transaction that logged an application commits
/// (a deferred constraint trigger runs at the commit, inside the transaction).
const RECORD_THE_COMMIT_SETTING: [&str; 3] = [
    "CREATE TABLE commit_settings (setting TEXT NOT NULL)",
    "CREATE FUNCTION record_commit_setting() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
         INSERT INTO commit_settings VALUES (current_setting('synchronous_commit'));
         RETURN NULL;
     END $$",
    "CREATE CONSTRAINT TRIGGER record_commit_setting AFTER INSERT ON outcome_applies
     DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION record_commit_setting()",
];

type StateRow = (i64, serde_json::Value, i64, uuid::Uuid);

async fn state_row(conn: &mut sqlx::PgConnection, id: i64) -> StateRow {
    sqlx::query_as(
        "SELECT version, policy_state, applied_xid, applied_duel
         FROM experiment_state WHERE experiment_id = $1",
    )
    .bind(id)
    .fetch_one(conn)
    .await
    .unwrap()
}

async fn recorded_settings(conn: &mut sqlx::PgConnection) -> Vec<String> {
    sqlx::query_scalar("SELECT setting FROM commit_settings")
        .fetch_all(conn)
        .await
        .unwrap()
}

/// A server on a fresh database with a three-ranker experiment, and a pool on that database.
async fn experiment() -> (TestApp, sqlx::PgPool, i64) {
    let db = fresh_database().await;
    let app = spawn_app_with(&db, "", test_options()).await;
    let id = app
        .create_experiment(&["a", "b", "c"], json!({"name": "rucb"}))
        .await;
    let pool = joust::store::pool_options().connect(&db).await.unwrap();
    (app, pool, id)
}

#[tokio::test]
async fn an_application_alone_commits_without_its_flush_and_leaves_the_session_as_it_was() {
    let (_app, pool, id) = experiment().await;
    let mut conn = pool.acquire().await.unwrap();
    for sql in RECORD_THE_COMMIT_SETTING {
        sqlx::query(sql).execute(&mut *conn).await.unwrap();
    }

    let (version, policy_state, xid, duel) = state_row(&mut conn, id).await;
    let write = StateWrite {
        experiment: id,
        from_version: version,
        applications: &[(version + 1, (xid, duel))],
        policy_state: &policy_state,
        applied: 2,
        ties: 0,
        at: chrono::Utc::now(),
        win_cells: &[(0, 1, 2)],
        tie_cells: &[],
    };
    let written = write_state_alone(&mut *conn, &write).await.unwrap();
    assert_eq!(written, Some(version + 1));
    assert_eq!(
        recorded_settings(&mut conn).await,
        ["off"],
        "the application's own commit does not wait for its flush"
    );
    let session: String = sqlx::query_scalar("SHOW synchronous_commit")
        .fetch_one(&mut *conn)
        .await
        .unwrap();
    assert_eq!(
        session, "on",
        "the session's later transactions wait for their flush again"
    );

    // The same write again starts from a version that is gone: nothing is written.
    assert_eq!(write_state_alone(&mut *conn, &write).await.unwrap(), None);
    assert_eq!(state_row(&mut conn, id).await.0, version + 1);
    let wins: i64 = sqlx::query_scalar(
        "SELECT wins FROM win_counts WHERE experiment_id = $1 AND winner = 0 AND loser = 1",
    )
    .bind(id)
    .fetch_one(&mut *conn)
    .await
    .unwrap();
    assert_eq!(wins, 2);
    assert_eq!(recorded_settings(&mut conn).await, ["off"]);
}

#[tokio::test]
async fn a_write_of_held_applications_logs_each_one_and_moves_to_the_last_version() {
    let (_app, pool, id) = experiment().await;
    let mut conn = pool.acquire().await.unwrap();
    let (version, policy_state, xid, duel) = state_row(&mut conn, id).await;
    let held = [
        (version + 1, (xid, duel)),
        (version + 2, (xid, duel)),
        (version + 3, (xid, duel)),
    ];
    let write = StateWrite {
        experiment: id,
        from_version: version,
        applications: &held,
        policy_state: &policy_state,
        applied: 3,
        ties: 1,
        at: chrono::Utc::now(),
        win_cells: &[(0, 1, 2), (2, 1, 1)],
        tie_cells: &[(0, 2, 1)],
    };
    assert_eq!(
        write_state_alone(&mut *conn, &write).await.unwrap(),
        Some(version + 3)
    );
    let logged: Vec<i64> = sqlx::query_scalar(
        "SELECT version FROM outcome_applies WHERE experiment_id = $1 ORDER BY version",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await
    .unwrap();
    assert_eq!(logged, [version + 1, version + 2, version + 3]);
    let (applied, ties): (i64, i64) = sqlx::query_as(
        "SELECT outcomes_applied, ties_applied FROM experiment_state WHERE experiment_id = $1",
    )
    .bind(id)
    .fetch_one(&mut *conn)
    .await
    .unwrap();
    assert_eq!((applied, ties), (3, 1));
    // A write fenced on the version the held ones started from finds it gone: nothing changes.
    assert_eq!(write_state_alone(&mut *conn, &write).await.unwrap(), None);
    assert_eq!(state_row(&mut conn, id).await.0, version + 3);
}
