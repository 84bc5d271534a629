//! A whole store out of and into PostgreSQL, for `claimdag copy`: read in one snapshot,
//! written in one transaction (all or nothing) into a store that has no write yet.

use super::rows::{Cols, NodeRow, StoreRow};
use super::{sql, Conn, PgStore};
use crate::error::{Error, Result};
use crate::store::backend::Dump;

/// Rows go to the server in batches of this many.
const BATCH: usize = 1000;

const LOAD_NODES: &str = "INSERT INTO {schema}.nodes (id, pos, seq, wseq, workspace, kind, \
    summary, status, generation, holder, renewed_at, ttl_ms, archived, archived_seq, \
    created_at, updated_at, body) \
    SELECT n->>'id', $2::bigint + k, $3::bigint, $3::bigint, coalesce(n->>'workspace', ''), \
    coalesce(n->>'kind', 'task'), n->>'summary', n->>'status', (n->>'generation')::bigint, \
    n->>'holder', (n->>'renewed_at')::bigint, (n->>'ttl_ms')::bigint, $4::boolean, \
    CASE WHEN $4::boolean THEN $3::bigint + k END, (n->>'created_at')::bigint, \
    (n->>'updated_at')::bigint, n \
    FROM jsonb_array_elements($1::text::jsonb) WITH ORDINALITY AS e(n, k)";

/// Read as `json`, not `jsonb`: an output's text is kept as written, key order included.
const LOAD_HISTORY: &str = "INSERT INTO {schema}.history (seq, i, at, verb, node, actor, \
    generation, detail, output, by_actor, door) \
    SELECT (e->>'seq')::bigint, (e->>'i')::int, (e->>'at')::bigint, e->>'verb', e->>'node', \
    e->>'actor', (e->>'generation')::bigint, e->>'detail', (e->'output')::text, e->>'by', \
    e->>'door' \
    FROM json_array_elements($1::text::json) AS h(e)";

/// The settings (a new version of them, for handles that looked before).
const LOAD_STORE: &str = "UPDATE {schema}.store SET seq = $1::bigint, next_pos = $2::bigint, \
    settings = $3::text::jsonb, settings_version = settings_version + 1 WHERE id = 1";
/// The workspaces' rows at the last write, and the counters past what was loaded.
const LOAD_SPACES: &str = "WITH made AS (INSERT INTO {schema}.ws (name) \
    SELECT DISTINCT workspace FROM {schema}.nodes ON CONFLICT (name) DO NOTHING) \
    INSERT INTO {schema}.ws_writes (name, wseq, last_now) \
    SELECT DISTINCT workspace, $1::bigint, 0 FROM {schema}.nodes \
    ON CONFLICT (name, wseq) DO NOTHING";
const LOAD_POS: &str = "SELECT setval('{schema}.node_pos', $1::bigint, false)";
const LOAD_WRITES: &str = "SELECT setval('{schema}.writes', $1::bigint, true) WHERE $1::bigint > 0";

/// Keeps every writer out while a load looks and writes: a write locks a workspace's row,
/// and a new workspace's row is inserted.
const LOAD_LOCK: &str = "LOCK TABLE {schema}.ws IN EXCLUSIVE MODE";
const LOAD_EMPTY: &str = "SELECT (SELECT count(*) FROM {schema}.nodes) \
    + (SELECT count(*) FROM {schema}.history) \
    + (SELECT count(*) FROM {schema}.history_archive) \
    + (SELECT coalesce(sum(wseq), 0)::bigint FROM {schema}.ws_now) AS written";

/// The whole store read in one snapshot (one REPEATABLE READ transaction): the store row,
/// the nodes, the archive and the history all as of the same moment, however many writes
/// land meanwhile. A store that does not exist is a dump at write 0.
pub(super) fn dump(conn: &mut Conn, store: &PgStore) -> Result<Dump> {
    let schema = store.target.schema.clone();
    let io = |e: postgres::Error| store.err(e);
    let mut tx = super::snapshot(conn.client()?, store)?;
    let row = match tx.query_one(&sql::q(sql::STORE_ROW, &schema), &[]) {
        Ok(r) => r,
        Err(e) if super::missing(&e) => return Ok(Dump::default()),
        Err(e) => return Err(io(e)),
    };
    let StoreRow {
        version, settings, ..
    } = Cols::typed(store, &row, "the store row").read()?;
    super::check_version(store, version)?;
    let seq = Cols::typed(
        store,
        &tx.query_one(&sql::q(sql::LAST_WRITE, &schema), &[])
            .map_err(io)?,
        "the last write",
    )
    .int("seq")?;
    let mut nodes = Vec::new();
    for r in tx
        .query(&sql::q(sql::ALL_NODES, &schema), &[])
        .map_err(io)?
    {
        let NodeRow { archived, body } = Cols::typed(store, &r, "a node row").read()?;
        if !archived {
            nodes.push(super::parse_node(store, &body)?);
        }
    }
    let archived = tx
        .query(&sql::q(sql::ARCHIVED, &schema), &[])
        .map_err(io)?
        .iter()
        .map(|r| {
            let row: NodeRow = Cols::typed(store, r, "an archived node").read()?;
            super::parse_node(store, &row.body)
        })
        .collect::<Result<Vec<_>>>()?;
    let history = tx
        .query(&sql::q(sql::HISTORY, &schema), &[&0i64, &None::<String>])
        .map_err(io)?
        .iter()
        .map(|r| super::history::line(store, r))
        .collect::<Result<Vec<_>>>()?;
    let actors = tx
        .query(&sql::q(sql::ACTORS, &schema), &[])
        .map_err(io)?
        .iter()
        .map(|r| super::actors::row(store, r))
        .collect::<Result<Vec<_>>>()?;
    let tokens = tx
        .query(&sql::q(sql::TOKENS, &schema), &[])
        .map_err(io)?
        .iter()
        .map(|r| super::actors::token_row(store, r))
        .collect::<Result<Vec<_>>>()?;
    tx.commit().map_err(io)?;
    Ok(Dump {
        seq: seq as u64,
        settings: super::parse_settings(store, &settings)?,
        nodes,
        archived,
        history,
        actors,
        tokens,
    })
}

pub(super) fn load(conn: &mut Conn, store: &PgStore, dump: &Dump) -> Result<()> {
    let schema = store.target.schema.clone();
    let location = store.target.location().to_string();
    sql::migrate(conn.client()?, &schema, &location)?;
    conn.statements.clear();
    conn.cache.loaded = false;
    let io = |e: postgres::Error| store.err(e);
    conn.call.sent = true;
    let client = conn.client()?;
    let mut tx = client.transaction().map_err(io)?;
    tx.batch_execute(&sql::q(LOAD_LOCK, &schema)).map_err(io)?;
    let written: i64 = tx
        .query_one(&sql::q(LOAD_EMPTY, &schema), &[])
        .map_err(io)?
        .get("written");
    if written != 0 {
        return Err(Error::invalid(format!(
            "{location} is not an empty store: copy writes only into a new one"
        )));
    }
    let mut pos = 0i64;
    for (archived, nodes) in [(false, &dump.nodes), (true, &dump.archived)] {
        for chunk in nodes.chunks(BATCH) {
            let text = json(chunk)?;
            tx.execute(
                &sql::q(LOAD_NODES, &schema),
                &[&text, &pos, &(dump.seq as i64), &archived],
            )
            .map_err(io)?;
            pos += chunk.len() as i64;
        }
    }
    for chunk in dump.history.chunks(BATCH) {
        tx.execute(&sql::q(LOAD_HISTORY, &schema), &[&json(chunk)?])
            .map_err(io)?;
    }
    super::actors::keep_in(&mut tx, store, &dump.actors)?;
    super::actors::add_tokens_in(&mut tx, store, &dump.tokens)?;
    let settings = json(&dump.settings)?;
    tx.execute(
        &sql::q(LOAD_STORE, &schema),
        &[&(dump.seq as i64), &pos, &settings],
    )
    .map_err(io)?;
    let seq = dump.seq as i64;
    tx.execute(&sql::q(LOAD_SPACES, &schema), &[&seq])
        .map_err(io)?;
    tx.execute(&sql::q(LOAD_POS, &schema), &[&pos])
        .map_err(io)?;
    tx.execute(&sql::q(LOAD_WRITES, &schema), &[&seq])
        .map_err(io)?;
    tx.commit().map_err(io)
}

/// JSON text of a value a load sends.
fn json<T: serde::Serialize + ?Sized>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| Error::Internal(e.to_string()))
}
