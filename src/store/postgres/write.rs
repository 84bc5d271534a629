//! The write path of the PostgreSQL store, and the reads that need more than the cached
//! state: the archive, the history, and `check`.

use super::rows::{Cols, Committed, NodeRow};
use super::{cache, missing, sql, transient, Conn, PgArchive, PgStore, CALM, RACES, RETRIES};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::model::{Change, Node};
use crate::rules::NoArchive;
use crate::rules::Scope;
use crate::state::State;
use crate::store::backend::{Decide, Report};
use std::cell::RefCell;

/// What one attempt at a write came to.
enum Attempt {
    Committed,
    /// Another write came in between (the cache caught up): decide again.
    Raced,
}

/// The part of the store a write serialises on: a workspace's row, or (a settings change)
/// the store row and every workspace's.
#[derive(Clone, Copy)]
enum Target<'a> {
    Ws(&'a str),
    Settings,
}

impl Target<'_> {
    fn ws(self) -> Option<String> {
        match self {
            Target::Ws(w) => Some(w.to_string()),
            Target::Settings => None,
        }
    }
}

/// One write. The rules decide on the cached state of the request's workspace at the
/// server's time as this handle reads it, and the change is committed in one round trip if
/// nobody wrote to that workspace (or the settings) in between; else the answer brings the
/// cache up to date and the rules decide again. A refusal (or a write that changes nothing)
/// is answered only once the workspace has been caught up on. After `RACES` races the
/// writer takes the workspace's lock before deciding. A committed write is answered once
/// it is on disk.
pub(super) fn write(
    conn: &mut Conn,
    store: &PgStore,
    scope_of: &dyn Fn(&State) -> Scope,
    decide: &mut Decide<'_>,
) -> Result<()> {
    if !conn.cache.loaded {
        conn.sync(store, false)?;
    }
    if !conn.cache.exists && !create(conn, store, decide)? {
        return Ok(()); // refused, or nothing to write: the store is not made for it
    }
    let mut scope = scope_of(&conn.cache.state);
    if scope == Scope::Unknown {
        // A node this handle has not seen: look at the whole store.
        conn.sync(store, false)?;
        scope = scope_of(&conn.cache.state);
    }
    let target = match &scope {
        Scope::Workspace(w) => Target::Ws(w),
        Scope::Settings => Target::Settings,
        Scope::Unknown => return unknown(conn, store, decide),
    };
    let mut transient_failures = 0;
    let mut attempt = 0;
    // A handle whose last write raced goes straight to the lock: under contention every
    // other writer's commit refuses an optimistic one.
    let races = if conn.contention.contended { 0 } else { RACES };
    loop {
        let locked = attempt >= races;
        attempt += 1;
        let outcome = if locked {
            locked_attempt(conn, store, target, &scope, decide)
        } else {
            optimistic_attempt(conn, store, target, &scope, decide)
        };
        match outcome {
            Ok(Attempt::Committed) => {
                if !locked {
                    conn.contention.contended = false;
                }
                return Ok(());
            }
            Ok(Attempt::Raced) => {
                conn.contention.contended = true;
                conn.contention.calm = 0;
            }
            Err(Retry::Transient(_)) if transient_failures < RETRIES => transient_failures += 1,
            Err(Retry::Transient(e)) => return Err(store.err(e)),
            Err(Retry::Fail(e)) => return Err(e),
        }
    }
}

/// The store does not exist yet: a write that changes something makes it (and is then
/// decided again on it); a refusal, or a write with nothing to change, does not. Answers
/// whether the write goes on.
fn create(conn: &mut Conn, store: &PgStore, decide: &mut Decide<'_>) -> Result<bool> {
    let change = decide(&conn.cache.state, &NoArchive, conn.decision_time(None))?;
    if change.is_empty() {
        return Ok(false);
    }
    let location = store.target.location().to_string();
    sql::migrate(conn.client()?, &store.target.schema, &location)?;
    conn.statements.clear();
    conn.cache.loaded = false;
    conn.sync(store, false)?;
    Ok(true)
}

/// A request naming a node the whole store does not know: refused (the rules say how) on
/// the state just caught up on.
fn unknown(conn: &mut Conn, store: &PgStore, decide: &mut Decide<'_>) -> Result<()> {
    let now = conn.decision_time(None);
    let change = decided(conn, store, decide, now)?;
    if change.is_empty() {
        return Ok(());
    }
    Err(Error::Internal(
        "a request on a node no workspace holds changed something".into(),
    ))
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
    let Conn { client, cache, .. } = conn;
    let client = client
        .as_mut()
        .ok_or_else(|| Error::Internal("no connection".into()))?;
    let archive = PgArchive {
        client: RefCell::new(client),
        store,
    };
    decide(&cache.state, &archive, now)
}

/// Where the cache stands on `target`: moves when anyone writes there.
fn mark(conn: &Conn, target: Target<'_>) -> (i64, i64) {
    let wseq = match target {
        Target::Ws(w) => conn.cache.spaces.get(w).map_or(-1, |s| s.wseq),
        Target::Settings => 0,
    };
    (wseq, conn.cache.settings_version)
}

/// Catches the cache up on `target`; returns the server's time. With `flush`, on what is
/// on disk.
fn catch_up(conn: &mut Conn, store: &PgStore, target: Target<'_>, flush: bool) -> Result<u64> {
    match target {
        Target::Ws(w) => conn.sync_ws(store, w, flush),
        Target::Settings => Ok(conn.sync(store, flush)?.0),
    }
}

fn optimistic_attempt(
    conn: &mut Conn,
    store: &PgStore,
    target: Target<'_>,
    scope: &Scope,
    decide: &mut Decide<'_>,
) -> std::result::Result<Attempt, Retry> {
    if let Target::Ws(w) = target {
        if !conn.cache.spaces.contains_key(w) {
            conn.ensure_ws(store, w)?;
        }
    }
    let estimate = conn.decision_time(target.ws().as_deref());
    let (change, now) = match decided(conn, store, decide, estimate) {
        Ok(c) if !c.is_empty() => (c, estimate),
        // A refusal, or nothing to write: answered on a caught-up workspace only, and on
        // nothing a crash could take back.
        first => {
            let seen = mark(conn, target);
            let now = catch_up(conn, store, target, true)?;
            if mark(conn, target) == seen {
                return first.map(|_| Attempt::Committed).map_err(Retry::Fail);
            }
            match decided(conn, store, decide, now)? {
                c if c.is_empty() => return Ok(Attempt::Committed),
                c => (c, now),
            }
        }
    };
    commit(conn, store, target, scope, change, now, false)
}

/// Takes the lock of `target` (a transaction holding its leader lock and its row), then
/// catches up, decides and commits under it: nobody can write there in between.
fn locked_attempt(
    conn: &mut Conn,
    store: &PgStore,
    target: Target<'_>,
    scope: &Scope,
    decide: &mut Decide<'_>,
) -> std::result::Result<Attempt, Retry> {
    if let Target::Ws(w) = target {
        if !conn.cache.spaces.contains_key(w) {
            conn.ensure_ws(store, w)?;
        }
    }
    let seen = mark(conn, target);
    let result = (|| {
        let now = match target {
            Target::Ws(w) => conn.lock_ws(store, w)?,
            Target::Settings => {
                let all = sql::q(sql::LOCK_ALL, &store.target.schema);
                conn.client()?
                    .batch_execute(&format!("BEGIN; {all}"))
                    .map_err(pg(store))?;
                catch_up(conn, store, target, false)?
            }
        };
        // Someone wrote there since this handle last looked: the next write locks first too,
        // and with enough writers there, is left for the workspace's leader instead.
        let now_at = mark(conn, target);
        // One locked write that met nobody is no sign that the next optimistic commit gets
        // through among a few busy writers: back to deciding on the cache only after
        // `CALM` such writes in a row.
        let calm = &mut conn.contention.calm;
        *calm = if now_at != seen { 0 } else { *calm + 1 };
        conn.contention.contended = *calm < CALM;
        conn.contention.combine = now_at.0 - seen.0 >= super::combine::COMBINE_AT as i64;
        let change = decided(conn, store, decide, now)?;
        if change.is_empty() {
            return Ok(None);
        }
        Ok(Some((change, now)))
    })();
    match result {
        // The commit ends the transaction.
        Ok(Some((change, now))) => commit(conn, store, target, scope, change, now, true),
        // Nothing to write, or a refusal: answered once what it was decided on is on disk.
        Ok(None) => {
            conn.client()?.batch_execute("COMMIT").map_err(pg(store))?;
            conn.flush(store)?;
            Ok(Attempt::Committed)
        }
        Err(e) => {
            let _ = conn.client()?.batch_execute("ROLLBACK");
            if matches!(e, Retry::Fail(_)) {
                let _ = conn.flush(store);
            }
            Err(e)
        }
    }
}

/// Sends the change decided at `decided_at` in one round trip: the commit (in a
/// transaction of its own, or ending the one `locked` holds), which commits asynchronously
/// so that the workspace's lock goes at once, then the wait for its flush, answered once
/// it is on disk. Applies the change to the cache when committed, or catches the cache up
/// with the rows the refusal carries.
fn commit(
    conn: &mut Conn,
    store: &PgStore,
    target: Target<'_>,
    scope: &Scope,
    change: Change,
    decided_at: u64,
    locked: bool,
) -> std::result::Result<Attempt, Retry> {
    let w = target.ws();
    let (expected, _) = mark(conn, target);
    let expected = expected.max(0);
    let text = commit_text(conn, store, &w, expected, scope, &change, decided_at, locked)?;
    conn.call.sent = true;
    let messages = match conn.client()?.simple_query(&text) {
        Ok(m) => m,
        Err(e) => {
            // An error inside the transaction leaves it open and failed: end it.
            let _ = conn.client()?.batch_execute("ROLLBACK");
            return Err(pg(store)(e));
        }
    };
    let row = super::first_row(store, &messages, "commit")?;
    let answer: Committed = Cols::text(store, row, "a commit").read()?;
    conn.saw_clock(answer.now, answer.last_now);
    if let Some(problem) = answer.problem {
        return Err(Retry::Fail(store.corrupt(problem)));
    }
    let space = cache::Space {
        wseq: answer.wseq,
        last_now: answer.last_now,
    };
    if answer.committed {
        conn.cache.state.apply(&change);
        conn.cache.settings_version = answer.settings_version;
        if let Some(w) = w {
            conn.cache.spaces.insert(w, space);
        }
        return Ok(Attempt::Committed);
    }
    if answer.wseq < 0 {
        // The workspace's row is not there (made by hand away): make it again.
        conn.cache.spaces.remove(w.as_deref().unwrap_or_default());
        return Ok(Attempt::Raced);
    }
    if locked && (answer.wseq != expected || answer.settings_version != conn.cache.settings_version) {
        return Err(Retry::Fail(Error::Internal(
            "the workspace moved on while its lock was held".into(),
        )));
    }
    conn.apply_rows(store, answer.settings, &answer.nodes)?;
    conn.cache.settings_version = answer.settings_version;
    if let Some(w) = w {
        conn.cache.spaces.insert(w, space);
    }
    Ok(Attempt::Raced)
}

/// The text of one commit, sent in one round trip: the transaction (begun here unless the
/// workspace's lock is already held), the commit function, and what follows it.
#[allow(clippy::too_many_arguments)]
fn commit_text(
    conn: &Conn,
    store: &PgStore,
    w: &Option<String>,
    expected: i64,
    scope: &Scope,
    change: &Change,
    decided_at: u64,
    locked: bool,
) -> std::result::Result<String, Retry> {
    let body = serde_json::to_string(change)
        .map_err(|e| Error::Internal(format!("a change does not serialise: {e}")))?;
    // The decision holds until the rules would see the workspace it was made on differently
    // by time alone; the server refuses it from then on, judged by its own clock at commit.
    let valid_until = crate::rules::valid_until_in(&conn.cache.state, scope, decided_at);
    // While `history_keep` is set (by this write or before it), the retention's pass follows
    // the commit: nothing unless one is due, and never the write's locks.
    let keep = change.settings.as_ref().unwrap_or(&conn.cache.state.settings);
    let mut text = String::from(if locked { "" } else { "BEGIN; " });
    text.push_str(sql::COMMIT);
    if !keep.history_keep.is_all() {
        text.push_str(sql::ARCHIVE_HISTORY);
    }
    if conn.session.durable {
        text.push_str(sql::FLUSH_WRITE);
    }
    Ok(sql::fill(
        &text,
        &[
            ("schema", &sql::ident(&store.target.schema)),
            ("w", &w.as_deref().map_or("NULL".into(), sql::literal)),
            ("expected", &expected.to_string()),
            ("sv", &conn.cache.settings_version.to_string()),
            ("decided_at", &decided_at.to_string()),
            ("valid_until", &valid_until.map_or("NULL".into(), |t| t.to_string())),
            ("body", &sql::literal(&body)),
        ],
    ))
}

/// The archived nodes, as of the state `conn` was just brought to (read in one snapshot
/// with it).
pub(super) fn archived(conn: &mut Conn, store: &PgStore) -> Result<Vec<Node>> {
    let schema = store.target.schema.clone();
    let client = conn.client()?;
    let mut tx = super::snapshot(client, store)?;
    let rows = match tx.query(&sql::q(sql::ARCHIVED, &schema), &[]) {
        Ok(r) => r,
        Err(e) if missing(&e) => return Ok(Vec::new()),
        Err(e) => return Err(store.err(e)),
    };
    let version: i64 = tx
        .query_one(&sql::q(sql::VERSION_OF, &schema), &[])
        .map_err(|e| store.err(e))?
        .get("change_count");
    tx.commit().map_err(|e| store.err(e))?;
    if version != conn.version() {
        // Someone wrote between the catch-up and this read: catch up to this snapshot.
        conn.sync(store, false)?;
        if version != conn.version() {
            return archived(conn, store);
        }
    }
    let archived = conn.cache.state.archived();
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let NodeRow { body, .. } = Cols::typed(store, r, "an archived node").read()?;
        let node = super::parse_node(store, &body)?;
        if archived.contains_key(&node.id) {
            out.push(node);
        }
    }
    Ok(out)
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
            super::history::read(&mut fresh, store, None, 0, true)?
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
        let s = &fresh.cache.state;
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
