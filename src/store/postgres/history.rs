//! Reading the history of the PostgreSQL store (schema/history.sql): the live lines (`history`),
//! and with them the lines `history_keep` moved to `history_archive`. Each read goes
//! through an index and stops at what it returns: one node's lines by `history_node`, the
//! lines after a place by the primary keys, up to a limit.

use super::rows::Cols;
use super::{sql, Conn, PgStore};
use crate::error::Result;
use crate::id::Id;
use crate::model::HistoryLine;

/// The lines of the writes after `since`, oldest first; `node`'s only when given; the
/// archived ones too with `archived`.
pub(super) fn read(
    conn: &mut Conn,
    store: &PgStore,
    node: Option<Id>,
    since: u64,
    archived: bool,
) -> Result<Vec<HistoryLine>> {
    let stmt = match conn.stmt(store, sql::HISTORY_SAFE) {
        Ok(s) => s,
        Err(e) if conn.gone() => return Err(e),
        Err(_) => return Ok(Vec::new()), // no store yet: no history
    };
    let node = node.map(|n| n.hex());
    let rows = conn
        .client()?
        .query(&stmt, &[&(since as i64), &node, &archived])
        .map_err(|e| store.err(e))?;
    rows.iter().map(|r| line(store, r)).collect()
}

/// At most `most` lines after the line at `after` (`(seq, i)`), the archived ones
/// included, oldest first.
pub(super) fn from(
    conn: &mut Conn,
    store: &PgStore,
    after: (u64, u32),
    most: usize,
) -> Result<Vec<HistoryLine>> {
    let stmt = match conn.stmt(store, sql::HISTORY_FROM) {
        Ok(s) => s,
        Err(e) if conn.gone() => return Err(e),
        Err(_) => return Ok(Vec::new()),
    };
    // A cursor before a write's first line says `u32::MAX`, past the column's range: the
    // largest `i` there is reads the same.
    let i = after.1.min(i32::MAX as u32) as i32;
    let seq = i64::try_from(after.0).unwrap_or(i64::MAX);
    let most = i64::try_from(most).unwrap_or(i64::MAX);
    let rows = conn
        .client()?
        .query(&stmt, &[&seq, &i, &most])
        .map_err(|e| store.err(e))?;
    rows.iter().map(|r| line(store, r)).collect()
}

/// One row of a history query as a history line.
pub(super) fn line(store: &PgStore, r: &postgres::Row) -> Result<HistoryLine> {
    let c = Cols::typed(store, r, "a history line");
    let id = |name: &str| {
        c.str(name)?
            .map(|t| Id::parse(&t, "id").map_err(|e| store.corrupt(e.to_string())))
            .transpose()
    };
    Ok(HistoryLine::new(
        c.int("seq")? as u64,
        c.int("i")? as u32,
        crate::model::Event {
            at: c.int("at")? as u64,
            verb: c.str("verb")?.unwrap_or_default(),
            node: id("node")?,
            actor: id("actor")?,
            generation: c.opt_int("generation")?.map(|g| g as u64),
            detail: c.str("detail")?,
            output: c.str("output")?,
            by: id("by_actor")?,
            door: c.str("door")?,
        },
    ))
}
