//! The SQL of the PostgreSQL store: the versioned migrations (one file each, applied in one
//! transaction under an advisory lock), and every query as a named constant. `{schema}` is
//! replaced by the store's schema, quoted as an identifier.

use crate::error::{Error, Result};
use std::path::Path;

/// The migrations, in order: migration `n` brings a store to schema version `n + 1`.
pub const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_init.sql"),
    include_str!("migrations/0002_commit_in_one_round_trip.sql"),
    include_str!("migrations/0003_clock_never_goes_back.sql"),
    include_str!("migrations/0004_never_build_on_tampering.sql"),
    include_str!("migrations/0005_notify_every_write.sql"),
    include_str!("migrations/0006_history_outputs.sql"),
];

/// The schema version this claimdag writes; a store of a newer version is refused.
pub const VERSION: i32 = MIGRATIONS.len() as i32;

/// Changes since a write, with the server's time and the last write's (one snapshot).
pub const SINCE: &str =
    "SELECT seq, now_ms, version, settings, nodes, last_now FROM {schema}.since($1::bigint)";
/// Commits one write decided on the state as of write `$1` at server time `$2`, which holds
/// until `$3` (the next lease to run out, or NULL); or answers what was written since, or
/// the tampering it refuses to build on (`problem`).
pub const COMMIT: &str =
    "SELECT committed, seq, now_ms, last_now, version, settings, nodes, problem \
     FROM {schema}.commit4($1::bigint, $2::bigint, $3::bigint, $4::text)";
/// Waits for the store's lock (the pessimistic path, inside a transaction).
pub const LOCK: &str = "SELECT seq FROM {schema}.store WHERE id = 1 FOR UPDATE";
/// The store row and the server's time, for a full load.
pub const STORE_ROW: &str = "SELECT seq, greatest({schema}.now_ms(), last_now), version, \
                             settings::text, last_now \
                             FROM {schema}.store WHERE id = 1";
/// Every node row in creation order, for a full load, with the columns that must agree with
/// the body.
pub const ALL_NODES: &str = "SELECT archived, body::text, status, generation, holder \
                             FROM {schema}.nodes ORDER BY pos";
/// The last write the history and the node rows name: neither may be past the store's.
pub const LAST_WRITES: &str = "SELECT (SELECT coalesce(max(seq), 0) FROM {schema}.history), \
                               (SELECT coalesce(max(seq), 0) FROM {schema}.nodes)";
/// The archived nodes, by creation time then the write that archived them.
pub const ARCHIVED: &str = "SELECT body::text FROM {schema}.nodes WHERE archived \
                            ORDER BY created_at, archived_seq, pos";
/// One archived node's last value (for unarchive, inside the write).
pub const ARCHIVED_ONE: &str =
    "SELECT body::text FROM {schema}.nodes WHERE id = $1::text AND archived";
/// History lines after a write, for one node or all.
pub const HISTORY: &str = "SELECT seq, i, at, verb, node, actor, generation, detail, output \
                           FROM {schema}.history WHERE seq > $1::bigint \
                           AND ($2::text IS NULL OR node = $2::text) ORDER BY seq, i";
/// The number of the last write.
pub const VERSION_OF: &str = "SELECT seq FROM {schema}.store WHERE id = 1";
/// The server's time when the store does not exist yet.
pub const NOW: &str = "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint";
/// Whether the store exists (its schema holds a `store` table). Read from the catalog with
/// the statement's own snapshot, so a store another session just created is seen once its
/// creation committed (a name lookup may answer from this session's cache of the catalog).
pub const EXISTS: &str = "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c \
                          JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
                          WHERE n.nspname = $1::text AND c.relname = 'store')";
/// The channel the store's writes are announced on (migration 5).
pub const CHANNEL: &str = "SELECT 'claimdag_' || md5($1::text)";
pub const SCHEMA_VERSION: &str = "SELECT version FROM {schema}.store WHERE id = 1";
/// Serialises the creation and migration of one store.
pub const MIGRATION_LOCK: &str = "SELECT pg_advisory_xact_lock(hashtext('claimdag:' || $1::text))";

/// A query with the schema filled in, quoted as an identifier: a schema named after a
/// reserved word (`user`, `order`) is a name like any other.
pub fn q(template: &str, schema: &str) -> String {
    template.replace("{schema}", &ident(schema))
}

/// `name` as a quoted SQL identifier.
pub fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Creates the store, or brings it to [`VERSION`], in one transaction; refuses a newer one.
pub fn migrate(client: &mut postgres::Client, schema: &str, location: &str) -> Result<()> {
    let io = |e: postgres::Error| super::pg_error(location, e);
    let mut tx = client.transaction().map_err(io)?;
    tx.execute(MIGRATION_LOCK, &[&schema]).map_err(io)?;
    let exists: bool = tx.query_one(EXISTS, &[&schema]).map_err(io)?.get(0);
    let current: i32 = if exists {
        tx.query_one(&q(SCHEMA_VERSION, schema), &[])
            .map_err(io)?
            .get(0)
    } else {
        0
    };
    if current > VERSION {
        return Err(newer(location, current));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        tx.batch_execute(&q(sql, schema)).map_err(io)?;
        tx.execute(
            &q(
                "UPDATE {schema}.store SET version = $1::int WHERE id = 1",
                schema,
            ),
            &[&(i as i32 + 1)],
        )
        .map_err(io)?;
    }
    tx.commit().map_err(io)
}

/// A store written by a newer claimdag: never written, never read as if it were ours.
pub fn newer(location: &str, version: i32) -> Error {
    Error::corrupt(
        Path::new(location),
        format!(
            "the store's schema is version {version}; this claimdag reads versions up to {VERSION}"
        ),
    )
}
