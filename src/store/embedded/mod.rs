//! The embedded store (docs/files.md): a directory with a stable `lock` file, a
//! `snapshot.json` replaced atomically, an append-only `journal`, and the side files
//! `history.jsonl` (every transition) and `archive.jsonl` (archived nodes).
//!
//! A write holds the exclusive lock across load, transition and save; it costs one append
//! and one `fdatasync`, which the threads of one handle share (group commit, `group.rs`:
//! writers that arrive while a sync runs append under the same lock and are made durable by
//! the next one). A process that keeps a store open reloads only the journal records
//! appended since its last look. When the journal outgrows a quarter of the snapshot, the writer that
//! notices moves the journal's events to the history file, writes a new snapshot and
//! empties the journal; a crash at any step leaves a store that reads the same.

mod actors;
mod cache;
mod compact;
mod copy;
pub mod fault;
mod fsutil;
mod group;
pub mod journal;
mod logs;
mod reserve;
mod segments;
mod wake;
pub mod snapshot;
mod tokens;

#[cfg(feature = "internals")]
pub use logs::{ArchiveLine, Logs};

use super::backend::{Backend, Decide, Dump, Need, Reading, Report};
use super::backend::{Clock, SystemClock};
use crate::error::Result;
use crate::id::Id;
use crate::model::{HistoryLine, Millis};
use crate::rules::Scope;
use crate::state::State;
use cache::Embedded;
use group::Inner;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

pub const LOCK: &str = "lock";
pub const SNAPSHOT: &str = "snapshot.json";
pub const JOURNAL: &str = "journal";
pub const HISTORY: &str = "history.jsonl";
pub const ARCHIVE: &str = "archive.jsonl";
/// Held (try-locked) by the one process compacting the store.
pub const COMPACT_LOCK: &str = "compact.lock";

/// Tuning of the embedded store.
#[derive(Debug, Clone)]
pub struct Tuning {
    /// `fdatasync` every write (the default). Off only for measurements.
    pub sync: bool,
    /// The journal is compacted once it holds more than this many bytes and either more
    /// than a quarter of the snapshot, or the processes that wrote its records had together
    /// replayed more of it than the snapshot holds.
    pub compact_min_bytes: u64,
    /// The history file being written is sealed into a segment of its own (and indexed)
    /// once a compaction leaves it at this size or more.
    pub segment_bytes: u64,
}

/// The journal size below which a store is never compacted.
pub const COMPACT_MIN_BYTES: u64 = 16 << 10;

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            sync: true,
            compact_min_bytes: compact_min_bytes(),
            segment_bytes: segment_bytes(),
        }
    }
}

/// With the `testing` feature, `$CLAIMDAG_COMPACT_MIN_BYTES` pins the threshold (the tests
/// that build a journal just under it); shipped builds ignore the variable.
#[cfg(feature = "testing")]
fn compact_min_bytes() -> u64 {
    std::env::var("CLAIMDAG_COMPACT_MIN_BYTES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(COMPACT_MIN_BYTES)
}

#[cfg(not(feature = "testing"))]
fn compact_min_bytes() -> u64 {
    COMPACT_MIN_BYTES
}

/// With the `testing` feature, `$CLAIMDAG_SEGMENT_BYTES` pins the size a history segment is
/// sealed at (tests of many small segments through the command); shipped builds ignore it.
#[cfg(feature = "testing")]
fn segment_bytes() -> u64 {
    std::env::var("CLAIMDAG_SEGMENT_BYTES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(segments::SEGMENT_BYTES)
}

#[cfg(not(feature = "testing"))]
fn segment_bytes() -> u64 {
    segments::SEGMENT_BYTES
}

/// The embedded backend: one store directory, shared by every handle and process that opens
/// it. Each handle keeps the state in memory and reads only what others appended since.
pub struct EmbeddedStore {
    dir: PathBuf,
    tuning: Tuning,
    clock: Arc<dyn Clock>,
    inner: Mutex<Inner>,
    /// Signalled when a batch of writes syncs or ends (see `group`).
    turn: Condvar,
}

impl EmbeddedStore {
    pub fn new(dir: PathBuf, tuning: Tuning, clock: Arc<dyn Clock>) -> EmbeddedStore {
        EmbeddedStore {
            dir,
            tuning,
            clock,
            inner: Mutex::new(Inner::default()),
            turn: Condvar::new(),
        }
    }

    /// A store directory with the default tuning and the system clock.
    pub fn open(dir: PathBuf) -> EmbeddedStore {
        EmbeddedStore::new(dir, Tuning::default(), Arc::new(SystemClock))
    }

    #[cfg(feature = "internals")]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        let got = self.inner.lock();
        self.unpoisoned(got)
    }

    /// Waits for a batch of writes to sync or end.
    fn wait<'a>(&'a self, mut g: MutexGuard<'a, Inner>) -> MutexGuard<'a, Inner> {
        g.waiting += 1;
        let got = self.turn.wait(g);
        let mut g = self.unpoisoned(got);
        g.waiting = g.waiting.saturating_sub(1);
        g
    }

    /// Wakes the threads waiting on this handle, if any (`g` is the handle's guard: a
    /// thread counts itself waiting under it before it waits).
    fn wake(&self, g: &Inner) {
        if g.waiting > 0 {
            self.turn.notify_all();
        }
    }

    fn unpoisoned<'a>(
        &'a self,
        got: std::sync::LockResult<MutexGuard<'a, Inner>>,
    ) -> MutexGuard<'a, Inner> {
        got.unwrap_or_else(|poisoned| {
            // A panic mid-call may leave the cache half-updated: take its batch back and
            // start over from the files.
            let mut g = poisoned.into_inner();
            g.recover(self);
            self.inner.clear_poison();
            self.turn.notify_all();
            g
        })
    }
}

impl std::fmt::Debug for EmbeddedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedStore")
            .field("dir", &self.dir)
            .finish()
    }
}

impl Backend for EmbeddedStore {
    fn location(&self) -> String {
        self.dir.display().to_string()
    }

    fn dir(&self) -> Option<&Path> {
        Some(&self.dir)
    }

    fn now(&self) -> Result<Millis> {
        Ok(self.clock.now_ms())
    }

    fn write(&self, _: &dyn Fn(&State) -> Scope, decide: &mut Decide<'_>) -> Result<()> {
        group::write(self, decide)
    }

    fn before_pick(&self) {
        group::before_pick(self)
    }

    fn read(&self, need: Need, f: &mut dyn FnMut(&Reading<'_>)) -> Result<()> {
        let now = self.clock.now_ms();
        let mut g = group::quiet(self);
        let inner = &mut g.cache;
        if !need.archive {
            return inner.read(&self.dir, |state| {
                f(&Reading {
                    state,
                    archived: &[],
                    now,
                })
            });
        }
        inner.with_logs(&self.dir, false, |state, logs| {
            let archived = logs.in_order();
            f(&Reading {
                state,
                archived: &archived,
                now,
            })
        })
    }

    fn history(&self, node: Option<Id>, since: u64, archived: bool) -> Result<Vec<HistoryLine>> {
        let dir = &self.dir;
        group::quiet(self).cache.checked(dir, || match node {
            Some(id) => logs::of_node(dir, id, since, archived),
            None => logs::range(dir, since, archived),
        })
    }

    fn history_from(
        &self,
        after: (u64, u32),
        hint: &mut super::backend::Hint,
        most: usize,
    ) -> Result<Vec<HistoryLine>> {
        let read = group::quiet(self)
            .cache
            .locked(&self.dir, || logs::tail(&self.dir, after, hint, most))?;
        Ok(read.unwrap_or_default())
    }

    fn version(&self) -> Result<u64> {
        group::quiet(self).cache.version(&self.dir)
    }

    fn wait_change(&self, seen: u64, until: std::time::Instant) -> Result<u64> {
        let mut now = seen;
        wake::wait(&self.dir, until, &mut || {
            now = self.version()?;
            Ok(now != seen)
        })?;
        Ok(now)
    }

    fn check(&self) -> Result<Report> {
        let mut fresh = Embedded::default();
        let (nodes, archived, problems, events) = fresh.with_logs(&self.dir, true, |s, logs| {
            // A state read through the index has every page checked here; one read whole
            // was checked against its trailer when it was read.
            s.verify_snapshot();
            let mut p = crate::verify::problems(s);
            p.extend(crate::verify::history_problems(
                s,
                &logs.history,
                &logs.archive,
            ));
            (s.len(), s.archived().len(), p, logs.history.len())
        })?;
        let mut notes: Vec<String> = fresh
            .compaction_backlog(&self.dir, &self.tuning)
            .into_iter()
            .collect();
        if notes.is_empty() {
            if let Some(why) = Embedded::last_compaction_failure(&self.dir) {
                notes.push(format!("the last compaction failed: {why}"));
            }
        }
        let mut problems = problems;
        let dir = &self.dir;
        if let Some((found, said)) = group::quiet(self)
            .cache
            .locked(dir, || segments::check(dir))?
        {
            problems.extend(found);
            notes.extend(said);
        }
        Ok(Report {
            nodes,
            archived,
            events,
            problems,
            notes,
            intact: "files and checksums",
        })
    }

    fn dump(&self) -> Result<Dump> {
        let actors = actors::read(&self.dir)?;
        let tokens = tokens::read(&self.dir)?;
        group::quiet(self)
            .cache
            .with_logs(&self.dir, true, |state, logs| Dump {
                seq: logs.seq,
                settings: state.settings.clone(),
                nodes: state.nodes().to_vec(),
                archived: logs.in_order(),
                history: logs.history,
                actors,
                tokens,
            })
    }

    fn actor_names(&self) -> Result<Vec<crate::model::ActorName>> {
        actors::read(&self.dir)
    }

    fn keep_actor_names(&self, names: &[crate::model::ActorName]) -> Result<()> {
        actors::keep(&self.dir, names)
    }

    fn tokens(&self) -> Result<Vec<crate::model::actors::ActorToken>> {
        tokens::read(&self.dir)
    }

    fn add_token(&self, token: &crate::model::actors::ActorToken) -> Result<()> {
        tokens::add(&self.dir, std::slice::from_ref(token))
    }

    fn revoke_tokens(
        &self,
        which: &crate::model::actors::TokenSelect,
        at: Millis,
    ) -> Result<Vec<crate::model::actors::ActorToken>> {
        tokens::revoke(&self.dir, which, at)
    }

    fn load(&self, dump: &Dump) -> Result<()> {
        copy::load(&self.dir, dump)
    }
}
