//! The PostgreSQL backend (docs/postgres.md): the same rules over a database several machines
//! share. The rules are not in SQL: each handle keeps the state in memory, lets the rules
//! decide on it at a time read off the server's clock, and commits the change in one
//! statement (`commit4` in the migrations) that locks the store's row and accepts the write
//! only if no other write came in between and that time lies between the last write's and
//! the server's clock; then it writes the rows. Otherwise it answers the rows written since,
//! in the same round trip, and the handle decides again; after a few such races it takes
//! the row's lock first and decides under it, so every writer gets through. A refusal is
//! answered only once the handle has caught up. docs/postgres.md explains the tables and
//! the choices.

mod copy;
mod listen;
mod sql;
mod tls;
mod url;

pub use url::Target;

use super::backend::{Backend, Decide, Dump, Need, Reading, Report};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::model::{ArchivedStub, Change, HistoryLine, Millis, Node, Settings};
use crate::rules::Archive;
use crate::state::State;
use postgres::error::SqlState;
use postgres::{Client, Statement};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

/// Optimistic attempts before a write takes the store's lock first.
const RACES: usize = 8;
/// Serialization failures and deadlocks retried before giving up.
const RETRIES: usize = 16;
/// A connection idle this long costs one round trip (a check that it is alive) before its
/// next use.
const IDLE_CHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// A PostgreSQL store.
pub struct PgStore {
    target: Target,
    conn: Mutex<Conn>,
    /// The connection that listens for writes, while something waits.
    listener: listen::Listener,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("location", &self.target.location())
            .finish()
    }
}

/// One handle's connection and its cached view of the store.
#[derive(Default)]
struct Conn {
    client: Option<Client>,
    statements: HashMap<&'static str, Statement>,
    state: State,
    /// The write the cached state stands at.
    seq: u64,
    /// The cached state was loaded at least once (`seq` 0 is also an empty store).
    loaded: bool,
    /// The store exists (as of the last look).
    exists: bool,
    /// The server's clock minus this machine's, as of the last round trip.
    offset_ms: i64,
    /// The time the last write was decided at: no write is decided earlier.
    last_now: u64,
    /// The schema version was checked (and the store migrated) on this connection.
    checked: bool,
    /// When the connection was last used: one idle longer than [`IDLE_CHECK`] is checked
    /// before it is used again.
    last_used: Option<std::time::Instant>,
    /// A load is being made again because the store appeared meanwhile (see `absent`).
    reloading: bool,
}

/// An error from the server or the connection, naming the store (never its password).
pub(crate) fn pg_error(location: &str, e: postgres::Error) -> Error {
    let message = match e.as_db_error() {
        Some(db) => format!("PostgreSQL: {}: {}", db.severity(), db.message()),
        None => match std::error::Error::source(&e) {
            Some(why) => format!("PostgreSQL: {e}: {why}"),
            None => format!("PostgreSQL: {e}"),
        },
    };
    Error::Io {
        path: PathBuf::from(location),
        message,
        errno: None,
    }
}

/// True for an error worth retrying as is: a serialization failure or a deadlock.
fn transient(e: &postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
    )
}

/// True when the store's schema or tables are not there yet.
fn missing(e: &postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::UNDEFINED_TABLE
            || *c == SqlState::INVALID_SCHEMA_NAME
            || *c == SqlState::UNDEFINED_FUNCTION
    )
}

impl PgStore {
    /// A store at `arg` (a `postgres://` URL); nothing is connected until the first call.
    pub fn open(arg: &str) -> Result<PgStore> {
        Ok(PgStore {
            target: Target::parse(arg)?,
            conn: Mutex::new(Conn::default()),
            listener: listen::Listener::default(),
        })
    }

    fn conn(&self) -> MutexGuard<'_, Conn> {
        self.conn.lock().unwrap_or_else(|p| {
            let mut g = p.into_inner();
            *g = Conn::default();
            g
        })
    }

    fn err(&self, e: postgres::Error) -> Error {
        pg_error(self.target.location(), e)
    }

    fn corrupt(&self, detail: impl Into<String>) -> Error {
        Error::corrupt(std::path::Path::new(self.target.location()), detail)
    }

    /// Runs `f` with a live connection; a connection that broke is dropped (with the cache,
    /// which may be behind) and made again by the next call.
    fn with<R>(&self, f: impl FnOnce(&mut Conn, &PgStore) -> Result<R>) -> Result<R> {
        let mut conn = self.conn();
        // A connection that sat idle may have been dropped by the server (a restart, an idle
        // timeout, pg_terminate_backend) without this side knowing yet: check it before
        // sending anything, so that a write is never sent on a dead connection and lost as
        // `io` (a lease object or `work` would take its still-valid lease for lost).
        if conn.last_used.is_some_and(|t| t.elapsed() >= IDLE_CHECK) {
            let alive = conn
                .client
                .as_mut()
                .is_some_and(|c| c.is_valid(std::time::Duration::from_secs(10)).is_ok());
            if !alive {
                *conn = Conn::default();
            }
        }
        if conn.client.as_ref().is_none_or(|c| c.is_closed()) {
            let tls = tls::connector(&self.target.tls)?;
            let client = self.target.config.connect(tls).map_err(|e| {
                let mut err = self.err(e);
                if let Error::Io { message, .. } = &mut err {
                    *message = format!("cannot connect: {message}");
                }
                err
            })?;
            *conn = Conn {
                client: Some(client),
                ..Conn::default()
            };
        }
        let result = conn.check_schema(self).and_then(|()| f(&mut conn, self));
        if conn.client.as_ref().is_some_and(|c| c.is_closed()) {
            *conn = Conn::default();
        } else {
            conn.last_used = Some(std::time::Instant::now());
        }
        result
    }
}

impl Conn {
    fn client(&mut self) -> Result<&mut Client> {
        self.client
            .as_mut()
            .ok_or_else(|| Error::Internal("no connection".into()))
    }

    /// A prepared statement of `template`, prepared once per connection.
    fn stmt(&mut self, store: &PgStore, template: &'static str) -> Result<Statement> {
        if let Some(s) = self.statements.get(template) {
            return Ok(s.clone());
        }
        let sql = sql::q(template, &store.target.schema);
        let s = self.client()?.prepare(&sql).map_err(|e| store.err(e))?;
        self.statements.insert(template, s.clone());
        Ok(s)
    }

    /// Brings the cached state up to date; returns the server's time, and whether the store
    /// exists. Rows that are not claimdag's nodes are `corrupt`.
    fn sync(&mut self, store: &PgStore) -> Result<(Millis, bool)> {
        if !self.loaded {
            return self.full_load(store, None);
        }
        let stmt = match self.stmt(store, sql::SINCE) {
            Ok(s) => s,
            Err(e) => return self.absent(store, e),
        };
        let seq = self.seq as i64;
        let row = match self.client()?.query_one(&stmt, &[&seq]) {
            Ok(r) => r,
            Err(e) if missing(&e) => {
                self.statements.clear();
                return self.absent(store, store.err(e));
            }
            Err(e) => return Err(store.err(e)),
        };
        let (new_seq, now, version): (i64, i64, i32) = (row.get(0), row.get(1), row.get(2));
        check_version(store, version)?;
        if new_seq as u64 != self.seq {
            let settings: String = row.get(3);
            let nodes: String = row.get(4);
            self.apply_rows(store, &settings, &nodes)?;
            self.seq = new_seq as u64;
        }
        self.saw_clock(now, row.get(5));
        self.exists = true;
        Ok((now as Millis, true))
    }

    /// The store is not there (yet): an empty state at write 0. When it is there after all
    /// (another process made it since the look that missed it), it is loaded instead.
    fn absent(&mut self, store: &PgStore, why: Error) -> Result<(Millis, bool)> {
        let exists: bool = self
            .client()?
            .query_one(sql::EXISTS, &[&store.target.schema])
            .map_err(|e| store.err(e))?
            .get(0);
        if exists {
            // Another process made the store between the look that missed it and this one:
            // read it as it now is (once; a store that exists and still cannot be read is
            // the error).
            if self.reloading {
                return Err(why);
            }
            self.reloading = true;
            let loaded = self.full_load(store, None);
            self.reloading = false;
            return loaded;
        }
        self.state = State::default();
        self.seq = 0;
        self.loaded = true;
        self.exists = false;
        let now: i64 = self
            .client()?
            .query_one(sql::NOW, &[])
            .map_err(|e| store.err(e))?
            .get(0);
        self.saw_clock(now, 0);
        Ok((now as Millis, false))
    }

    /// Reads the whole store in one snapshot. Rows changed by hand in a way that breaks the
    /// store (see [`tampering`]) are `corrupt`; `check` passes `found` to have them listed
    /// instead.
    fn full_load(
        &mut self,
        store: &PgStore,
        found: Option<&mut Vec<String>>,
    ) -> Result<(Millis, bool)> {
        let schema = store.target.schema.clone();
        let client = self.client()?;
        let mut tx = client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(|e| store.err(e))?;
        let row = match tx.query_one(&sql::q(sql::STORE_ROW, &schema), &[]) {
            Ok(r) => r,
            Err(e) if missing(&e) => {
                drop(tx);
                return self.absent(store, store.err(e));
            }
            Err(e) => return Err(store.err(e)),
        };
        let (seq, now, version, settings, last_now): (i64, i64, i32, String, i64) =
            (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
        check_version(store, version)?;
        let rows = tx
            .query(&sql::q(sql::ALL_NODES, &schema), &[])
            .map_err(|e| store.err(e))?;
        let last = tx
            .query_one(&sql::q(sql::LAST_WRITES, &schema), &[])
            .map_err(|e| store.err(e))?;
        tx.commit().map_err(|e| store.err(e))?;
        let mut problems = tampering(seq, (last.get(0), last.get(1)));
        let mut live = Vec::new();
        let mut stubs = crate::id::IdMap::default();
        for r in rows {
            let (archived, body): (bool, String) = (r.get(0), r.get(1));
            let node = parse_node(store, &body)?;
            problems.extend(columns_disagree(&node, (r.get(2), r.get(3), r.get(4))));
            if archived {
                stubs.insert(node.id, ArchivedStub::of(&node));
            } else {
                live.push(node);
            }
        }
        match found {
            Some(found) => found.extend(problems),
            None => {
                if let Some(first) = problems.into_iter().next() {
                    return Err(store.corrupt(first));
                }
            }
        }
        let settings = parse_settings(store, &settings)?;
        let count = live.len();
        self.state = State::from_parts(settings, live, stubs);
        if self.state.len() != count {
            return Err(store.corrupt("duplicate node ids"));
        }
        self.seq = seq as u64;
        self.loaded = true;
        self.exists = true;
        self.saw_clock(now, last_now);
        Ok((now as Millis, true))
    }

    /// Notes the server's clock (`now`, just read) and the last write's time.
    fn saw_clock(&mut self, now: i64, last_now: i64) {
        self.offset_ms = now - local_ms();
        self.last_now = self.last_now.max(last_now.max(0) as u64);
    }

    /// The server's time as this handle reads it now: its clock plus the last offset seen,
    /// never before the last write's time. `commit2` refuses a time past the server's own.
    fn decision_time(&self) -> Millis {
        ((local_ms() + self.offset_ms).max(0) as u64).max(self.last_now)
    }

    /// Brings an older store's schema up to date, once per connection; refuses a newer one.
    fn check_schema(&mut self, store: &PgStore) -> Result<()> {
        if self.checked {
            return Ok(());
        }
        let schema = store.target.schema.clone();
        let exists: bool = self
            .client()?
            .query_one(sql::EXISTS, &[&schema])
            .map_err(|e| store.err(e))?
            .get(0);
        if exists {
            let version: i32 = self
                .client()?
                .query_one(&sql::q(sql::SCHEMA_VERSION, &schema), &[])
                .map_err(|e| store.err(e))?
                .get(0);
            check_version(store, version)?;
            if version < sql::VERSION {
                let location = store.target.location().to_string();
                sql::migrate(self.client()?, &schema, &location)?;
                self.statements.clear();
            }
        }
        self.checked = true;
        Ok(())
    }

    /// Applies the rows `since` returned: `[{"archived": bool, "node": {...}}]`.
    fn apply_rows(&mut self, store: &PgStore, settings: &str, nodes: &str) -> Result<()> {
        #[derive(serde::Deserialize)]
        struct Row {
            archived: bool,
            node: Node,
        }
        let rows: Vec<Row> = serde_json::from_str(nodes)
            .map_err(|e| store.corrupt(format!("a node row is not a claimdag node: {e}")))?;
        let mut change = Change {
            settings: Some(parse_settings(store, settings)?),
            ..Change::default()
        };
        for r in rows {
            if r.archived {
                change.archived.push(r.node);
            } else {
                change.nodes.push(r.node);
            }
        }
        self.state.apply(&change);
        Ok(())
    }
}

/// This machine's clock, in milliseconds since the Unix epoch.
fn local_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn check_version(store: &PgStore, version: i32) -> Result<()> {
    if version > sql::VERSION {
        return Err(sql::newer(store.target.location(), version));
    }
    Ok(())
}

/// The store row moved back by hand: the history or a node row names a write past the last
/// one (`seq`), which the next write would number again.
fn tampering(seq: i64, (history, nodes): (i64, i64)) -> Vec<String> {
    let mut out = Vec::new();
    if history > seq {
        out.push(format!(
            "the history holds write {history}, past the store's last write {seq}: the store row was changed by hand"
        ));
    }
    if nodes > seq {
        out.push(format!(
            "a node row was changed by write {nodes}, past the store's last write {seq}: the store row was changed by hand"
        ));
    }
    out
}

/// A node row whose status, generation or holder column says other than its body: it was
/// edited by hand, and which of the two is meant is unknown.
fn columns_disagree(
    node: &Node,
    (status, generation, holder): (String, i64, Option<String>),
) -> Option<String> {
    let body_status = serde_json::to_value(node.status).ok();
    let body_holder = node.holder.map(|h| h.hex());
    let same = body_status.as_ref().and_then(|v| v.as_str()) == Some(status.as_str())
        && generation == node.generation as i64
        && holder == body_holder;
    (!same).then(|| {
        format!(
            "node {}: its status, generation or holder column disagrees with its body: the row was changed by hand",
            node.id.hex()
        )
    })
}

fn parse_node(store: &PgStore, body: &str) -> Result<Node> {
    serde_json::from_str(body)
        .map_err(|e| store.corrupt(format!("a node row is not a claimdag node: {e}")))
}

fn parse_settings(store: &PgStore, text: &str) -> Result<Settings> {
    serde_json::from_str(text).map_err(|e| store.corrupt(format!("the settings are garbled: {e}")))
}

/// The archive as the rules read it inside a write: one row of the nodes table.
struct PgArchive<'a> {
    client: RefCell<&'a mut Client>,
    store: &'a PgStore,
}

impl Archive for PgArchive<'_> {
    fn archived_node(&self, id: &Id) -> Result<Option<Node>> {
        let sql = sql::q(sql::ARCHIVED_ONE, &self.store.target.schema);
        let row = self
            .client
            .borrow_mut()
            .query_opt(&sql, &[&id.hex()])
            .map_err(|e| self.store.err(e))?;
        row.map(|r| parse_node(self.store, &r.get::<_, String>(0)))
            .transpose()
    }
}

mod write;

impl Backend for PgStore {
    fn location(&self) -> String {
        self.target.location().to_string()
    }

    fn now(&self) -> Result<Millis> {
        // The store's clock: the server's, never before the last write's time.
        self.with(|conn, store| Ok(conn.sync(store)?.0))
    }

    fn write(&self, decide: &mut Decide<'_>) -> Result<()> {
        self.with(|conn, store| write::write(conn, store, decide))
    }

    fn read(&self, need: Need, f: &mut dyn FnMut(&Reading<'_>)) -> Result<()> {
        self.with(|conn, store| {
            let (now, _) = conn.sync(store)?;
            let archived = if need.archive {
                write::archived(conn, store)?
            } else {
                Vec::new()
            };
            f(&Reading {
                state: &conn.state,
                archived: &archived,
                now,
            });
            Ok(())
        })
    }

    fn history(&self, node: Option<Id>, since: u64) -> Result<Vec<HistoryLine>> {
        self.with(|conn, store| write::history(conn, store, node, since))
    }

    fn version(&self) -> Result<u64> {
        self.with(|conn, store| {
            let stmt = match conn.stmt(store, sql::VERSION_OF) {
                Ok(s) => s,
                Err(_) => return Ok(0),
            };
            match conn.client()?.query_one(&stmt, &[]) {
                Ok(r) => Ok(r.get::<_, i64>(0) as u64),
                Err(e) if missing(&e) => {
                    conn.statements.clear();
                    Ok(0)
                }
                Err(e) => Err(store.err(e)),
            }
        })
    }

    fn wait_change(&self, seen: u64, until: std::time::Instant) -> Result<u64> {
        let mut now = seen;
        self.listener.wait(self, until, &mut || {
            now = self.version()?;
            Ok(now != seen)
        })?;
        Ok(now)
    }

    fn check(&self) -> Result<Report> {
        self.with(write::check)
    }

    fn dump(&self) -> Result<Dump> {
        self.with(copy::dump)
    }

    fn load(&self, dump: &Dump) -> Result<()> {
        self.with(|conn, store| copy::load(conn, store, dump))
    }
}
