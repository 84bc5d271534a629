//! The store: [`Store`], the one API every front door uses, over a backend (where the state
//! lives: a directory, or PostgreSQL). Each write runs the rules inside one locked step of
//! the backend; reads are named queries over one consistent reading of it. No front door
//! sees the state itself.

mod actors;
mod backend;
mod history;
pub mod lease;
mod open;
mod query;
mod talk;
pub mod tokens;
mod wait;

inner! {
    embedded;
    #[cfg(feature = "postgres")]
    postgres;
}

pub use crate::model::HistoryLine;
pub use backend::{Clock, Dump, Report, SystemClock};
pub use history::HistoryCursor;
pub use open::{is_database, without_password};
pub use query::{ListFilter, Page, PageFilter, SORTS, STATUS_WORDS};
pub use talk::ClaimNextOptions;
pub use wait::{Stop, Wait, STOP_EVERY};
inner_item! { use backend::{Backend, Need, Reading}; }
#[cfg(feature = "internals")]
pub use backend::Decide;

use crate::error::{Error, Result};
use crate::graph::Format;
use crate::id::{Actor, Id};
use crate::model::{CancelRequest, Millis, Settings, Status};
use crate::rules::{self, Finish, Output, Plan, Request, Upsert};
use crate::schedule::Pick;
#[cfg(feature = "internals")]
use crate::state::State;
use crate::view::NodeView;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The default store directory (docs/reference.md, "Choosing the store"): `$CLAIMDAG_DIR`, else
/// `$XDG_STATE_HOME/claimdag`, else `~/.local/state/claimdag`. Empty variables count as unset.
pub fn default_dir() -> Result<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = var("CLAIMDAG_DIR") {
        let path = PathBuf::from(&d);
        let database = d.to_str().is_some_and(open::is_database);
        if !database && path.is_relative() {
            return Err(Error::invalid(format!(
                "CLAIMDAG_DIR must be an absolute path or a postgres:// URL, got {:?}: every \
                 process reads it from its own working directory, so a relative one names \
                 another store in each (use \"$PWD/{}\", or --dir for one command)",
                path.display(),
                path.display()
            )));
        }
        return Ok(path);
    }
    if let Some(x) = var("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
    {
        return Ok(x.join("claimdag"));
    }
    if let Some(h) = var("HOME") {
        return Ok(PathBuf::from(h).join(".local/state/claimdag"));
    }
    Err(Error::invalid(
        "no store directory: pass --dir or set CLAIMDAG_DIR (HOME is not set)",
    ))
}

/// The workspace when none is given: `$CLAIMDAG_WORKSPACE`, else "".
pub fn default_workspace() -> Result<String> {
    let ws = std::env::var("CLAIMDAG_WORKSPACE").unwrap_or_default();
    rules::validate_workspace(&ws)?;
    Ok(ws)
}

/// A handle on one store. Cheap to clone and to share between threads; every call is one
/// locked step of the backend, so handles in many processes may use one store.
///
/// ```
/// use claimdag::{Status, Store, Upsert};
/// # let tmp = tempfile::tempdir().unwrap();
/// let store = Store::open(Some(&tmp.path().join("claims")))?;
/// let id = store.upsert(Upsert { summary: "parse the manifest header".into(), ..Upsert::default() })?;
/// let me = claimdag::Actor::from_name("worker-1")?;
/// let gen = store.claim(id, me, None, None)?;           // the fencing token
/// store.complete(id, Status::Done, gen, Some(me), None)?;
/// assert_eq!(store.get(id)?.node.status, Status::Done);
/// # Ok::<(), claimdag::Error>(())
/// ```
#[derive(Clone)]
pub struct Store {
    backend: Arc<dyn Backend>,
    /// Who acts through this handle when it is not the actor a request names
    /// ([`Store::acting_as`]).
    by: Option<Actor>,
    /// The door this handle's calls come through ([`Store::through`]).
    door: Option<&'static str>,
    /// The actors whose names this handle knows are kept ([`Store::named_actor`]).
    named: Arc<std::sync::Mutex<std::collections::HashSet<Actor>>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("location", &self.backend.location())
            .finish()
    }
}
impl Store {
    inner_item! {
        /// A store over any backend.
        fn from_backend(backend: Arc<dyn Backend>) -> Store {
            Store {
                backend,
                by: None,
                door: None,
                named: Arc::default(),
            }
        }
    }

    /// Where the store is: a directory, or a database (never with its password).
    pub fn location(&self) -> String {
        self.backend.location()
    }

    /// The store directory, for a directory store.
    pub fn dir(&self) -> Option<&Path> {
        self.backend.dir()
    }

    /// The lease clock's time.
    pub fn now(&self) -> Result<Millis> {
        self.backend.now()
    }

    /// The same store, where `by` does every write: the history records `by` beside the
    /// actor of each event it makes for another (a lead releasing or completing a worker's
    /// claim for it). The rules are unchanged: a release still names the holder and its
    /// generation.
    pub fn acting_as(&self, by: Actor) -> Store {
        Store {
            by: Some(by),
            ..self.clone()
        }
    }

    /// The same store, whose writes record `door` in their events: the front door they came
    /// through (`cli`, `python`, `c`, `mcp`, `http`, `dashboard`).
    pub fn through(&self, door: &'static str) -> Store {
        Store {
            door: Some(door),
            ..self.clone()
        }
    }

    /// The door this handle's writes record, if any.
    pub fn door(&self) -> Option<&'static str> {
        self.door
    }

    /// Runs one request through the rules and commits what it changes, in one locked step.
    pub fn execute(&self, req: &Request) -> Result<Output> {
        if matches!(req, Request::ClaimNext { .. }) {
            self.backend.before_pick();
        }
        if self.by.is_none() && self.door.is_none() {
            return self.backend.execute(req);
        }
        let mut wrapped = req.clone();
        if let Some(by) = self.by {
            wrapped = Request::Acting {
                by,
                request: Box::new(wrapped),
            };
        }
        if let Some(door) = self.door {
            wrapped = Request::Through {
                door: door.to_string(),
                request: Box::new(wrapped),
            };
        }
        self.backend.execute(&wrapped)
    }
    /// For tests: every request the backend may hand to another handle goes that way, even
    /// without contention (PostgreSQL's combined writes; nothing on the embedded store).
    #[cfg(feature = "testing")]
    pub fn always_combine(&self) {
        self.backend.always_combine();
    }

    /// For tests and measures: no request is handed to another handle, whatever the
    /// contention (PostgreSQL writes every request the plain way; nothing on the embedded
    /// store).
    #[cfg(feature = "testing")]
    pub fn never_combine(&self) {
        self.backend.never_combine();
    }

    /// Runs `f` on the current state at the lease clock's time. For tests and diagnostics:
    /// front doors use the named queries below.
    #[cfg(feature = "internals")]
    pub fn inspect<R>(&self, f: impl FnOnce(&State, Millis) -> R) -> Result<R> {
        let mut f = Some(f);
        let mut out = None;
        self.backend.read(Need::default(), &mut |v| {
            if let Some(f) = f.take() {
                out = Some(f(v.state, v.now));
            }
        })?;
        out.ok_or_else(|| Error::Internal("the backend did not read".into()))
    }

    /// Runs a query on one consistent view.
    fn query<R>(&self, need: Need, f: impl FnOnce(&Reading<'_>) -> R) -> Result<R> {
        let mut f = Some(f);
        let mut out = None;
        self.backend.read(need, &mut |v| {
            if let Some(f) = f.take() {
                out = Some(f(v));
            }
        })?;
        out.ok_or_else(|| Error::Internal("the backend did not read".into()))
    }

    /// Resolves a node argument: a full id, a unique prefix of at least 8 hex characters,
    /// or the `092dca29...` form `list` prints.
    pub fn resolve(&self, text: &str) -> Result<Id> {
        let prefix = query::prefix(text)?;
        match prefix {
            query::Prefix::Full(id) => Ok(id),
            query::Prefix::Part(p) => self.query(Need::default(), |v| query::resolve(v, &p))?,
        }
    }

    /// Resolves a node argument as [`Store::resolve`] does, among the nodes of `workspace`
    /// only: a node of another workspace answers `not_found` as a node that does not exist
    /// does (a door bound to one workspace, [`crate::verbs::Bounds`]).
    pub fn resolve_in(&self, text: &str, workspace: &str) -> Result<Id> {
        let arg = query::prefix(text)?;
        self.query(Need::default(), |v| query::resolve_in(v, &arg, workspace))?
    }

    pub fn upsert(&self, u: Upsert) -> Result<Id> {
        match self.execute(&Request::Upsert(u))? {
            Output::Upserted { id, .. } => Ok(id),
            o => Err(unexpected(o)),
        }
    }

    pub fn link(&self, parent: Id, child: Id, soft: bool) -> Result<()> {
        self.execute(&Request::Link {
            parent,
            child,
            soft,
        })
        .map(|_| ())
    }

    pub fn unlink(&self, parent: Id, child: Id) -> Result<()> {
        self.execute(&Request::Unlink { parent, child }).map(|_| ())
    }

    /// Claims `node` for `actor`; returns the new generation.
    pub fn claim(
        &self,
        node: Id,
        actor: Actor,
        gen: Option<u64>,
        ttl_ms: Option<u64>,
    ) -> Result<u64> {
        generation(self.execute(&Request::Claim {
            node,
            actor,
            gen,
            ttl_ms,
        })?)
    }

    /// Picks and claims the next ready node in one locked step: the longest critical path,
    /// then the higher priority, the exact role, the older node (docs/reference.md, "Verbs"). `None`
    /// when nothing is ready.
    ///
    /// ```
    /// # use claimdag::{Actor, Store, Upsert};
    /// # let tmp = tempfile::tempdir().unwrap();
    /// # let store = Store::open(Some(&tmp.path().join("claims")))?;
    /// let small = store.upsert(Upsert { summary: "small".into(), ..Upsert::default() })?;
    /// let big = store.upsert(Upsert { summary: "big".into(), estimate: Some(5), ..Upsert::default() })?;
    /// let me = Actor::from_name("w1")?;
    /// assert_eq!(store.claim_next("", me, None, None)?, Some((big, 2)));
    /// # Ok::<(), claimdag::Error>(())
    /// ```
    pub fn claim_next(
        &self,
        workspace: &str,
        actor: Actor,
        role: Option<&str>,
        ttl_ms: Option<u64>,
    ) -> Result<Option<(Id, u64)>> {
        let pick = talk::ClaimNextOptions {
            role,
            ttl_ms,
            ..talk::ClaimNextOptions::default()
        };
        let got = self.claim_next_with(workspace, actor, pick)?;
        Ok(got.first().map(|g| (g.id, g.generation)))
    }

    /// Renews a live claim of `actor`: its lease starts again now. Answers the cancel
    /// request made of the holder, if one was: the holder should stop and complete the node
    /// `cancelled` (or finish it).
    pub fn renew(
        &self,
        node: Id,
        actor: Actor,
        gen: Option<u64>,
        ttl_ms: Option<u64>,
    ) -> Result<Option<CancelRequest>> {
        self.renew_with(node, actor, gen, ttl_ms, None)
    }

    /// Hands a claim back; returns the new generation. The node is ready again at once,
    /// or after the store's backoff (`retry_delay`).
    pub fn release(&self, node: Id, actor: Actor, gen: u64) -> Result<u64> {
        self.release_after(node, actor, gen, None)
    }

    /// As [`Store::release`], but the node is not granted again for `retry_in_ms` (instead
    /// of the store's backoff): the failure that made its holder give up takes time to go
    /// away.
    pub fn release_retry_in(
        &self,
        node: Id,
        actor: Actor,
        gen: u64,
        retry_in_ms: u64,
    ) -> Result<u64> {
        self.release_after(node, actor, gen, Some(retry_in_ms))
    }

    fn release_after(
        &self,
        node: Id,
        actor: Actor,
        gen: u64,
        retry_in_ms: Option<u64>,
    ) -> Result<u64> {
        generation(self.execute(&Request::Release {
            node,
            actor,
            gen,
            retry_in_ms,
        })?)
    }

    /// Hands back expired claims (and with a lease, claims quiet that long) in `workspace`.
    pub fn reclaim(&self, workspace: &str, lease_ms: Option<u64>) -> Result<Vec<(Id, u64)>> {
        match self.execute(&Request::Reclaim {
            workspace: workspace.to_string(),
            lease_ms,
        })? {
            Output::HandedBack(v) => Ok(v),
            o => Err(unexpected(o)),
        }
    }

    pub fn complete(
        &self,
        node: Id,
        status: Status,
        gen: u64,
        actor: Option<Actor>,
        note: Option<&str>,
    ) -> Result<()> {
        self.finish(node, status, gen, actor, note, false)
    }

    /// As [`Store::complete`], for a live claim of `actor` only: a `todo` node is
    /// `not_claimed` even for `cancelled` (what a worker, which ends only what it holds,
    /// may do).
    pub fn complete_held(
        &self,
        node: Id,
        status: Status,
        gen: u64,
        actor: Actor,
        note: Option<&str>,
    ) -> Result<()> {
        self.finish(node, status, gen, Some(actor), note, true)
    }

    fn finish(
        &self,
        node: Id,
        status: Status,
        gen: u64,
        actor: Option<Actor>,
        note: Option<&str>,
        held: bool,
    ) -> Result<()> {
        self.complete_with(Finish {
            node,
            status,
            gen,
            actor,
            note: note.map(str::to_string),
            output: None,
            held,
        })
    }

    /// Reopens a finished node; returns the new generation.
    pub fn reopen(&self, node: Id, gen: Option<u64>) -> Result<u64> {
        generation(self.execute(&Request::Reopen { node, gen })?)
    }

    /// Gives parked `node` (out of attempts) fresh attempts at generation `gen`; returns
    /// its new generation.
    pub fn retry(&self, node: Id, gen: u64) -> Result<u64> {
        generation(self.execute(&Request::Retry { node, gen })?)
    }

    /// Decides gate `node` at generation `gen`: `approve` completes it done, otherwise
    /// failed (`reject`), as `actor` when given, keeping `note`.
    pub fn decide_gate(
        &self,
        node: Id,
        gen: u64,
        approve: bool,
        actor: Option<Actor>,
        note: Option<&str>,
    ) -> Result<Status> {
        match self.execute(&Request::Resolve {
            node,
            gen,
            approve,
            actor,
            note: note.map(str::to_string),
        })? {
            Output::Completed(_, status) => Ok(status),
            o => Err(unexpected(o)),
        }
    }

    pub fn settings(&self) -> Result<Settings> {
        self.query(Need::default(), |v| v.state.settings.clone())
    }

    /// Changes one setting from its text form (`config KEY VALUE`) atomically; returns the
    /// settings after the change.
    pub fn set_setting(&self, key: &str, value: &str) -> Result<Settings> {
        self.set_settings(&[(key, value)])
    }

    /// Changes several settings from their text forms in one write: all of them, checked
    /// together, or none. Returns the settings after the change.
    pub fn set_settings(&self, changes: &[(&str, &str)]) -> Result<Settings> {
        let changes = changes
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        match self.execute(&Request::SetSettings { changes })? {
            Output::Settings(s) => Ok(s),
            o => Err(unexpected(o)),
        }
    }

    /// Replaces all settings at once.
    pub fn configure(&self, settings: Settings) -> Result<()> {
        self.execute(&Request::Configure(settings)).map(|_| ())
    }

    /// Creates or merges every node of a plan, with its links, as one atomic write; returns
    /// each node's id and key in plan order. Importing it again changes nothing.
    ///
    /// ```
    /// # use claimdag::{rules::Plan, Store};
    /// # let tmp = tempfile::tempdir().unwrap();
    /// # let store = Store::open(Some(&tmp.path().join("claims")))?;
    /// let plan = Plan::parse(br#"{"nodes": [{"key": "a", "summary": "first"},
    ///                                        {"key": "b", "summary": "then", "deps": ["a"]}]}"#)?;
    /// let ids = store.import("", plan.clone())?;
    /// assert_eq!(ids[1].1, "b");
    /// assert_eq!(store.import("", plan)?, ids);
    /// # Ok::<(), claimdag::Error>(())
    /// ```
    pub fn import(&self, workspace: &str, plan: Plan) -> Result<Vec<(Id, String)>> {
        match self.execute(&Request::Import {
            workspace: workspace.to_string(),
            plan,
        })? {
            Output::Imported(v) => Ok(v),
            o => Err(unexpected(o)),
        }
    }

    /// Archives the given finished nodes, or (also) those finished at least `older_than_ms`
    /// ago, or with neither every finished node of `workspace`; returns how many moved.
    pub fn archive(
        &self,
        workspace: &str,
        nodes: &[Id],
        older_than_ms: Option<u64>,
    ) -> Result<usize> {
        match self.execute(&Request::Archive {
            workspace: workspace.to_string(),
            nodes: nodes.to_vec(),
            older_than_ms,
        })? {
            Output::Archived(n) => Ok(n),
            o => Err(unexpected(o)),
        }
    }

    /// Brings an archived node back into the live state, exactly as it was archived, in one
    /// locked step; returns its status.
    pub fn unarchive(&self, id: Id) -> Result<Status> {
        match self.execute(&Request::Unarchive { node: id })? {
            Output::Completed(_, st) => Ok(st),
            o => Err(unexpected(o)),
        }
    }

    /// One node with its derived display and readiness; archived nodes are found too. The
    /// live state and the archive are read as one snapshot.
    pub fn get(&self, id: Id) -> Result<NodeView> {
        if let Some(v) = self.query(Need::default(), |v| query::node_view(v, &id))? {
            return Ok(v);
        }
        self.query(Need { archive: true }, |v| query::node_view(v, &id))?
            .ok_or_else(|| Error::node_not_found(id))
    }

    /// The workspace and creation time of each of `ids` that is live, in one read (the
    /// server's charts place a history event with them).
    pub fn origins(&self, ids: &[Id]) -> Result<Vec<Option<(String, Millis)>>> {
        self.query(Need::default(), |v| {
            ids.iter()
                .map(|id| v.state.get(id).map(|n| (n.workspace.clone(), n.created_at)))
                .collect()
        })
    }

    /// Nodes in creation order, filtered; the live state and the archive are read as one
    /// snapshot.
    pub fn list(&self, filter: &ListFilter) -> Result<Vec<NodeView>> {
        filter.check()?;
        let need = Need {
            archive: filter.archived || filter.only_archived,
        };
        self.query(need, |v| query::list(v, filter))
    }

    /// One page of a workspace's live nodes (finished ones included) as a dashboard shows
    /// them, with the counts by display word of the whole workspace and the rows on its
    /// critical path, in one consistent reading: only the rows returned are copied.
    pub fn page(&self, filter: &PageFilter) -> Result<Page> {
        filter.check()?;
        self.query(Need::default(), |v| query::page(v, filter))
    }

    /// Ready nodes in the order `next` picks them, each with its critical path and summary.
    pub fn ready(&self, workspace: &str, role: Option<&str>) -> Result<Vec<Pick>> {
        query::check_pick_args(workspace, role)?;
        self.backend.before_pick();
        self.query(Need::default(), |v| query::ready(v, workspace, role))
    }

    /// The node `next` would pick, if any.
    pub fn next(&self, workspace: &str, role: Option<&str>) -> Result<Option<Pick>> {
        query::check_pick_args(workspace, role)?;
        self.backend.before_pick();
        self.query(Need::default(), |v| query::next(v, workspace, role))
    }

    /// The live claims (anyone's) whose ending may still make a node ready for `role`: a
    /// worker that finds nothing ready waits while this is not empty.
    pub fn pending(&self, workspace: &str, role: Option<&str>) -> Result<Vec<Id>> {
        query::check_pick_args(workspace, role)?;
        self.query(Need::default(), |v| query::pending(v, workspace, role))
    }

    /// `(attempts, cap)` when node `id` has used every attempt its cap (its own, else the
    /// store's) allows, so that it is not granted again; `None` otherwise (or when it is
    /// not live). Read in one consistent reading.
    pub fn out_of_attempts(&self, id: Id) -> Result<Option<(u32, u32)>> {
        self.query(Need::default(), |v| query::out_of_attempts(v, &id))
    }

    /// The longest chain of unfinished nodes in `workspace` by estimate (the one `graph`
    /// draws in red), first node first.
    pub fn critical_path(&self, workspace: &str) -> Result<Vec<Id>> {
        rules::validate_workspace(workspace)?;
        self.query(Need::default(), |v| query::critical_path(v, workspace))
    }

    /// The pools and rates of the store, and how much of each `workspace` uses now.
    pub fn limits(&self, workspace: &str) -> Result<Vec<crate::model::limits::LimitUse>> {
        rules::validate_workspace(workspace)?;
        self.query(Need::default(), |v| {
            rules::limits_in(v.state, v.now, workspace)
        })
    }

    /// The live claims `actor` holds in `workspace`, oldest claim first.
    pub fn held_by(&self, workspace: &str, actor: Actor) -> Result<Vec<NodeView>> {
        rules::validate_workspace(workspace)?;
        self.query(Need::default(), |v| query::held_by(v, workspace, actor))
    }

    /// The DAG of `workspace` as Graphviz dot, Mermaid or JSON.
    pub fn graph(&self, workspace: &str, all: bool, format: Format) -> Result<String> {
        rules::validate_workspace(workspace)?;
        self.query(Need::default(), |v| {
            crate::graph::render(v.state, workspace, all, format, v.now)
        })
    }

    /// The live history, oldest first; only `node`'s when given.
    pub fn history(&self, node: Option<Id>) -> Result<Vec<HistoryLine>> {
        self.backend.history(node, 0, false)
    }

    /// The live history of the writes after `since` (a [`Store::version`] seen before).
    pub fn history_since(&self, since: u64, node: Option<Id>) -> Result<Vec<HistoryLine>> {
        self.backend.history(node, since, false)
    }

    /// The history of the writes after `since`, the part moved to the archive by
    /// `history_keep` (`config`) included.
    pub fn history_archived(&self, since: u64, node: Option<Id>) -> Result<Vec<HistoryLine>> {
        self.backend.history(node, since, true)
    }

    /// The history of the writes after `since` that a door bound to `workspace` sees: the
    /// events of its nodes, and those of no node (the settings); the archived part too
    /// with `archived`.
    pub fn history_in(
        &self,
        since: u64,
        workspace: &str,
        archived: bool,
    ) -> Result<Vec<HistoryLine>> {
        let lines = self.backend.history(None, since, archived)?;
        self.query(Need::default(), |v| {
            let here = |n: &Id| v.state.workspace_of(n) == Some(workspace);
            lines
                .into_iter()
                .filter(|l| l.event.node.as_ref().is_none_or(here))
                .collect()
        })
    }

    /// The write the history stands at: every write numbered up to it has ended, so a
    /// reader that starts after it (`HistoryCursor::after_write`) misses none of what
    /// follows. Not [`Store::version`], which counts otherwise on some backends.
    pub fn history_head(&self) -> Result<u64> {
        self.backend.history_head()
    }

    /// The number of the last committed write, by any process: compare it with an earlier
    /// one to know cheaply whether anything changed since.
    pub fn version(&self) -> Result<u64> {
        self.backend.version()
    }

    /// Reads every file of the store afresh (checksums, formats) and verifies the DAG's
    /// invariants. Damaged files are an `Err(corrupt)`; broken invariants are `problems`.
    pub fn check(&self) -> Result<Report> {
        let mut report = self.backend.check()?;
        report
            .notes
            .extend(self.query(Need::default(), |v| rules::pools_over(v.state, v.now))?);
        Ok(report)
    }

    /// Copies this whole store, history and archive included, into `to`, which must be a
    /// new store (never written): a directory to a database or back. Returns what moved.
    pub fn copy_to(&self, to: &Store) -> Result<Dump> {
        let dump = self.backend.dump()?;
        if dump.seq == 0 {
            // Never written: a mistyped directory or schema, not an empty store to copy.
            return Err(Error::NotFound {
                what: format!(
                    "store {} (nothing was ever written there: a mistyped directory or schema?)",
                    self.location()
                ),
                node: None,
            });
        }
        to.backend.load(&dump)?;
        Ok(dump)
    }
}

fn generation(o: Output) -> Result<u64> {
    match o {
        Output::Generation(g) => Ok(g),
        Output::Granted(g) => Ok(g.generation),
        o => Err(unexpected(o)),
    }
}

fn unexpected(o: Output) -> Error {
    Error::Internal(format!("unexpected output {o:?}"))
}
