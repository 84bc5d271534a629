//! The write path of the PostgreSQL store, and the reads that need more than the cached
//! state: the archive, the history, and `check`.

use super::{missing, sql, transient, Conn, PgArchive, PgStore, RACES, RETRIES};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::model::{Change, HistoryLine, Node};
use crate::rules::NoArchive;
use crate::store::backend::{Decide, Report};
use std::cell::RefCell;

/// What one attempt at a write came to.
enum Attempt {
    Committed,
    /// Another write came in between (the cache caught up): decide again.
    Raced,
}

/// One write. The rules decide on the cached state at the server's time as this handle
/// reads it, and the change is committed in one round trip if nobody wrote in between;
/// else the answer brings the cache up to date and the rules decide again. A refusal (or a
/// write that changes nothing) is answered only once the cache has caught up. After
/// `RACES` races the writer takes the store's lock before deciding.
pub(super) fn write(conn: &mut Conn, store: &PgStore, decide: &mut Decide<'_>) -> Result<()> {
    let mut transient_failures = 0;
    let mut attempt = 0;
    loop {
        let locked = attempt >= RACES;
        attempt += 1;
        let outcome = if locked {
            locked_attempt(conn, store, decide)
        } else {
            optimistic_attempt(conn, store, decide)
        };
        match outcome {
            Ok(Attempt::Committed) => return Ok(()),
            Ok(Attempt::Raced) => continue,
            Err(Retry::Transient(_)) if transient_failures < RETRIES => transient_failures += 1,
            Err(Retry::Transient(e)) => return Err(store.err(e)),
            Err(Retry::Fail(e)) => return Err(e),
        }
    }
}

enum Retry {
    Transient(postgres::Error),
    Fail(Error),
}

impl From<Error> for Retry {
    fn from(e: Error) -> Retry {
        Retry::Fail(e)
    }
}

fn pg(store: &PgStore) -> impl Fn(postgres::Error) -> Retry + '_ {
    move |e| {
        if transient(&e) {
            Retry::Transient(e)
        } else {
            Retry::Fail(store.err(e))
        }
    }
}

/// Runs the rules on the cached state at `now`.
fn decided(conn: &mut Conn, store: &PgStore, decide: &mut Decide<'_>, now: u64) -> Result<Change> {
    if !conn.exists {
        // Nothing exists yet: a refused call must not create the store either.
        return decide(&conn.state, &NoArchive, now);
    }
    let Conn { client, state, .. } = conn;
    let client = client
        .as_mut()
        .ok_or_else(|| Error::Internal("no connection".into()))?;
    let archive = PgArchive {
        client: RefCell::new(client),
        store,
    };
    decide(state, &archive, now)
}

fn optimistic_attempt(
    conn: &mut Conn,
    store: &PgStore,
    decide: &mut Decide<'_>,
) -> std::result::Result<Attempt, Retry> {
    if !conn.loaded {
        conn.sync(store)?;
    }
    let estimate = conn.decision_time();
    let (change, now) = match decided(conn, store, decide, estimate) {
        Ok(c) if !c.is_empty() => (c, estimate),
        // A refusal, or nothing to write: answered on a caught-up state only.
        first => {
            let seq = conn.seq;
            let (now, _) = conn.sync(store)?;
            if conn.seq == seq {
                return first.map(|_| Attempt::Committed).map_err(Retry::Fail);
            }
            match decided(conn, store, decide, now)? {
                c if c.is_empty() => return Ok(Attempt::Committed),
                c => (c, now),
            }
        }
    };
    if !conn.exists {
        let location = store.target.location().to_string();
        sql::migrate(conn.client()?, &store.target.schema, &location)?;
        conn.statements.clear();
        conn.sync(store)?;
        return Ok(Attempt::Raced); // decide again on the store as it now is
    }
    commit(conn, store, change, now, false)
}

/// Takes the store's lock (a transaction holding its row), then catches up, decides and
/// commits under it: nobody can write in between.
fn locked_attempt(
    conn: &mut Conn,
    store: &PgStore,
    decide: &mut Decide<'_>,
) -> std::result::Result<Attempt, Retry> {
    // Catch up first, outside the transaction (a first load runs one of its own).
    if !conn.sync(store)?.1 {
        return Ok(Attempt::Raced); // no store yet: the optimistic path creates it
    }
    let lock = conn.stmt(store, sql::LOCK)?;
    conn.client()?.batch_execute("BEGIN").map_err(pg(store))?;
    let result = (|| {
        conn.client()?.query_one(&lock, &[]).map_err(pg(store))?;
        let (now, _) = conn.sync(store)?;
        let change = decided(conn, store, decide, now)?;
        if change.is_empty() {
            return Ok(Attempt::Committed);
        }
        commit(conn, store, change, now, true)
    })();
    let end = if matches!(result, Ok(Attempt::Committed)) {
        "COMMIT"
    } else {
        "ROLLBACK"
    };
    match conn.client()?.batch_execute(end).map_err(pg(store)) {
        Ok(()) => result,
        Err(e) => {
            // A failed COMMIT committed nothing: forget what the cache took on.
            conn.loaded = false;
            Err(e)
        }
    }
}

/// Sends the change decided at `decided_at`; applies it to the cache when committed, or
/// catches the cache up with the rows the refusal carries.
fn commit(
    conn: &mut Conn,
    store: &PgStore,
    change: Change,
    decided_at: u64,
    locked: bool,
) -> std::result::Result<Attempt, Retry> {
    let stmt = conn.stmt(store, sql::COMMIT)?;
    let body = serde_json::to_string(&change)
        .map_err(|e| Error::Internal(format!("a change does not serialise: {e}")))?;
    let expected = conn.seq as i64;
    // The decision holds until the rules would see the state it was made on differently by
    // time alone; the server refuses it from then on, judged by its own clock at commit.
    let valid_until = crate::rules::valid_until(&conn.state, decided_at).map(|t| t as i64);
    let row = conn
        .client()?
        .query_one(
            &stmt,
            &[&expected, &(decided_at as i64), &valid_until, &body],
        )
        .map_err(pg(store))?;
    let (committed, seq, now, last_now): (bool, i64, i64, i64) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    conn.saw_clock(now, last_now);
    if let Some(problem) = row.get::<_, Option<String>>(7) {
        return Err(Retry::Fail(store.corrupt(problem)));
    }
    if committed {
        conn.state.apply(&change);
        conn.seq = seq as u64;
        return Ok(Attempt::Committed);
    }
    if locked && seq as u64 != conn.seq {
        return Err(Retry::Fail(Error::Internal(
            "the store moved on while its lock was held".into(),
        )));
    }
    if seq as u64 != conn.seq {
        let (settings, nodes): (String, String) = (row.get(5), row.get(6));
        conn.apply_rows(store, &settings, &nodes)?;
        conn.seq = seq as u64;
    }
    Ok(Attempt::Raced)
}

/// The archived nodes, as of the state `conn` was just brought to (read in one snapshot
/// with it).
pub(super) fn archived(conn: &mut Conn, store: &PgStore) -> Result<Vec<Node>> {
    let schema = store.target.schema.clone();
    let client = conn.client()?;
    let mut tx = client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .map_err(|e| store.err(e))?;
    let rows = match tx.query(&sql::q(sql::ARCHIVED, &schema), &[]) {
        Ok(r) => r,
        Err(e) if missing(&e) => return Ok(Vec::new()),
        Err(e) => return Err(store.err(e)),
    };
    let seq: i64 = tx
        .query_one(&sql::q(sql::VERSION_OF, &schema), &[])
        .map_err(|e| store.err(e))?
        .get(0);
    tx.commit().map_err(|e| store.err(e))?;
    if seq as u64 != conn.seq {
        // Someone wrote between the catch-up and this read: catch up to this snapshot.
        conn.sync(store)?;
        if seq as u64 != conn.seq {
            return archived(conn, store);
        }
    }
    let archived = conn.state.archived();
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let node = super::parse_node(store, &r.get::<_, String>(0))?;
        if archived.contains_key(&node.id) {
            out.push(node);
        }
    }
    Ok(out)
}

pub(super) fn history(
    conn: &mut Conn,
    store: &PgStore,
    node: Option<Id>,
    since: u64,
) -> Result<Vec<HistoryLine>> {
    let stmt = match conn.stmt(store, sql::HISTORY) {
        Ok(s) => s,
        Err(_) => return Ok(Vec::new()), // no store yet: no history
    };
    let node = node.map(|n| n.hex());
    let rows = conn
        .client()?
        .query(&stmt, &[&(since as i64), &node])
        .map_err(|e| store.err(e))?;
    rows.iter().map(|r| history_line(store, r)).collect()
}

/// One row of the `HISTORY` query as a history line.
pub(super) fn history_line(store: &PgStore, r: &postgres::Row) -> Result<HistoryLine> {
    let parse = |s: Option<String>| s.map(|t| Id::parse(&t, "id")).transpose();
    Ok(HistoryLine {
        seq: r.get::<_, i64>(0) as u64,
        i: r.get::<_, i32>(1) as u32,
        event: crate::model::Event {
            at: r.get::<_, i64>(2) as u64,
            verb: r.get(3),
            node: parse(r.get(4)).map_err(|e| store.corrupt(e.to_string()))?,
            actor: parse(r.get(5)).map_err(|e| store.corrupt(e.to_string()))?,
            generation: r.get::<_, Option<i64>>(6).map(|g| g as u64),
            detail: r.get(7),
            output: r.get(8),
        },
    })
}

/// Reads everything afresh and verifies the invariants, as the embedded `check` does.
pub(super) fn check(conn: &mut Conn, store: &PgStore) -> Result<Report> {
    let mut fresh = Conn {
        client: conn.client.take(),
        ..Conn::default()
    };
    let mut tampered = Vec::new();
    let result = (|| {
        let (_, exists) = fresh.full_load(store, Some(&mut tampered))?;
        let history = if exists {
            history(&mut fresh, store, None, 0)?
        } else {
            Vec::new()
        };
        let archive: std::collections::HashMap<Id, Node> = if exists {
            archived(&mut fresh, store)?
                .into_iter()
                .map(|n| (n.id, n))
                .collect()
        } else {
            Default::default()
        };
        let s = &fresh.state;
        let mut problems = std::mem::take(&mut tampered);
        problems.extend(crate::verify::problems(s));
        problems.extend(crate::verify::history_problems(s, &history, &archive));
        Ok(Report {
            nodes: s.len(),
            archived: s.archived().len(),
            events: history.len(),
            problems,
            notes: Vec::new(),
            intact: "tables and rows",
        })
    })();
    conn.client = fresh.client.take();
    conn.statements.clear();
    result
}
