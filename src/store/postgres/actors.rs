//! The names kept for actors in the PostgreSQL store: the `actors` table.

use super::rows::Cols;
use super::{sql, Conn, PgStore};
use crate::error::Result;
use crate::id::Id;
use crate::model::ActorName;

/// The names kept, in the order first kept (none before the store exists).
pub(super) fn read(conn: &mut Conn, store: &PgStore) -> Result<Vec<ActorName>> {
    let stmt = match conn.stmt(store, sql::ACTORS) {
        Ok(s) => s,
        Err(e) if conn.gone() => return Err(e),
        Err(_) => return Ok(Vec::new()), // no store yet: no names
    };
    let rows = conn
        .client()?
        .query(&stmt, &[])
        .map_err(|e| store.err(e))?;
    rows.iter().map(|r| row(store, r)).collect()
}

/// One row of the `actors` table.
pub(super) fn row(store: &PgStore, r: &postgres::Row) -> Result<ActorName> {
    let c = Cols::typed(store, r, "an actor row");
    let id = c.str("id")?.unwrap_or_default();
    Ok(ActorName {
        id: Id::parse(&id, "id").map_err(|e| store.corrupt(e.to_string()))?,
        name: c.str("name")?.unwrap_or_default(),
        note: c.str("note")?,
        added_at: c.int("added_at")? as u64,
    })
}

/// Keeps `names` in the transaction `tx` (a copy's load).
pub(super) fn keep_in(
    tx: &mut postgres::Transaction<'_>,
    store: &PgStore,
    names: &[ActorName],
) -> Result<()> {
    let keep = sql::q(sql::KEEP_ACTOR, &store.target.schema);
    for n in names {
        let at = i64::try_from(n.added_at).unwrap_or(i64::MAX);
        tx.execute(&keep, &[&n.id.hex(), &n.name, &n.note, &at])
            .map_err(|e| store.err(e))?;
    }
    Ok(())
}

/// Keeps `names` in one transaction, the store made first when it does not exist yet.
pub(super) fn keep(conn: &mut Conn, store: &PgStore, names: &[ActorName]) -> Result<()> {
    let schema = store.target.schema.clone();
    let io = |e: postgres::Error| store.err(e);
    let exists: bool = conn
        .client()?
        .query_one(sql::EXISTS, &[&schema])
        .map_err(io)?
        .get("exists");
    if !exists {
        // As a first write does: the store is made, and the handle reads it afresh.
        let location = store.target.location().to_string();
        sql::migrate(conn.client()?, &schema, &location)?;
        conn.statements.clear();
        conn.cache.loaded = false;
    }
    let mut tx = conn.client()?.transaction().map_err(io)?;
    keep_in(&mut tx, store, names)?;
    tx.commit().map_err(io)
}
