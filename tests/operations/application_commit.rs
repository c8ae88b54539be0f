//! An application that writes only the state row and its counts is one statement, a
//! transaction of its own, that turns off the wait for its WAL flush for that transaction alone.
//! Here a deferred trigger reads the setting at the moment of the commit; the session's setting
//! afterwards must be the default again, or the acknowledgements that session runs next would
//! be answered before they are durable.

use serde_json::json;

use crate::helpers::http_server::{TestApp, spawn_app_with, test_options};
use crate::helpers::postgres::fresh_database;
use joust::store::{StateWrite, write_states_alone};

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
    let write = [StateWrite {
        experiment: id,
        from_version: version,
        applications: vec![(version + 1, (xid, duel))],
        policy_state,
        applied: 2,
        ties: 0,
        at: chrono::Utc::now(),
        win_cells: vec![(0, 1, 2)],
        tie_cells: vec![],
    }];
    let written = write_states_alone(&mut *conn, &write).await.unwrap();
    assert_eq!(written, [Some(version + 1)]);
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
    assert_eq!(
        write_states_alone(&mut *conn, &write).await.unwrap(),
        [None]
    );
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
    let (version, policy_state, xid, _) = state_row(&mut conn, id).await;
    // Each application's own last row, so the log must keep them apart and in order.
    let held = [
        (version + 1, (xid + 1, uuid::Uuid::from_u128(1))),
        (version + 2, (xid + 1, uuid::Uuid::from_u128(7))),
        (version + 3, (xid + 2, uuid::Uuid::from_u128(3))),
    ];
    let write = [StateWrite {
        experiment: id,
        from_version: version,
        applications: held.to_vec(),
        policy_state,
        applied: 3,
        ties: 1,
        at: chrono::Utc::now(),
        win_cells: vec![(0, 1, 2), (2, 1, 1)],
        tie_cells: vec![(0, 2, 1)],
    }];
    assert_eq!(
        write_states_alone(&mut *conn, &write).await.unwrap(),
        [Some(version + 3)]
    );
    // One log row for the write; the view gives each application its version and last row.
    let logged: Vec<(i64, i64, uuid::Uuid)> = sqlx::query_as(
        "SELECT version, through_xid, through_duel FROM applied_versions
         WHERE experiment_id = $1 ORDER BY version",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await
    .unwrap();
    let expected: Vec<(i64, i64, uuid::Uuid)> = held.iter().map(|&(v, (x, d))| (v, x, d)).collect();
    assert_eq!(logged, expected);
    let rows: i64 =
        sqlx::query_scalar("SELECT count(*) FROM outcome_applies WHERE experiment_id = $1")
            .bind(id)
            .fetch_one(&mut *conn)
            .await
            .unwrap();
    assert_eq!(rows, 1);
    let (applied, ties): (i64, i64) = sqlx::query_as(
        "SELECT outcomes_applied, ties_applied FROM experiment_state WHERE experiment_id = $1",
    )
    .bind(id)
    .fetch_one(&mut *conn)
    .await
    .unwrap();
    assert_eq!((applied, ties), (3, 1));
    // A write fenced on the version the held ones started from finds it gone: nothing changes.
    assert_eq!(
        write_states_alone(&mut *conn, &write).await.unwrap(),
        [None]
    );
    assert_eq!(state_row(&mut conn, id).await.0, version + 3);
}

#[tokio::test]
async fn a_write_whose_applications_skip_a_version_is_refused_and_writes_nothing() {
    let (_app, pool, id) = experiment().await;
    let mut conn = pool.acquire().await.unwrap();
    let row = state_row(&mut conn, id).await;
    let mut write = next_write(id, &row, row.0, 2);
    // The log derives the held versions from the last one: v + 1, v + 3 cannot be logged.
    write.applications = vec![(row.0 + 1, (row.2, row.3)), (row.0 + 3, (row.2, row.3))];
    let refused = write_states_alone(&mut *conn, std::slice::from_ref(&write)).await;
    let message = refused
        .expect_err("a chain that skips a version")
        .to_string();
    assert!(message.contains("consecutive versions"), "{message}");
    assert_eq!(state_row(&mut conn, id).await, row);
    assert!(win_cells(&mut conn, id).await.is_empty());
}

/// The experiment's win counts, as (winner, loser, wins) in order.
async fn win_cells(conn: &mut sqlx::PgConnection, id: i64) -> Vec<(i32, i32, i64)> {
    sqlx::query_as(
        "SELECT winner, loser, wins FROM win_counts WHERE experiment_id = $1
         ORDER BY winner, loser",
    )
    .bind(id)
    .fetch_all(conn)
    .await
    .unwrap()
}

#[tokio::test]
async fn a_batched_write_adds_to_counted_cells_and_inserts_new_ones() {
    let (_app, pool, id) = experiment().await;
    let mut conn = pool.acquire().await.unwrap();
    let before = win_cells(&mut conn, id).await;
    assert!(before.is_empty(), "no outcome was posted: {before:?}");
    let row = state_row(&mut conn, id).await;
    let mut first = next_write(id, &row, row.0, 2);
    first.win_cells = vec![(0, 1, 2), (2, 1, 1)];
    first.applied = 3;
    assert_eq!(
        write_states_alone(&mut *conn, std::slice::from_ref(&first))
            .await
            .unwrap(),
        [Some(row.0 + 1)]
    );
    // Two counted cells and two new ones.
    let row = state_row(&mut conn, id).await;
    let mut second = next_write(id, &row, row.0, 3);
    second.win_cells = vec![(0, 1, 3), (1, 0, 3), (1, 2, 1), (2, 1, 4)];
    second.applied = 11;
    assert_eq!(
        write_states_alone(&mut *conn, std::slice::from_ref(&second))
            .await
            .unwrap(),
        [Some(row.0 + 1)]
    );
    assert_eq!(
        win_cells(&mut conn, id).await,
        [(0, 1, 5), (1, 0, 3), (1, 2, 1), (2, 1, 5)]
    );
    let ties: i64 = sqlx::query_scalar(
        "SELECT ties FROM tie_counts WHERE experiment_id = $1 AND a = 0 AND b = 2",
    )
    .bind(id)
    .fetch_one(&mut *conn)
    .await
    .unwrap();
    assert_eq!(ties, 2);
}

/// A write of experiment `id` from its stored state to the next version, adding `wins` to the
/// cell (0, 1) and a tie to (0, 2); `from_version` as given.
fn next_write(id: i64, row: &StateRow, from_version: i64, wins: i64) -> StateWrite {
    let (version, policy_state, xid, duel) = row.clone();
    StateWrite {
        experiment: id,
        from_version,
        applications: vec![(version + 1, (xid, duel))],
        policy_state,
        applied: wins,
        ties: 1,
        at: chrono::Utc::now(),
        win_cells: vec![(0, 1, wins)],
        tie_cells: vec![(0, 2, 1)],
    }
}

/// The stored counts of an experiment: (version, applied, ties, wins of 0 over 1, ties of 0 and
/// 2, versions logged).
async fn stored(conn: &mut sqlx::PgConnection, id: i64) -> (i64, i64, i64, i64, i64, Vec<i64>) {
    sqlx::query_as(
        "SELECT s.version, s.outcomes_applied, s.ties_applied,
                COALESCE((SELECT wins FROM win_counts w WHERE w.experiment_id = $1
                          AND w.winner = 0 AND w.loser = 1), 0),
                COALESCE((SELECT ties FROM tie_counts t WHERE t.experiment_id = $1
                          AND t.a = 0 AND t.b = 2), 0),
                ARRAY(SELECT version FROM applied_versions a WHERE a.experiment_id = $1
                      ORDER BY version)
         FROM experiment_state s WHERE s.experiment_id = $1",
    )
    .bind(id)
    .fetch_one(conn)
    .await
    .unwrap()
}

/// Three more experiments on the app's database, besides the first.
async fn three_more(app: &TestApp) -> Vec<i64> {
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(
            app.create_experiment(&["a", "b", "c"], json!({"name": "rucb"}))
                .await,
        );
    }
    ids
}

#[tokio::test]
async fn a_batch_writes_every_experiment_whose_base_is_current_and_nothing_of_a_stale_one() {
    let (app, pool, first) = experiment().await;
    let mut ids = vec![first];
    ids.extend(three_more(&app).await);
    let mut conn = pool.acquire().await.unwrap();
    let mut rows = Vec::new();
    for &id in &ids {
        rows.push(state_row(&mut conn, id).await);
    }
    let before: Vec<_> = {
        let mut b = Vec::new();
        for &id in &ids {
            b.push(stored(&mut conn, id).await);
        }
        b
    };
    // Out of experiment order, and the third one fenced on a version that is not stored.
    let stale = 2;
    let order = [3, 0, 2, 1];
    let writes: Vec<StateWrite> = order
        .iter()
        .map(|&k| {
            let from = rows[k].0 - i64::from(k == stale);
            next_write(ids[k], &rows[k], from, k as i64 + 1)
        })
        .collect();
    let written = write_states_alone(&mut *conn, &writes).await.unwrap();
    let expected: Vec<Option<i64>> = order
        .iter()
        .map(|&k| (k != stale).then_some(rows[k].0 + 1))
        .collect();
    assert_eq!(
        written, expected,
        "answers in the order the writes were given"
    );
    for (k, &id) in ids.iter().enumerate() {
        let now = stored(&mut conn, id).await;
        if k == stale {
            assert_eq!(now, before[k], "the stale write changed nothing");
            continue;
        }
        let (version, applied, ties, _, _, logged) = &before[k];
        let mut logged = logged.clone();
        logged.push(version + 1);
        let wins = k as i64 + 1;
        assert_eq!(
            now,
            (version + 1, applied + wins, ties + 1, wins, 1, logged),
            "experiment {k}: its version, counters, cells and log written"
        );
    }
}

#[tokio::test]
async fn two_writes_of_one_experiment_in_a_batch_write_one_of_them_whole() {
    let (_app, pool, id) = experiment().await;
    let mut conn = pool.acquire().await.unwrap();
    let row = state_row(&mut conn, id).await;
    let writes = [
        next_write(id, &row, row.0, 2),
        next_write(id, &row, row.0, 5),
    ];
    let written = write_states_alone(&mut *conn, &writes).await.unwrap();
    let winner = match written.as_slice() {
        [Some(_), None] => 2,
        [None, Some(_)] => 5,
        other => panic!("exactly one of the two writes: {other:?}"),
    };
    let (version, applied, ties, wins, tied, logged) = stored(&mut conn, id).await;
    assert_eq!((version, applied, ties), (row.0 + 1, winner, 1));
    assert_eq!((wins, tied), (winner, 1), "only the written one's cells");
    assert_eq!(logged, [row.0 + 1], "only the written one's log entry");
}

#[tokio::test]
async fn concurrent_batches_over_the_same_experiments_in_opposite_orders_do_not_deadlock() {
    let (app, pool, first) = experiment().await;
    let mut ids = vec![first];
    ids.extend(three_more(&app).await);
    let mut reversed = ids.clone();
    reversed.reverse();
    for _ in 0..20 {
        let mut conn = pool.acquire().await.unwrap();
        let mut rows = Vec::new();
        for &id in &ids {
            rows.push((id, state_row(&mut conn, id).await));
        }
        drop(conn);
        let batch = |order: &[i64]| -> Vec<StateWrite> {
            order
                .iter()
                .map(|id| {
                    let row = &rows.iter().find(|(i, _)| i == id).unwrap().1;
                    next_write(*id, row, row.0, 1)
                })
                .collect()
        };
        let (a, b) = (batch(&ids), batch(&reversed));
        let (a, b) = tokio::join!(write_states_alone(&pool, &a), write_states_alone(&pool, &b));
        let (a, b) = (a.expect("no deadlock"), b.expect("no deadlock"));
        // Both started from the same versions: each experiment is written by exactly one.
        for (k, written) in a.iter().enumerate() {
            let other = b[ids.len() - 1 - k];
            assert!(
                written.is_some() != other.is_some(),
                "experiment {} written by exactly one batch: {written:?} {other:?}",
                ids[k]
            );
        }
    }
}
