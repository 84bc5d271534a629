//! The store: where the state lives, and the one API every front door uses. Each verb runs
//! [`crate::rules::apply`] under the store's lock; the store only loads and saves.

mod embedded;
pub mod fault;
mod fsutil;
pub mod journal;
pub mod snapshot;

pub use embedded::{Logs, Tuning, ARCHIVE, HISTORY, JOURNAL, LOCK, SNAPSHOT};
pub use journal::HistoryLine;

use crate::error::{Error, Result};
use crate::id::{Actor, Id};
use crate::model::{Millis, Settings, State, Status};
use crate::rules::{self, Output, Plan, Request, Upsert};
use crate::schedule::{self, Pick};
use crate::view::NodeView;
use embedded::Embedded;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// Where the time comes from. The rules never read a clock; the store asks this once per call.
pub trait Clock: Send + Sync {
    fn now_ms(&self) -> Millis;
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> Millis {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as Millis)
            .unwrap_or(0)
    }
}

/// The default store directory (SPEC section 1): `$CLAIMDAG_DIR`, else
/// `$XDG_STATE_HOME/claimdag`, else `~/.local/state/claimdag`. Empty variables count as unset.
pub fn default_dir() -> Result<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = var("CLAIMDAG_DIR") {
        return Ok(PathBuf::from(d));
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

/// The words `list --status` takes: stored statuses and display words.
pub const STATUS_WORDS: [&str; 8] = [
    "todo",
    "ready",
    "blocked",
    "claimed",
    "expired",
    "done",
    "failed",
    "cancelled",
];

/// Which nodes `list` shows.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Only this workspace; `None` for every workspace.
    pub workspace: Option<String>,
    /// A stored status or a display word (`ready`, `blocked`, `expired`, ...).
    pub status: Option<String>,
    pub holder: Option<Actor>,
    /// Include finished nodes.
    pub terminal: bool,
    /// Include archived nodes.
    pub archived: bool,
    /// Show archived nodes only.
    pub only_archived: bool,
}

/// A handle on one store directory. Cheap to share between threads (`Arc<Store>`); every
/// call takes the directory's OS lock, so handles in many processes may use one directory.
pub struct Store {
    dir: PathBuf,
    tuning: Tuning,
    clock: Arc<dyn Clock>,
    inner: Mutex<Embedded>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("dir", &self.dir).finish()
    }
}

impl Store {
    /// Opens the store at `dir`, or at the default directory when `None`. Nothing is
    /// created until the first write.
    pub fn open(dir: Option<&Path>) -> Result<Store> {
        let dir = match dir {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => default_dir()?,
        };
        Ok(Store::with(dir, Tuning::default(), Arc::new(SystemClock)))
    }

    /// Opens a store with explicit tuning and clock.
    pub fn with(dir: PathBuf, tuning: Tuning, clock: Arc<dyn Clock>) -> Store {
        Store {
            dir,
            tuning,
            clock,
            inner: Mutex::new(Embedded::default()),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn inner(&self) -> MutexGuard<'_, Embedded> {
        // A panic mid-call may leave the cache half-updated: start over from the files.
        self.inner.lock().unwrap_or_else(|poisoned| {
            let mut g = poisoned.into_inner();
            *g = Embedded::default();
            g
        })
    }

    pub fn now(&self) -> Millis {
        self.clock.now_ms()
    }

    /// Runs one request through the rules and commits what it changes.
    pub fn execute(&self, req: &Request) -> Result<Output> {
        let clock = self.clock.clone();
        self.inner().write(
            &self.dir,
            &self.tuning,
            &move || clock.now_ms(),
            &|state, archive, now| {
                let effect = rules::apply(state, archive, req, now)?;
                Ok((effect.change, effect.output))
            },
        )
    }

    /// Runs `f` on the current state (under a shared lock) at the current time.
    pub fn read<R>(&self, f: impl FnOnce(&State, Millis) -> R) -> Result<R> {
        let now = self.now();
        self.inner().read(&self.dir, |s| f(s, now))
    }

    /// Resolves a node argument: a full id, a unique prefix of at least 8 hex characters,
    /// or the `092dca29...` form `list` prints.
    pub fn resolve(&self, text: &str) -> Result<Id> {
        let t = text.trim().trim_end_matches("...").to_ascii_lowercase();
        if t.len() == 32 {
            return Id::parse(&t, "node id");
        }
        if t.len() < 8 || t.len() > 32 || !t.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(Error::invalid(format!(
                "node must be a 32-hex id or a prefix of at least 8 hex characters, got {text:?}"
            )));
        }
        let matches = self.read(|s, _| {
            let mut m: Vec<Id> = s
                .nodes()
                .iter()
                .map(|n| n.id)
                .chain(s.archived().keys().copied())
                .filter(|id| id.starts_with_hex(&t))
                .take(2)
                .collect();
            m.dedup();
            m
        })?;
        match matches.as_slice() {
            [one] => Ok(*one),
            [] => Err(Error::NotFound {
                what: format!("node {t}..."),
                node: None,
            }),
            _ => Err(Error::invalid(format!(
                "node prefix {t} is ambiguous: give more characters"
            ))),
        }
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

    /// Picks and claims the next ready node in one locked step.
    pub fn claim_next(
        &self,
        workspace: &str,
        actor: Actor,
        role: Option<&str>,
        ttl_ms: Option<u64>,
    ) -> Result<Option<(Id, u64)>> {
        match self.execute(&Request::ClaimNext {
            workspace: workspace.to_string(),
            actor,
            role: role.map(str::to_string),
            ttl_ms,
        })? {
            Output::Claimed(c) => Ok(c),
            o => Err(unexpected(o)),
        }
    }

    pub fn renew(
        &self,
        node: Id,
        actor: Actor,
        gen: Option<u64>,
        ttl_ms: Option<u64>,
    ) -> Result<()> {
        self.execute(&Request::Renew {
            node,
            actor,
            gen,
            ttl_ms,
        })
        .map(|_| ())
    }

    /// Hands a claim back; returns the new generation.
    pub fn release(&self, node: Id, actor: Actor, gen: u64) -> Result<u64> {
        generation(self.execute(&Request::Release { node, actor, gen })?)
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
        self.execute(&Request::Complete {
            node,
            status,
            gen,
            actor,
            note: note.map(str::to_string),
        })
        .map(|_| ())
    }

    /// Reopens a finished node; returns the new generation.
    pub fn reopen(&self, node: Id, gen: Option<u64>) -> Result<u64> {
        generation(self.execute(&Request::Reopen { node, gen })?)
    }

    pub fn settings(&self) -> Result<Settings> {
        self.read(|s, _| s.settings.clone())
    }

    /// Changes one setting from its text form (`config KEY VALUE`) atomically; returns the
    /// settings after the change.
    pub fn set_setting(&self, key: &str, value: &str) -> Result<Settings> {
        match self.execute(&Request::SetSetting {
            key: key.to_string(),
            value: value.to_string(),
        })? {
            Output::Settings(s) => Ok(s),
            o => Err(unexpected(o)),
        }
    }

    /// Replaces all settings at once.
    pub fn configure(&self, settings: Settings) -> Result<()> {
        self.execute(&Request::Configure(settings)).map(|_| ())
    }

    /// One node with its derived display and readiness; archived nodes are found too. The
    /// live state and the archive are read as one snapshot.
    pub fn get(&self, id: Id) -> Result<NodeView> {
        if let Some(v) = self.read(|s, now| s.get(&id).map(|n| NodeView::of(s, n, now)))? {
            return Ok(v);
        }
        let now = self.now();
        self.inner()
            .with_logs(&self.dir, false, |s, logs| {
                s.get(&id)
                    .or_else(|| logs.archive.get(&id))
                    .map(|n| NodeView::of(s, n, now))
            })?
            .ok_or_else(|| Error::node_not_found(id))
    }

    /// Nodes in creation order, filtered; the live state and the archive are read as one
    /// snapshot.
    pub fn list(&self, filter: &ListFilter) -> Result<Vec<NodeView>> {
        if let Some(st) = &filter.status {
            if !STATUS_WORDS.contains(&st.as_str()) {
                return Err(Error::invalid(format!(
                    "unknown status {st:?}: use one of {}",
                    STATUS_WORDS.join(", ")
                )));
            }
        }
        let now = self.now();
        let pick = |s: &State, archive: &[&crate::model::Node]| -> Vec<NodeView> {
            let live = s.nodes().iter().filter(|_| !filter.only_archived);
            live.chain(archive.iter().copied())
                .filter(|n| filter.workspace.as_deref().is_none_or(|w| n.workspace == w))
                .filter(|n| filter.holder.is_none_or(|h| n.holder == Some(h)))
                .map(|n| NodeView::of(s, n, now))
                .filter(|v| match &filter.status {
                    Some(st) => v.node.status.as_str() == st || v.display.as_str() == st,
                    None => v.node.archived || filter.terminal || !v.node.status.is_terminal(),
                })
                .collect()
        };
        if !(filter.archived || filter.only_archived) {
            return self.read(|s, _| pick(s, &[]));
        }
        self.inner().with_logs(&self.dir, false, |s, logs| {
            let mut v: Vec<_> = logs.archive.values().collect();
            // Creation time, then the order they were archived in (a batch keeps the order
            // of the live state, which is creation order).
            v.sort_by_key(|n| (n.created_at, logs.archive_order.get(&n.id).copied()));
            pick(s, &v)
        })
    }

    /// Creates or merges every node of a plan, with its links, as one atomic write; returns
    /// each node's id and key in plan order.
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

    /// Ready nodes in the order `next` picks them.
    pub fn ready(&self, workspace: &str, role: Option<&str>) -> Result<Vec<Pick>> {
        check_pick_args(workspace, role)?;
        self.read(|s, now| schedule::order(&rules::view_at(s, now), workspace, role.unwrap_or("")))
    }

    /// The node `next` would pick, if any.
    pub fn next(&self, workspace: &str, role: Option<&str>) -> Result<Option<Pick>> {
        check_pick_args(workspace, role)?;
        self.read(|s, now| schedule::best(&rules::view_at(s, now), workspace, role.unwrap_or("")))
    }

    /// The history, oldest first; only `node`'s when given.
    pub fn history(&self, node: Option<Id>) -> Result<Vec<HistoryLine>> {
        let all = self.inner().logs(&self.dir)?.history;
        Ok(match node {
            Some(id) => all
                .into_iter()
                .filter(|h| h.event.node == Some(id))
                .collect(),
            None => all,
        })
    }
}

/// What `check` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub nodes: usize,
    pub archived: usize,
    pub events: usize,
    /// Broken invariants: the store is not sound.
    pub problems: Vec<String>,
    /// Things worth knowing that break nothing (a journal that could not be compacted).
    pub notes: Vec<String>,
}

impl Store {
    /// Reads every file of the store afresh (checksums, formats) and verifies the DAG's
    /// invariants. Damaged files are an `Err(corrupt)`; broken invariants are `problems`.
    pub fn check(&self) -> Result<Report> {
        let mut fresh = Embedded::default();
        let (nodes, archived, problems, events) = fresh.with_logs(&self.dir, true, |s, logs| {
            let mut p = crate::verify::problems(s);
            p.extend(crate::verify::history_problems(
                s,
                &logs.history,
                &logs.archive,
            ));
            (s.len(), s.archived().len(), p, logs.history.len())
        })?;
        let notes = fresh
            .compaction_backlog(&self.dir, &self.tuning)
            .into_iter()
            .collect();
        Ok(Report {
            nodes,
            archived,
            events,
            problems,
            notes,
        })
    }
}

/// The workspace and role of `next` and `ready`, checked as `claim-next` checks them.
fn check_pick_args(workspace: &str, role: Option<&str>) -> Result<()> {
    rules::validate_workspace(workspace)?;
    if let Some(r) = role {
        rules::validate_word("role", r, 0)?;
    }
    Ok(())
}

fn generation(o: Output) -> Result<u64> {
    match o {
        Output::Generation(g) => Ok(g),
        o => Err(unexpected(o)),
    }
}

fn unexpected(o: Output) -> Error {
    Error::Internal(format!("unexpected output {o:?}"))
}
