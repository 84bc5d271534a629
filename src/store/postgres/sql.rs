//! The SQL of the PostgreSQL store: the tables of a new store (schema/tables.sql), the
//! migrations that bring an older store's tables to the same (one file each), the functions
//! (schema/*.sql, one current body each), and every query as a named constant. `{schema}`
//! is replaced by the store's schema, quoted as an identifier.
//!
//! A store records its schema version. Opening one of an older version runs, in one
//! transaction under an advisory lock, the migrations it lacks and then every function file
//! (CREATE OR REPLACE); a store at [`VERSION`] runs nothing. Migrations change tables and
//! data only; a change to a function is made in its file and comes with a migration of its
//! own (which may change nothing else), so that the stores that lack it take it. A function
//! renamed or dropped, or whose arguments change, is dropped by that migration.

use crate::error::{Error, Result};
use std::path::Path;

/// The migrations, in order: migration `n` brings a store's tables to schema version `n + 1`.
pub const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_init.sql"),
    include_str!("migrations/0002_commit_in_one_round_trip.sql"),
    include_str!("migrations/0003_clock_never_goes_back.sql"),
    include_str!("migrations/0004_never_build_on_tampering.sql"),
    include_str!("migrations/0005_notify_every_write.sql"),
    include_str!("migrations/0006_history_outputs.sql"),
    include_str!("migrations/0007_a_lock_per_workspace.sql"),
    include_str!("migrations/0008_combined_writes.sql"),
    include_str!("migrations/0009_planned_once.sql"),
    include_str!("migrations/0010_old_snapshots.sql"),
    include_str!("migrations/0011_node_versions.sql"),
    include_str!("migrations/0012_requests_by_index.sql"),
    include_str!("migrations/0013_answered_in_one_round_trip.sql"),
    include_str!("migrations/0014_nothing_compiled.sql"),
    include_str!("migrations/0015_who_acted.sql"),
    include_str!("migrations/0016_history_kept.sql"),
    include_str!("migrations/0017_functions_by_name.sql"),
    include_str!("migrations/0018_actor_names.sql"),
    include_str!("migrations/0019_actor_tokens.sql"),
    include_str!("migrations/0020_event_doors.sql"),
];

/// The tables of a new store, as the migrations leave an older one.
pub const TABLES: &str = include_str!("schema/tables.sql");

/// The functions, made again (CREATE OR REPLACE) whenever a store is made or brought to a
/// newer version, in this order (a view or a trigger after the functions it calls).
pub const FUNCTIONS: &[&str] = &[
    include_str!("schema/catchup.sql"),
    include_str!("schema/commit.sql"),
    include_str!("schema/combine.sql"),
    include_str!("schema/history.sql"),
    include_str!("schema/notify.sql"),
];

/// The schema version this claimdag writes; a store of a newer version is refused.
pub const VERSION: i32 = MIGRATIONS.len() as i32;

/// The names kept for actors, in the order first kept.
pub const ACTORS: &str = "SELECT id, name, note, added_at FROM {schema}.actors ORDER BY pos";
/// Keeps a name (`$1` its actor): a new one is added; one kept already takes the note `$3`
/// when one is given.
pub const KEEP_ACTOR: &str = "INSERT INTO {schema}.actors (id, name, note, added_at) \
                              VALUES ($1::text, $2::text, $3::text, $4::bigint) \
                              ON CONFLICT (id) DO UPDATE SET note = EXCLUDED.note \
                              WHERE EXCLUDED.note IS NOT NULL \
                              AND {schema}.actors.note IS DISTINCT FROM EXCLUDED.note";

/// Every token kept, in the order made.
pub const TOKENS: &str = "SELECT id, actor, name, workspace, profile, created_at, expires_at, \
                          revoked_at, hash FROM {schema}.tokens ORDER BY pos";
/// Keeps a new token.
pub const ADD_TOKEN: &str = "INSERT INTO {schema}.tokens (id, actor, name, workspace, profile, \
                             created_at, expires_at, revoked_at, hash) VALUES ($1::text, \
                             $2::text, $3::text, $4::text, $5::text, $6::bigint, $7::bigint, \
                             $8::bigint, $9::text)";
/// Marks revoked at `$3` the live tokens (at `$3`) of id `$1` or of actor `$2`; answers them.
pub const REVOKE_TOKENS: &str = "UPDATE {schema}.tokens SET revoked_at = $3::bigint \
                                 WHERE (id = $1::text OR actor = $2::text) \
                                 AND revoked_at IS NULL \
                                 AND (expires_at IS NULL OR expires_at > $3::bigint) \
                                 RETURNING id, actor, name, workspace, profile, created_at, \
                                 expires_at, revoked_at, hash";

/// Catching up on one workspace: its write count, the server's time, its clock, the
/// settings when their version moved, and the node rows changed since.
pub const SINCE_WS: &str = "SELECT wseq, now_ms, last_now, version, settings_version, settings, \
                            nodes FROM {schema}.since_ws($1::text, $2::bigint, $3::bigint, $4::boolean)";
/// Catching up on the whole store, from the write counts a handle knows (JSON).
pub const SINCE_ALL: &str = "SELECT now_ms, version, settings_version, settings, spaces, nodes \
                             FROM {schema}.since_all($1::text::jsonb, $2::bigint, $3::boolean)";
/// Makes (and commits) a workspace's row before the first write to it.
pub const ENSURE_WS: &str = "SELECT {schema}.ensure_ws($1::text)";
/// Returns once every commit record written before it is on disk.
pub const FLUSH: &str = "SELECT {schema}.flushed()";
/// Whether this session commits synchronously (then a write waits for its flush).
pub const SYNC_COMMIT: &str = "SELECT current_setting('synchronous_commit') <> 'off' AS durable";
/// Starts a transaction, waits for a workspace's lock and catches up on the workspace under
/// it, in one round trip (the locked path); `{w}`, `{since}` and `{sv}` are filled in.
pub const LOCK_WS: &str = "BEGIN; SELECT wseq, now_ms, last_now, version, settings_version, \
                           settings, nodes FROM {schema}.lock_ws({w}, {since}, {sv})";
/// One write's commit, sent whole in one round trip (`write::commit_text` fills it in).
pub const COMMIT: &str = "SELECT committed, wseq, now_ms, last_now, settings_version, settings, \
                          nodes, problem FROM {schema}.commit({w}, {expected}, {sv}, \
                          {decided_at}, {valid_until}, {body}); COMMIT;";
/// The retention's pass that follows a commit while `history_keep` is set.
pub const ARCHIVE_HISTORY: &str = " SELECT {schema}.archive_history({decided_at});";
/// The flush that follows a commit in the same round trip, when writes are durable.
pub const FLUSH_WRITE: &str = " SELECT {schema}.flush_write();";
/// Leaves a request for the workspace's next leader, commits it, then waits in line for its
/// answer or the lead, prepared once a connection: the request's number and the row of
/// [`TURN`].
pub const ASK: &str = "CALL {schema}.ask($1::text, $2::text, $3::bigint, $4::bigint, $5::int, \
                       $6::boolean, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
                       NULL, NULL)";
/// Waits in line for the request's answer (committed, and on disk when `$5` is true, once
/// the statement returns), or makes the session the leader of the workspace and catches it
/// up: `outcome`, `answer`, `asks`, then the workspace's row as a catch-up answers it.
/// Prepared once a connection.
pub const TURN: &str = "SELECT NULL::bigint AS ask, outcome, answer, asks, wseq, now_ms, \
                        last_now, version, settings_version, settings, nodes FROM \
                        {schema}.turn($1::text, $2::bigint, $3::bigint, $4::int, $5::boolean)";
/// A leader's commit, the lead given back, then the wait for the flush, prepared once a
/// connection: `committed`, `wseq`, `now_ms`, `last_now`, `settings_version`, `problem`.
pub const LEAD: &str = "CALL {schema}.lead($1::text, $2::bigint, $3::bigint, $4::bigint, \
                        $5::bigint, $6::text, $7::text, $8::boolean, NULL, NULL, NULL, NULL, \
                        NULL, NULL)";
/// Gives back what a failed combined write left: its request (unless answered) and the lead.
pub const ABANDON: &str = "ROLLBACK; BEGIN; DELETE FROM {schema}.asks WHERE answer IS NULL \
                           AND id = nullif(current_setting('claimdag.ask', true), '')::bigint; \
                           COMMIT; SELECT {schema}.unlead({w})";
/// Waits for every lock a settings change takes, in the order every locker takes them.
pub const LOCK_ALL: &str = "SELECT 1 FROM {schema}.store WHERE id = 1 FOR UPDATE; \
                            SELECT 1 FROM {schema}.ws ORDER BY name FOR UPDATE";
/// The store row and the server's time, for a full load.
pub const STORE_ROW: &str = "SELECT greatest({schema}.now_ms(), \
                             (SELECT coalesce(max(last_now), 0) FROM {schema}.ws_now)) AS now, \
                             version, settings::text AS settings, settings_version \
                             FROM {schema}.store WHERE id = 1";
/// Every workspace's write count and clock, for a full load.
pub const SPACES: &str = "SELECT name, wseq, last_now FROM {schema}.ws_now";
/// Every node row in creation order, for a full load.
pub const ALL_NODES: &str = "SELECT archived, body::text AS body FROM {schema}.nodes ORDER BY pos";
/// Every change made to the tables by hand that breaks the store (none, mostly), for a
/// full load and `check`.
pub const TAMPERING: &str = "SELECT t FROM {schema}.tampering(NULL, NULL, NULL) t";
/// The last write the history (live or archived) names.
pub const LAST_WRITE: &str = "SELECT greatest((SELECT coalesce(max(seq), 0) FROM {schema}.history), \
                              (SELECT coalesce(max(seq), 0) FROM {schema}.history_archive)) AS seq";
/// The archived nodes, by creation time then the write that archived them.
pub const ARCHIVED: &str = "SELECT archived, body::text AS body FROM {schema}.nodes WHERE archived \
                            ORDER BY created_at, archived_seq, pos";
/// One archived node's last value (for unarchive, inside the write).
pub const ARCHIVED_ONE: &str =
    "SELECT archived, body::text AS body FROM {schema}.nodes WHERE id = $1::text AND archived";
/// History lines after a write, for one node or all, archived or live, as one snapshot has
/// them (`copy`).
pub const HISTORY: &str = "SELECT seq, i, at, verb, node, actor, generation, detail, output, by_actor, door \
                           FROM (SELECT * FROM {schema}.history_archive \
                           UNION ALL SELECT * FROM {schema}.history) h \
                           WHERE seq > $1::bigint AND ($2::text IS NULL OR node = $2::text) \
                           ORDER BY seq, i";
/// History lines after a write, up to the last one below which every write has ended: one
/// node's or all, the archived ones too or not.
pub const HISTORY_SAFE: &str = "SELECT seq, i, at, verb, node, actor, generation, detail, output, by_actor, door \
                                FROM {schema}.history_lines($1::bigint, $2::text, $3::boolean)";
/// At most `$3` history lines after the line (`$1`, `$2`), archived or live, up to the last
/// one below which every write has ended.
pub const HISTORY_FROM: &str = "SELECT seq, i, at, verb, node, actor, generation, detail, output, by_actor, door \
                                FROM {schema}.history_from($1::bigint, $2::int, $3::bigint)";
/// The last write number a history reader may start after.
pub const HEAD: &str = "SELECT {schema}.history_head()";
/// A number that moves with every write (the workspaces' write counts and the settings').
pub const VERSION_OF: &str = "SELECT {schema}.change_count()";
/// The server's time when the store does not exist yet.
pub const NOW: &str = "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint";
/// Whether the store exists (its schema holds a `store` table). Read from the catalog with
/// the statement's own snapshot, so a store another session just created is seen once its
/// creation committed (a name lookup may answer from this session's cache of the catalog).
pub const EXISTS: &str = "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c \
                          JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
                          WHERE n.nspname = $1::text AND c.relname = 'store')";
/// The channel the store's writes are announced on (schema/notify.sql).
pub const CHANNEL: &str = "SELECT 'claimdag_' || md5($1::text)";
pub const SCHEMA_VERSION: &str = "SELECT version FROM {schema}.store WHERE id = 1";
/// Serialises the creation and migration of one store.
pub const MIGRATION_LOCK: &str = "SELECT pg_advisory_xact_lock(hashtext('claimdag:' || $1::text))";

/// A query with the schema filled in, quoted as an identifier: a schema named after a
/// reserved word (`user`, `order`) is a name like any other.
pub fn q(template: &str, schema: &str) -> String {
    template.replace("{schema}", &ident(schema))
}

/// `template` with each `{name}` of `values` replaced by its value, in one pass: a value (a
/// workspace's name, a change's JSON) is never read again for a placeholder.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let value = after.find('}').and_then(|close| {
            let name = &after[..close];
            values
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v, close))
        });
        match value {
            Some((v, close)) => {
                out.push_str(v);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `text` as an SQL string literal, for the statements sent whole in one round trip:
/// dollar-quoted, with a tag whose every letter but the last `$` the text does not hold
/// (so that the tag cannot be read inside the text, nor across its end).
pub fn literal(text: &str) -> String {
    let mut n = 0;
    let mut open = String::from("$cd");
    while text.contains(&open) {
        n += 1;
        open = format!("$cd{n}");
    }
    format!("{open}${text}{open}$")
}

/// `name` as a quoted SQL identifier.
pub fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Creates the store, or brings it to [`VERSION`], in one transaction; refuses a newer one.
/// Two processes that open an older store at once take turns (an advisory lock): the second
/// finds it up to date and runs nothing.
pub fn migrate(client: &mut postgres::Client, schema: &str, location: &str) -> Result<()> {
    let io = |e: postgres::Error| super::pg_error(location, e);
    // READ COMMITTED: each statement of a migration sees every write committed before it
    // began, whatever the server's default (version 10 copies counts after a lock).
    let mut tx = client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::ReadCommitted)
        .start()
        .map_err(io)?;
    tx.execute(MIGRATION_LOCK, &[&schema]).map_err(io)?;
    let exists: bool = tx.query_one(EXISTS, &[&schema]).map_err(io)?.get("exists");
    let current: i32 = if exists {
        tx.query_one(&q(SCHEMA_VERSION, schema), &[])
            .map_err(io)?
            .get("version")
    } else {
        0
    };
    if current > VERSION {
        return Err(newer(location, current));
    }
    if current == VERSION {
        return tx.commit().map_err(io);
    }
    if current == 0 {
        tx.batch_execute(&q(TABLES, schema)).map_err(io)?;
    }
    for sql in MIGRATIONS.iter().skip(current as usize).filter(|_| current > 0) {
        tx.batch_execute(&q(sql, schema)).map_err(io)?;
    }
    for sql in FUNCTIONS {
        tx.batch_execute(&q(sql, schema)).map_err(io)?;
    }
    tx.execute(
        &q("UPDATE {schema}.store SET version = $1::int WHERE id = 1", schema),
        &[&VERSION],
    )
    .map_err(io)?;
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

#[cfg(test)]
mod tests {
    use super::{fill, literal};

    #[test]
    fn a_filled_value_is_never_read_for_a_placeholder() {
        let text = fill(
            "SELECT {schema}.f({w}, {n}, {body}) {other}",
            &[("schema", "\"s\""), ("w", "'{n}{body}'"), ("n", "1"), ("body", "'{w}'")],
        );
        assert_eq!(text, "SELECT \"s\".f('{n}{body}', 1, '{w}') {other}");
    }

    #[test]
    fn a_literal_never_closes_inside_or_across_its_text() {
        assert_eq!(literal("{\"a\":1}"), "$cd${\"a\":1}$cd$");
        assert_eq!(literal("x$cd$y"), "$cd1$x$cd$y$cd1$");
        // Text ending in the tag's first letters would close early with the plain tag.
        assert_eq!(literal("x$cd"), "$cd1$x$cd$cd1$");
        assert_eq!(literal("$cd $cd1"), "$cd2$$cd $cd1$cd2$");
    }
}
