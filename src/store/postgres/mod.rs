//! The PostgreSQL backend (docs/postgres.md): the same rules over a database several machines
//! share. The rules are not in SQL: each handle keeps the state in memory, lets the rules
//! decide on it at a time read off the server's clock, and commits the change in one round
//! trip (`commit` in schema/commit.sql) that locks the row of the request's workspace and
//! accepts the write only if no other write to that workspace (or to the settings) came in
//! between and that time lies between the workspace's last write's and the server's clock;
//! the write commits asynchronously (its lock goes at once) and the same round trip waits
//! for it to reach the disk before answering. Otherwise it answers the workspace's rows
//! written since, and the handle decides again; after a few such races it takes the
//! workspace's lock first and decides under it, so every writer gets through. A refusal is
//! answered only once the handle has caught up on the workspace. Writes to different
//! workspaces never wait on each other. docs/postgres.md explains the tables and the
//! choices.

mod actors;
mod cache;
mod combine;
mod copy;
mod history;
mod listen;
mod rows;
mod sql;
mod tls;
mod url;

pub use url::Target;

use super::backend::{Backend, Decide, Dump, Need, Reading, Report};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::model::{HistoryLine, Millis, Node, Settings};
use crate::rules::{Archive, Output, Request, Scope};
use crate::state::State;
use postgres::error::SqlState;
use postgres::{Client, Statement};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

/// Optimistic attempts before a write takes its workspace's lock first: under contention
/// every other writer's commit refuses an optimistic one, and the lock orders them instead.
const RACES: usize = 2;
/// Locked writes in a row that met no other writer before a handle decides on its cache
/// again: among a few busy writers, an optimistic commit after one calm moment is refused.
const CALM: u32 = 3;
/// Serialization failures and deadlocks retried before giving up.
const RETRIES: usize = 16;
/// A connection idle this long costs one round trip (a check that it is alive) before its
/// next use.
const IDLE_CHECK: std::time::Duration = std::time::Duration::from_secs(1);
/// A connection idle this long is given [`GONE_WAIT`] to show that the server ended it.
const GONE_CHECK: std::time::Duration = std::time::Duration::from_millis(20);
const GONE_WAIT: std::time::Duration = std::time::Duration::from_millis(1);

/// A PostgreSQL store.
pub struct PgStore {
    target: Target,
    conn: Mutex<Conn>,
    /// The connection that listens for writes, while something waits.
    listener: listen::Listener,
    /// When requests are combined (tests and measures set it).
    combine: std::sync::atomic::AtomicU8,
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
    statements: Statements,
    cache: Cache,
    clock: Clock,
    session: Session,
    call: Call,
    contention: Contention,
}

/// The statements prepared on the connection, by template.
#[derive(Default)]
struct Statements(HashMap<&'static str, Statement>);

impl Statements {
    /// Forgets them all (the schema changed, or a statement failed on a missing object).
    fn clear(&mut self) {
        self.0.clear();
    }
}

/// The state as the handle last caught up on it.
#[derive(Default)]
struct Cache {
    state: State,
    /// Every workspace the cache knows, as of the last catch-up on it.
    spaces: HashMap<String, cache::Space>,
    /// The version of the settings the cache holds.
    settings_version: i64,
    /// The cached state was loaded at least once (an empty store is loaded too).
    loaded: bool,
    /// The store exists (as of the last look).
    exists: bool,
    /// A load is being made again because the store appeared meanwhile (see `absent`).
    reloading: bool,
}

/// The server's clock as this handle reads it.
#[derive(Default)]
struct Clock {
    /// The server's clock minus this machine's, as of the last round trip.
    offset_ms: i64,
    /// The latest write time seen in any workspace: no read is made earlier.
    last_now: u64,
}

/// What holds for the connection's session.
#[derive(Default)]
struct Session {
    /// The schema version was checked (and the store migrated) on this connection.
    checked: bool,
    /// This session commits synchronously (`synchronous_commit` is not off): a write waits
    /// for its flush before it is answered, and a read flushes first.
    durable: bool,
    /// When the connection was last used: one idle longer than [`IDLE_CHECK`] is checked
    /// before it is used again.
    last_used: Option<std::time::Instant>,
}

/// What the current call did on the connection.
#[derive(Default)]
struct Call {
    /// The last call's connection broke under it (and was dropped).
    broke: bool,
    /// The call on this connection sent something that may have committed a write (the
    /// commit of a write, a load): when the connection breaks after it, the call's outcome
    /// is unknown and it is not made again.
    sent: bool,
}

/// How contended this handle's writes were lately: whether the next one takes its
/// workspace's lock first, or is left for the workspace's leader.
#[derive(Default)]
struct Contention {
    /// The last write raced another (or took the lock, or was combined with others'): the
    /// next one takes the lock first, or is combined.
    contended: bool,
    /// Locked writes in a row that met no other writer in their workspace.
    calm: u32,
    /// The number of this session's last request left for a leader (`combine`).
    ask: i64,
    /// The next write of the fleet's hot path is left for the workspace's leader: enough
    /// writers were busy there lately (`combine::COMBINE_AT`).
    combine: bool,
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

/// A read-only REPEATABLE READ transaction: every statement in it reads one snapshot.
fn snapshot<'c>(client: &'c mut Client, store: &PgStore) -> Result<postgres::Transaction<'c>> {
    client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .map_err(|e| store.err(e))
}

/// The first row a simple-protocol query answered (`what` names the query).
fn first_row<'m>(
    store: &PgStore,
    messages: &'m [postgres::SimpleQueryMessage],
    what: &str,
) -> Result<&'m postgres::SimpleQueryRow> {
    messages
        .iter()
        .find_map(|m| match m {
            postgres::SimpleQueryMessage::Row(r) => Some(r),
            _ => None,
        })
        .ok_or_else(|| store.corrupt(format!("the {what} answered no row")))
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
            combine: Default::default(),
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
    /// which may be behind) and made again. When it broke before `f` sent anything that may
    /// commit (a connection killed, or a server restarted, since the last call), `f` runs
    /// again once on a new connection; after, the call is `io`: its outcome is unknown.
    fn with<R>(&self, mut f: impl FnMut(&mut Conn, &PgStore) -> Result<R>) -> Result<R> {
        // One lock for both attempts: no other thread's call may come between a failed
        // attempt and the decision to make it again (it would reset what that decision
        // reads).
        let mut conn = self.conn();
        match self.attempt(&mut conn, &mut f) {
            Err(e) if e.code() == crate::Code::Io && conn.may_retry() => {
                self.attempt(&mut conn, &mut f)
            }
            r => r,
        }
    }

    fn attempt<R>(
        &self,
        conn: &mut Conn,
        f: &mut impl FnMut(&mut Conn, &PgStore) -> Result<R>,
    ) -> Result<R> {
        conn.call.sent = false;
        conn.call.broke = false;
        // The server may have ended the connection since the last call (pg_terminate_backend,
        // a restart): a connection idle for a moment is given a millisecond to show what the
        // server sent meanwhile, so that nothing is sent on a connection that is gone.
        if conn.session.last_used.is_some_and(|t| t.elapsed() >= GONE_CHECK) {
            if let Some(c) = conn.client.as_mut() {
                use postgres::fallible_iterator::FallibleIterator;
                let polled = c.notifications().timeout_iter(GONE_WAIT).next();
                if polled.is_err() || c.is_closed() {
                    *conn = Conn::default();
                }
            }
        }
        if conn.session.last_used.is_some_and(|t| t.elapsed() >= IDLE_CHECK) {
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
        let result = conn.check_schema(self).and_then(|()| f(conn, self));
        if conn.client.as_ref().is_some_and(|c| c.is_closed()) {
            let sent = conn.call.sent;
            *conn = Conn {
                call: Call { sent, broke: true },
                ..Conn::default()
            };
        } else {
            conn.session.last_used = Some(std::time::Instant::now());
        }
        result
    }
}

impl Conn {
    /// The last call failed on a connection that broke before it sent anything that may
    /// have committed: making it again cannot make a write twice.
    fn may_retry(&self) -> bool {
        self.call.broke && !self.call.sent
    }

    /// The connection broke: an error on it says nothing about the store.
    fn gone(&self) -> bool {
        self.client.as_ref().is_none_or(|c| c.is_closed())
    }

    fn client(&mut self) -> Result<&mut Client> {
        self.client
            .as_mut()
            .ok_or_else(|| Error::Internal("no connection".into()))
    }

    /// A prepared statement of `template`, prepared once per connection.
    fn stmt(&mut self, store: &PgStore, template: &'static str) -> Result<Statement> {
        if let Some(s) = self.statements.0.get(template) {
            return Ok(s.clone());
        }
        let sql = sql::q(template, &store.target.schema);
        let s = self.client()?.prepare(&sql).map_err(|e| store.err(e))?;
        self.statements.0.insert(template, s.clone());
        Ok(s)
    }

    /// Brings an older store's schema up to date, once per connection; refuses a newer one.
    fn check_schema(&mut self, store: &PgStore) -> Result<()> {
        if self.session.checked {
            return Ok(());
        }
        let schema = store.target.schema.clone();
        let exists: bool = self
            .client()?
            .query_one(sql::EXISTS, &[&schema])
            .map_err(|e| store.err(e))?
            .get("exists");
        if exists {
            let version: i32 = self
                .client()?
                .query_one(&sql::q(sql::SCHEMA_VERSION, &schema), &[])
                .map_err(|e| store.err(e))?
                .get("version");
            check_version(store, version)?;
            if version < sql::VERSION {
                let location = store.target.location().to_string();
                sql::migrate(self.client()?, &schema, &location)?;
                self.statements.clear();
            }
        }
        self.session.durable = self
            .client()?
            .query_one(sql::SYNC_COMMIT, &[])
            .map_err(|e| store.err(e))?
            .get("durable");
        self.session.checked = true;
        Ok(())
    }
}

/// This machine's clock, in milliseconds since the Unix epoch.
pub(super) fn local_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

pub(super) fn check_version(store: &PgStore, version: i32) -> Result<()> {
    if version > sql::VERSION {
        return Err(sql::newer(store.target.location(), version));
    }
    Ok(())
}

pub(super) fn parse_node(store: &PgStore, body: &str) -> Result<Node> {
    serde_json::from_str(body)
        .map_err(|e| store.corrupt(format!("a node row is not a claimdag node: {e}")))
}

pub(super) fn parse_settings(store: &PgStore, text: &str) -> Result<Settings> {
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
        row.map(|r| {
            let row: rows::NodeRow = rows::Cols::typed(self.store, &r, "an archived node").read()?;
            parse_node(self.store, &row.body)
        })
        .transpose()
    }
}

mod write;

impl Backend for PgStore {
    fn actor_names(&self) -> Result<Vec<crate::model::ActorName>> {
        self.with(actors::read)
    }

    fn keep_actor_names(&self, names: &[crate::model::ActorName]) -> Result<()> {
        self.with(|conn, store| actors::keep(conn, store, names))
    }

    fn tokens(&self) -> Result<Vec<crate::model::actors::ActorToken>> {
        self.with(actors::tokens)
    }

    fn add_token(&self, token: &crate::model::actors::ActorToken) -> Result<()> {
        self.with(|conn, store| actors::add_token(conn, store, token))
    }

    fn revoke_tokens(
        &self,
        which: &crate::model::actors::TokenSelect,
        at: Millis,
    ) -> Result<Vec<crate::model::actors::ActorToken>> {
        self.with(|conn, store| actors::revoke_tokens(conn, store, which, at))
    }

    fn location(&self) -> String {
        self.target.location().to_string()
    }

    fn now(&self) -> Result<Millis> {
        // The store's clock: the server's, never before the last write's time.
        self.with(|conn, store| {
            let (now, _) = conn.sync(store, false)?;
            Ok(conn.read_time(now))
        })
    }

    fn write(&self, scope: &dyn Fn(&State) -> Scope, decide: &mut Decide<'_>) -> Result<()> {
        self.with(|conn, store| write::write(conn, store, scope, decide))
    }

    #[cfg(feature = "testing")]
    fn always_combine(&self) {
        self.combine
            .store(combine::ALWAYS, std::sync::atomic::Ordering::Relaxed);
    }

    #[cfg(feature = "testing")]
    fn never_combine(&self) {
        self.combine
            .store(combine::NEVER, std::sync::atomic::Ordering::Relaxed);
    }

    fn execute(&self, req: &Request) -> Result<Output> {
        if combine::combinable(req) {
            if let Some(output) = self.with(|conn, store| combine::execute(conn, store, req))? {
                return Ok(output);
            }
        }
        super::backend::run(self, req)
    }

    fn read(&self, need: Need, f: &mut dyn FnMut(&Reading<'_>)) -> Result<()> {
        self.with(|conn, store| {
            let (now, _) = conn.sync(store, true)?;
            let now = conn.read_time(now);
            let archived = if need.archive {
                write::archived(conn, store)?
            } else {
                Vec::new()
            };
            f(&Reading {
                state: &conn.cache.state,
                archived: &archived,
                now,
            });
            Ok(())
        })
    }

    fn history(&self, node: Option<Id>, since: u64, archived: bool) -> Result<Vec<HistoryLine>> {
        self.with(|conn, store| history::read(conn, store, node, since, archived))
    }

    fn history_from(
        &self,
        after: (u64, u32),
        hint: &mut super::backend::Hint,
        most: usize,
    ) -> Result<Vec<HistoryLine>> {
        let _ = hint; // the lines are found by their numbers, through the primary keys
        self.with(|conn, store| history::from(conn, store, after, most))
    }

    fn history_head(&self) -> Result<u64> {
        self.with(|conn, store| {
            let stmt = match conn.stmt(store, sql::HEAD) {
                Ok(s) => s,
                Err(e) if conn.gone() => return Err(e),
                Err(_) => return Ok(0),
            };
            match conn.client()?.query_one(&stmt, &[]) {
                Ok(r) => Ok(r.get::<_, Option<i64>>("history_head").unwrap_or(0).max(0) as u64),
                Err(e) if missing(&e) => {
                    conn.statements.clear();
                    Ok(0)
                }
                Err(e) => Err(store.err(e)),
            }
        })
    }

    fn version(&self) -> Result<u64> {
        self.with(|conn, store| {
            let stmt = match conn.stmt(store, sql::VERSION_OF) {
                Ok(s) => s,
                Err(e) if conn.gone() => return Err(e),
                Err(_) => return Ok(0),
            };
            match conn.client()?.query_one(&stmt, &[]) {
                Ok(r) => Ok(r.get::<_, Option<i64>>("change_count").unwrap_or(0) as u64),
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
