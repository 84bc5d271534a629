//! Group commit for the threads of one process: writers that arrive while another's
//! `fdatasync` runs share the next one.
//!
//! The first writer of a batch takes the store's exclusive lock and keeps it for the whole
//! batch. Each writer, under the handle's mutex, decides on the current state and appends
//! its record without syncing it; then the writers wait until a sync covers their record,
//! one of them running it with the mutex released so that others can append meanwhile.
//! When every appended record is synced the batch ends and the lock is released. So:
//!
//! - no other process sees a record before it is durable (the lock is held until then), and
//!   no call of this process returns, refused or not, before what it saw is durable;
//! - a sync that fails takes back every record it was to make durable (nobody else has seen
//!   them; records an earlier sync covered stay, their calls may have returned) and each of
//!   their writers gets the error: a failed call leaves the store as it was;
//! - writers join a batch only until its second sync starts, so one busy process holds the
//!   lock for at most two syncs at a time and other processes get their turn.
//!
//! Reads wait for a batch to end before they read (and no batch starts while a reader
//! waits), so they take the shared lock as before and see only durable writes.

use super::cache::Embedded;
use super::fault::{before_sync, crash};
use super::{fsutil, EmbeddedStore, JOURNAL};
use crate::error::{Error, Result};
use crate::rules::NoArchive;
use crate::state::State;
use crate::store::backend::Decide;
use std::fs::File;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Arc, MutexGuard, OnceLock};

/// Writers join a batch until this many syncs of it have started.
const JOIN_UNTIL_SYNCS: u32 = 2;

/// One handle's cache and the batch of writes in flight, under the handle's mutex.
#[derive(Default)]
pub(super) struct Inner {
    pub(super) cache: Embedded,
    /// The process these fields belong to: a child made by `fork` starts afresh.
    pid: u32,
    batch: Option<Batch>,
    /// Batches are numbered so that a waiting writer knows whether its batch has ended.
    batches: u64,
    /// Readers waiting for the batch to end: no new batch starts until they have read.
    readers: usize,
    /// Threads waiting on the handle's condition variable: nobody to wake when none.
    pub(super) waiting: usize,
}

struct Batch {
    id: u64,
    /// The exclusive lock on the store, held from the first write to the last sync.
    lock: File,
    /// Where appended records end, and how far a finished sync covers (both start where
    /// the journal ended when the batch began).
    appended: u64,
    synced: u64,
    syncing: bool,
    syncs: u32,
    /// A write of the batch pushed the journal past the compaction threshold.
    compact: bool,
    /// A write of the batch failed on I/O: reload the cache from the files after it.
    io_error: bool,
    /// Set when the batch fails: how far it was durable, and why the rest is not. Each
    /// writer keeps a copy, so it learns its outcome even after later batches.
    failure: Failure,
}

type Failure = Arc<OnceLock<(u64, Error)>>;

type Guard<'a> = MutexGuard<'a, Inner>;

impl Inner {
    /// After a `fork`, the batch, the readers and the failure are the parent's: forget
    /// them (closing this process's copy of the lock keeps the parent's lock held).
    fn own(&mut self) {
        let pid = fsutil::pid();
        if self.pid != pid {
            self.pid = pid;
            self.batch = None;
            self.readers = 0;
            self.waiting = 0;
        }
    }

    /// Ends the batch: releases the lock, compacts when a write asked for it.
    fn end(&mut self, store: &EmbeddedStore) {
        if let Some(b) = self.batch.take() {
            if b.io_error || self.cache.is_damaged() {
                self.cache.snap = None;
            }
            let compact = b.compact.then(|| super::cache::Compaction {
                segment_bytes: store.tuning.segment_bytes,
                now: store.clock.now_ms(),
            });
            self.cache.end(&store.dir, b.lock, compact);
        }
    }

    /// The batch could not be made durable past what its syncs covered: take the rest of
    /// its records back and fail their writers.
    fn fail(&mut self, store: &EmbeddedStore, error: Error) {
        if let Some(b) = self.batch.take() {
            self.cache.take_back(b.synced);
            self.cache.end(&store.dir, b.lock, None);
            let _ = b.failure.set((b.synced, error));
        }
    }

    /// Recovers from a call that panicked holding the mutex: its batch is taken back and
    /// the cache starts over from the files.
    pub(super) fn recover(&mut self, store: &EmbeddedStore) {
        self.fail(
            store,
            Error::Internal("a call panicked during this write; the write was taken back".into()),
        );
        self.cache = Embedded::default();
    }
}

/// Runs `decide` on the current state and commits the change it returns (if any): durable
/// when this returns `Ok`.
pub(super) fn write(store: &EmbeddedStore, decide: &mut Decide<'_>) -> Result<()> {
    let dir = &store.dir;
    let now = || store.clock.now_ms();
    let mut g = store.inner();
    g.own();
    loop {
        match &g.batch {
            None if g.readers == 0 => break,
            Some(b) if b.syncs < JOIN_UNTIL_SYNCS => break,
            _ => g = store.wait(g),
        }
        g.own();
    }
    if g.batch.is_none() {
        if !dir.exists() {
            // Nothing exists yet: a refused call must not create the store either.
            decide(&State::default(), &NoArchive, now())?;
        }
        let lock = g.cache.begin(dir)?;
        let start = g.cache.journal_end();
        g.batches += 1;
        g.batch = Some(Batch {
            id: g.batches,
            lock,
            appended: start,
            synced: start,
            syncing: false,
            syncs: 0,
            compact: false,
            io_error: false,
            failure: Failure::default(),
        });
    }
    let staged = catch_unwind(AssertUnwindSafe(|| g.cache.stage(dir, &now, decide)));
    let outcome = match staged {
        Ok(outcome) => outcome,
        Err(panic) => {
            // The batch's unsynced records are taken back and the lock released now, not
            // when this handle is next used (it may never be).
            g.recover(store);
            store.wake(&g);
            drop(g);
            resume_unwind(panic);
        }
    };
    let (end, compact) = (
        g.cache.journal_end(),
        g.cache.wants_compaction(&store.tuning),
    );
    let Some(b) = g.batch.as_mut() else {
        return Err(Error::Internal("the batch ended under its writer".into()));
    };
    let (id, failure) = (b.id, b.failure.clone());
    b.appended = end;
    b.compact |= matches!(outcome, Ok(true)) && compact;
    b.io_error |= matches!(outcome, Err(Error::Io { .. }));
    durable(store, g, id, &failure, end)?;
    outcome.map(|_| ())
}

/// Before a pick, outside the store's lock: the cache reads the files if it is cold and the
/// snapshot's stored pick order ([`Embedded::warm_pick`]), so that the locked step only
/// catches up with what was appended since. Not while a batch is open: its writers are
/// using the cache.
pub(super) fn before_pick(store: &EmbeddedStore) {
    let mut g = store.inner();
    g.own();
    if g.batch.is_none() {
        g.cache.warm_pick(&store.dir);
    }
}

/// Waits until a sync covers the journal up to `mine` (running it when nobody does), or
/// the batch fails.
fn durable<'a>(
    store: &'a EmbeddedStore,
    mut g: Guard<'a>,
    id: u64,
    failure: &Failure,
    mine: u64,
) -> Result<()> {
    loop {
        let Some(b) = g.batch.as_mut().filter(|b| b.id == id) else {
            // The batch ended: every record of it is durable, unless it failed before a
            // sync covered this one.
            return match failure.get() {
                Some((synced, e)) if *synced < mine => Err(e.clone()),
                _ => Ok(()),
            };
        };
        if b.synced >= mine {
            if !b.syncing && b.synced == b.appended {
                g.end(store);
                store.wake(&g);
            }
            return Ok(());
        }
        if b.syncing {
            g = store.wait(g);
            continue;
        }
        b.syncing = true;
        b.syncs += 1;
        // The cache stands at the last record appended (each writer stages and sets
        // `appended` under the same guard).
        let (target, target_seq) = (b.appended, g.cache.seq());
        let handle = g.cache.journal_handle();
        drop(g);
        let synced = handle.and_then(|f| sync(store, &f));
        g = store.inner();
        // None: taken back meanwhile (a panicked call); the loop reports it.
        let in_place = g.cache.lock_in_place(&store.dir);
        if let Some(b) = g.batch.as_mut().filter(|b| b.id == id) {
            b.syncing = false;
            match synced {
                Ok(()) if in_place => {
                    b.synced = target;
                    g.cache.synced_through(target_seq);
                }
                Ok(()) => g.fail(store, removed(store)),
                Err(e) => g.fail(store, e),
            }
        }
        store.wake(&g);
    }
}

/// One `fdatasync` of the journal (none when the store is tuned not to sync).
fn sync(store: &EmbeddedStore, f: &File) -> Result<()> {
    let path = store.dir.join(JOURNAL);
    let io = |e: std::io::Error| fsutil::describe(&path, &e);
    before_sync(&store.dir).map_err(io)?;
    if store.tuning.sync {
        f.sync_data().map_err(io)?;
    }
    crash("after-sync");
    Ok(())
}

fn removed(store: &EmbeddedStore) -> Error {
    Error::Io {
        path: store.dir.clone(),
        message: "the store directory was removed or replaced during the write; \
                  the write is not in the store"
            .into(),
        errno: None,
    }
}

/// The handle's cache for a read, once no batch is in flight: reads take the shared lock
/// and see only durable writes.
pub(super) fn quiet(store: &EmbeddedStore) -> Guard<'_> {
    let mut g = store.inner();
    g.own();
    if g.batch.is_some() {
        g.readers += 1;
        while g.batch.is_some() {
            g = store.wait(g);
            g.own();
        }
        g.readers = g.readers.saturating_sub(1);
        // Writers wait for no reader to be waiting before they start a batch.
        store.wake(&g);
    }
    g
}
