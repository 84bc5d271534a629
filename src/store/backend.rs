//! The seam between [`super::Store`] and where the state lives. A backend gives the pure
//! rules the state they need inside one locked step (a lock file, a database transaction)
//! and commits what they decided; it never decides anything itself. The embedded directory
//! store is one backend; the PostgreSQL store is another.

use crate::error::{Error, Result};
use crate::id::Id;
use crate::model::{Change, HistoryLine, Millis, Node};
use crate::rules::{self, Archive, Output, Request, Scope};
use crate::state::State;
use std::path::Path;

/// Decides one write: the current state, its archive and the lease clock's time in, the
/// change to commit out. An `Err` refuses the write and nothing is committed. A backend may
/// call it more than once (only the last call's change is committed).
pub type Decide<'a> = dyn FnMut(&State, &dyn Archive, Millis) -> Result<Change> + 'a;

/// Runs `req` through the rules in one [`Backend::write`]: what its change commits, and the
/// output the rules gave with it.
pub fn run<B: Backend + ?Sized>(backend: &B, req: &Request) -> Result<Output> {
    let mut output = None;
    backend.write(&|state| req.scope(state), &mut |state, archive, now| {
        let effect = rules::apply(state, archive, req, now)?;
        output = Some(effect.output);
        Ok(effect.change)
    })?;
    output.ok_or_else(|| Error::Internal("the backend did not run the rules".into()))
}

/// What a read needs besides the live state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Need {
    /// The archived nodes' last values (`show` and `list` of archived nodes).
    pub archive: bool,
}

/// One consistent reading of a store: everything in it was read in one locked step.
pub struct Reading<'a> {
    pub state: &'a State,
    /// The archived nodes by creation time, then archive order; empty unless asked for.
    pub archived: &'a [Node],
    /// The lease clock's time of the read.
    pub now: Millis,
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
    /// What was read back whole: "files and checksums", "tables".
    pub intact: &'static str,
}

/// A whole store, as `copy` moves it between backends: the settings, the live nodes in
/// creation order, the archived nodes (in the order they were archived), the whole history
/// and the number of the last write.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dump {
    pub seq: u64,
    pub settings: crate::model::Settings,
    pub nodes: Vec<Node>,
    pub archived: Vec<Node>,
    pub history: Vec<HistoryLine>,
    /// The names kept for actors.
    pub actors: Vec<crate::model::ActorName>,
    /// The actors' tokens (hashes only).
    pub tokens: Vec<crate::model::actors::ActorToken>,
}

/// Where a reader of the history stopped, as a backend counts it (the embedded store: the
/// history segment it was reading and the byte offset it read to there, the offset it read
/// to in its journal, and the number of the journal's first record then, which tells
/// whether the journal was started again since).
pub type Hint = [u64; 4];

/// A place the state lives. Every method is one locked step of its own.
pub trait Backend: Send + Sync + std::fmt::Debug {
    /// Where the store is, for messages and headers (never with a password).
    fn location(&self) -> String;

    /// The store directory, for a directory store.
    fn dir(&self) -> Option<&Path> {
        None
    }

    /// The lease clock's time.
    fn now(&self) -> Result<Millis>;

    /// Runs `decide` on the current state and commits what it returns, in one locked step.
    /// When this returns `Ok`, the change is durable.
    ///
    /// `scope` tells, on the state `decide` will see, what the request reads and writes (one
    /// workspace, or the settings): a backend may serialise it with that part alone.
    fn write(&self, scope: &dyn Fn(&State) -> Scope, decide: &mut Decide<'_>) -> Result<()>;

    /// Runs one request through the rules and commits what it changes, in one locked step
    /// ([`run`], a [`Backend::write`] of [`rules::apply`]). A backend may instead hand the
    /// request to another handle of the same store that decides it with the rules, in order
    /// with others, and commits it as a write of its own (PostgreSQL under contention).
    fn execute(&self, req: &Request) -> Result<Output> {
        run(self, req)
    }

    /// Runs `f` on one consistent view.
    fn read(&self, need: Need, f: &mut dyn FnMut(&Reading<'_>)) -> Result<()>;

    /// A pick (`claim_next`, `next`, `ready`) comes next: a backend may read ahead, before
    /// its lock, what the pick will need, so that the locked step is shorter. It decides and
    /// commits nothing, and what it read is checked against the store under the lock.
    fn before_pick(&self) {}

    /// For tests: every request a backend may hand to another handle goes that way, even
    /// without contention (PostgreSQL's combined writes).
    #[cfg(feature = "testing")]
    fn always_combine(&self) {}

    /// For tests and measures: no request is handed to another handle, whatever the
    /// contention (every write goes the plain way).
    #[cfg(feature = "testing")]
    fn never_combine(&self) {}

    /// The history lines of writes after `since` (0: all), oldest first; `node`'s only
    /// when given. With `archived`, the history moved to the archive by `history_keep`
    /// first; without, only the live history.
    fn history(&self, node: Option<Id>, since: u64, archived: bool) -> Result<Vec<HistoryLine>>;

    /// At most `most` history lines (every node) after the line at `after` (`(seq, i)`),
    /// oldest first. `hint` is where this reader's last call ended, as this backend counts
    /// (zeros at first): a backend may start from it instead of reading what came before,
    /// and moves it past what it read. The archived history is read too (a reader that
    /// starts from the beginning sees it all). By default: [`Backend::history`] from
    /// `after`'s write.
    fn history_from(
        &self,
        after: (u64, u32),
        hint: &mut Hint,
        most: usize,
    ) -> Result<Vec<HistoryLine>> {
        let _ = hint;
        let lines = self.history(None, after.0.saturating_sub(1), true)?;
        Ok(lines
            .into_iter()
            .filter(|l| (l.seq, l.i) > after)
            .take(most)
            .collect())
    }

    /// The number of the last history line's write a reader may start after: every write
    /// numbered up to it has ended, so none will appear below it later.
    fn history_head(&self) -> Result<u64> {
        self.version()
    }

    /// The number of the last committed write, by any process: it changes with every
    /// commit and never goes back, and costs about one small read.
    fn version(&self) -> Result<u64>;

    /// Waits until the store's version is no longer `seen` (a write of any process or
    /// host) or `until` passes, and returns the version then, read after the wait began.
    /// It decides nothing: the caller looks again under the lock.
    fn wait_change(&self, seen: u64, until: std::time::Instant) -> Result<u64>;

    /// Reads everything afresh (formats, checksums) and verifies the invariants.
    fn check(&self) -> Result<Report>;

    /// The names the store keeps for its actors, in the order first kept.
    fn actor_names(&self) -> Result<Vec<crate::model::ActorName>>;

    /// Keeps `names`: a name not kept yet is added; one kept already keeps its name and its
    /// first time, and takes the note given (if any). Durable when it returns.
    fn keep_actor_names(&self, names: &[crate::model::ActorName]) -> Result<()>;

    /// Every token kept (hashes only), in the order made.
    fn tokens(&self) -> Result<Vec<crate::model::actors::ActorToken>>;

    /// Keeps a new token. Durable when it returns.
    fn add_token(&self, token: &crate::model::actors::ActorToken) -> Result<()>;

    /// Marks the live tokens `which` selects revoked at `at`, in one step; answers them.
    fn revoke_tokens(
        &self,
        which: &crate::model::actors::TokenSelect,
        at: crate::model::Millis,
    ) -> Result<Vec<crate::model::actors::ActorToken>>;

    /// The whole store, read in one locked step.
    fn dump(&self) -> Result<Dump>;

    /// Writes a whole store into this one, which must be empty (never written), in one
    /// step: all of it is there afterwards, or none.
    fn load(&self, dump: &Dump) -> Result<()>;
}

/// Where the time comes from. The rules never read a clock; a backend asks this (or its
/// server) once per call.
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
