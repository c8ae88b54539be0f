//! The role the service connects as: `joust_service`, a login role that is not a superuser and
//! can create neither roles nor databases. It owns the service's database and everything in it,
//! so migrations and every request run with an owner's rights over joust's own tables and no
//! more: a query that went wrong cannot read the server's files (`pg_read_file`, `COPY ... FROM
//! PROGRAM`), change its settings or reach another database. The superuser `joust` stays for
//! what only it can do here: creating the role and the database, and the test suite's databases.

use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, Connection, PgConnection};

use super::EmbeddedError;

/// The service's role.
pub(super) const SERVICE_ROLE: &str = "joust_service";

/// Creates the role when missing (or sets its rights and `password` again when present: the
/// password file is what holds) and hands it `database` and every object in its public schema.
/// A cluster made before the role existed has its tables owned by the superuser; they are handed
/// over here, once, so the service can still migrate them.
pub(super) async fn ensure(
    superuser: &PgConnectOptions,
    database: &str,
    password: &str,
) -> Result<(), EmbeddedError> {
    // Role options and identifiers cannot be bound. The password is alphanumeric (the cluster's
    // generator) and the names are constants, so nothing here needs quoting beyond this check.
    assert!(password.chars().all(|c| c.is_ascii_alphanumeric()));
    let rights = "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS";
    let mut conn = superuser.clone().database("postgres").connect().await?;
    let exists: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)")
            .bind(SERVICE_ROLE)
            .fetch_one(&mut conn)
            .await?;
    let verb = if exists { "ALTER" } else { "CREATE" };
    sqlx::query(&format!(
        "{verb} ROLE {SERVICE_ROLE} WITH {rights} PASSWORD '{password}'"
    ))
    .execute(&mut conn)
    .await?;
    sqlx::query(&format!(
        "ALTER DATABASE \"{database}\" OWNER TO {SERVICE_ROLE}"
    ))
    .execute(&mut conn)
    .await?;
    conn.close().await?;

    let mut conn = superuser.clone().database(database).connect().await?;
    hand_over_objects(&mut conn).await?;
    conn.close().await?;
    Ok(())
}

/// Gives the service's role the tables, views and sequences of the public schema that another
/// role owns. `REASSIGN OWNED BY` cannot be used: the superuser also owns the system catalogs.
async fn hand_over_objects(conn: &mut PgConnection) -> Result<(), EmbeddedError> {
    let owned: Vec<(String, String)> = sqlx::query_as(
        "SELECT c.relname::text, c.relkind::text
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
           AND pg_get_userbyid(c.relowner) <> $1
           -- A sequence owned by a column moves with its table.
           AND NOT (c.relkind = 'S' AND EXISTS (
               SELECT 1 FROM pg_depend d
               WHERE d.objid = c.oid AND d.deptype IN ('a', 'i') AND d.refobjsubid > 0))",
    )
    .bind(SERVICE_ROLE)
    .fetch_all(&mut *conn)
    .await?;
    for (name, kind) in owned {
        let what = match kind.as_str() {
            "S" => "SEQUENCE",
            "v" => "VIEW",
            "m" => "MATERIALIZED VIEW",
            "f" => "FOREIGN TABLE",
            _ => "TABLE",
        };
        let name = name.replace('"', "\"\"");
        sqlx::query(&format!(
            "ALTER {what} public.\"{name}\" OWNER TO {SERVICE_ROLE}"
        ))
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}
