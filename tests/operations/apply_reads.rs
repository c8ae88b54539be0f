//! The owner reads the rows to apply for many experiments in one statement
//! (`store::apply::pending_many`): each experiment asked gets exactly its own final rows after
//! its own cursor, in apply order, at most the limit, whatever else the statement read.

use serde_json::json;

use crate::helpers::http_server::{spawn_app_with, test_options};
use crate::helpers::postgres::fresh_database;
use joust::store::{Cursor, PendingRow, pending_many};

/// The experiment's outcome rows in apply order, as `(xid, duel id)`.
async fn apply_order(pool: &sqlx::PgPool, id: i64) -> Vec<Cursor> {
    sqlx::query_as(
        "SELECT xid, duel_id FROM outcomes WHERE experiment_id = $1 ORDER BY xid, duel_id",
    )
    .bind(id)
    .fetch_all(pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn one_read_answers_each_experiment_with_its_own_rows_after_its_own_cursor() {
    let db = fresh_database().await;
    let app = spawn_app_with(&db, "", test_options()).await;
    let pool = joust::store::pool_options().connect(&db).await.unwrap();
    let mut ids = Vec::new();
    for n in [6usize, 4, 0] {
        let id = app
            .create_experiment(&["a", "b", "c"], json!({"name": "uniform"}))
            .await;
        for _ in 0..n {
            let (token, pair) = app.duel(id).await;
            app.outcome(&token, &pair[1]).await;
        }
        ids.push(id);
    }
    let (a, b, empty) = (ids[0], ids[1], ids[2]);
    let (rows_a, rows_b) = (apply_order(&pool, a).await, apply_order(&pool, b).await);
    assert_eq!((rows_a.len(), rows_b.len()), (6, 4));
    let start: Cursor = (0, uuid::Uuid::nil());
    // `a` twice, from two cursors; `b` with a limit smaller than its rows; one with none.
    let asked = [(a, start), (b, start), (empty, start), (a, rows_a[2])];
    let answers = pending_many(&pool, &asked, 3).await.unwrap();
    let at = |answer: &Vec<PendingRow>| -> Vec<Cursor> { answer.iter().map(|r| r.at).collect() };
    assert_eq!(answers.len(), asked.len());
    assert_eq!(at(&answers[0]), rows_a[..3]);
    assert_eq!(at(&answers[1]), rows_b[..3]);
    assert!(answers[2].is_empty());
    assert_eq!(at(&answers[3]), rows_a[3..6]);
    // Each row is its experiment's: the winner posted was the duel's second ranker.
    for r in answers.iter().flatten() {
        assert_eq!(r.winner, Some(r.second));
    }
    app.stop().await;
}
