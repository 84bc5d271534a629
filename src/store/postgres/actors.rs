//! The names kept for actors in the PostgreSQL store: the `actors` table.

use super::rows::Cols;
use super::{sql, Conn, PgStore};
use crate::error::Result;
use crate::id::Id;
use crate::model::{ActorName, Millis};
use crate::model::actors::{ActorToken, Profile, TokenSelect};

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

/// Every token kept, in the order made (none before the store exists).
pub(super) fn tokens(conn: &mut Conn, store: &PgStore) -> Result<Vec<ActorToken>> {
    let stmt = match conn.stmt(store, sql::TOKENS) {
        Ok(s) => s,
        Err(e) if conn.gone() => return Err(e),
        Err(_) => return Ok(Vec::new()), // no store yet: no tokens
    };
    let rows = conn
        .client()?
        .query(&stmt, &[])
        .map_err(|e| store.err(e))?;
    rows.iter().map(|r| token_row(store, r)).collect()
}

/// One row of the `tokens` table.
pub(super) fn token_row(store: &PgStore, r: &postgres::Row) -> Result<ActorToken> {
    let c = Cols::typed(store, r, "a token row");
    let text = |name: &str| Ok::<_, crate::Error>(c.str(name)?.unwrap_or_default());
    let profile = match text("profile")?.as_str() {
        "worker" => Profile::Worker,
        "planner" => Profile::Planner,
        "all" => Profile::All,
        other => return Err(store.corrupt(format!("a token's profile {other:?} is not one"))),
    };
    let ms = |v: Option<i64>| v.map(|v| v.max(0) as u64);
    Ok(ActorToken {
        id: text("id")?,
        actor: Id::parse(&text("actor")?, "actor").map_err(|e| store.corrupt(e.to_string()))?,
        name: text("name")?,
        workspace: text("workspace")?,
        profile,
        created_at: c.int("created_at")?.max(0) as u64,
        expires_at: ms(c.opt_int("expires_at")?),
        revoked_at: ms(c.opt_int("revoked_at")?),
        hash: text("hash")?,
    })
}

/// Keeps `tokens` in the transaction `tx` (a new token, or a copy's load).
pub(super) fn add_tokens_in(
    tx: &mut postgres::Transaction<'_>,
    store: &PgStore,
    tokens: &[ActorToken],
) -> Result<()> {
    let add = sql::q(sql::ADD_TOKEN, &store.target.schema);
    let ms = |v: Option<u64>| v.map(|v| i64::try_from(v).unwrap_or(i64::MAX));
    for t in tokens {
        let created = ms(Some(t.created_at)).unwrap_or(0);
        tx.execute(
            &add,
            &[
                &t.id,
                &t.actor.hex(),
                &t.name,
                &t.workspace,
                &t.profile.as_str(),
                &created,
                &ms(t.expires_at),
                &ms(t.revoked_at),
                &t.hash,
            ],
        )
        .map_err(|e| store.err(e))?;
    }
    Ok(())
}

/// Keeps a new token (its actor's name is kept first, which makes the store).
pub(super) fn add_token(conn: &mut Conn, store: &PgStore, token: &ActorToken) -> Result<()> {
    let mut tx = conn.client()?.transaction().map_err(|e| store.err(e))?;
    add_tokens_in(&mut tx, store, std::slice::from_ref(token))?;
    tx.commit().map_err(|e| store.err(e))
}

/// Marks the live tokens `which` selects revoked at `at`, in one statement.
pub(super) fn revoke_tokens(
    conn: &mut Conn,
    store: &PgStore,
    which: &TokenSelect,
    at: Millis,
) -> Result<Vec<ActorToken>> {
    let (id, actor) = match which {
        TokenSelect::Id(id) => (Some(id.clone()), None),
        TokenSelect::Actor(a) => (None, Some(a.hex())),
    };
    let at = i64::try_from(at).unwrap_or(i64::MAX);
    let stmt = conn.stmt(store, sql::REVOKE_TOKENS)?;
    let rows = conn
        .client()?
        .query(&stmt, &[&id, &actor, &at])
        .map_err(|e| store.err(e))?;
    rows.iter().map(|r| token_row(store, r)).collect()
}
