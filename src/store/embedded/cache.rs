//! The cached view of one store directory: the lock, the snapshot and journal this handle
//! has read, and the write path (lock, catch up, decide, append, fsync).

use super::fault::crash;
use super::fsutil::{self, FileId, Mode};
use super::journal::{self, Head, Record};
use super::logs::{read_all, read_logs, ArchiveFiles, Logs};
use super::reserve::{erase, read_records, reserve};
use super::{snapshot, Tuning, COMPACT_LOCK, JOURNAL, LOCK, SNAPSHOT};
use crate::error::{Error, Result};
use crate::model::Millis;
use crate::state::State;
use crate::store::backend::Decide;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

const HEADER_LEN: u64 = journal::HEADER.len() as u64;

/// The cached view of one store directory, owned by one `Store` handle.
#[derive(Default)]
pub struct Embedded {
    /// The process that opened the files below: a child made by `fork` shares them with
    /// its parent, and OS locks on a shared open file do not exclude each other.
    pub(super) pid: u32,
    pub(super) lock: Option<File>,
    /// Where the open `lock` file is (kept while the lock is out of `self`).
    pub(super) lock_id: Option<fsutil::Placed>,
    pub(super) state: State,
    pub(super) seq: u64,
    pub(super) snap: Option<FileId>,
    pub(super) snapshot_len: u64,
    /// Shared with a sync running outside the handle's mutex (no descriptor to duplicate).
    pub(super) journal: Option<Arc<File>>,
    /// Where the open `journal` is, once asked.
    pub(super) journal_id: Option<fsutil::Placed>,
    /// Where the records this cache read end: the journal's end.
    pub(super) journal_end: u64,
    /// The journal file's length as last seen: records up to it are written into space the
    /// file already has.
    pub(super) journal_len: u64,
    /// Bytes other than zeros lie after `journal_end` (a torn record): the next append
    /// clears them first.
    pub(super) torn: bool,
    /// The last record known durable (for [`journal::Record::durable`]): what a batch read
    /// when it began, then what its syncs covered.
    pub(super) durable: u64,
    /// Where the last record this cache applied starts, and its frame (length and
    /// checksum): if those bytes change, the journal was rewritten and the cache is stale.
    pub(super) last_frame: Option<(u64, [u8; journal::FRAME_LEN])>,
    /// The journal's bytes this cache replayed when it loaded the snapshot it stands at and
    /// has not yet reported in a record: records that a compaction would have folded into
    /// the snapshot (what it reads later, appended since, is new to it either way).
    pub(super) unreported: u64,
    /// What the writers of the journal's records (since the snapshot) reported they had
    /// replayed: the work a compaction would have saved them.
    pub(super) replayed: u64,
    /// This cache, as a writer, looked for the temporaries an unfinished compaction left
    /// (the first write of a handle that changes the store does:
    /// [`remove_stale_temporaries`]).
    pub(super) swept: bool,
}

pub(super) use super::fsutil::Held;

/// What a compaction needs beyond the store: where segments are sealed, and the time.
#[derive(Debug, Clone, Copy)]
pub(super) struct Compaction {
    pub segment_bytes: u64,
    pub now: crate::model::Millis,
}

impl Embedded {
    /// Runs `f` on the current state under a shared lock.
    pub fn read<R>(&mut self, dir: &Path, f: impl FnOnce(&State) -> R) -> Result<R> {
        let Some(lock) = self.acquire(dir, false)? else {
            return Ok(f(&self.state));
        };
        let result = (|| {
            let _held = Held(&lock);
            self.refresh(dir)?;
            let r = f(&self.state);
            self.undamaged(dir)?;
            Ok(r)
        })();
        self.lock = Some(lock);
        result
    }

    /// A snapshot node that did not decode when it was first asked for makes the store
    /// `corrupt`: what was read or decided on the state is thrown away, and the next call
    /// reads the files again.
    /// Not inside a batch of writes (see [`Embedded::stage`]).
    pub(super) fn undamaged(&mut self, dir: &Path) -> Result<()> {
        match self.damage_error(dir) {
            Some(e) => {
                self.snap = None;
                self.state = State::default();
                Err(e)
            }
            None => Ok(()),
        }
    }

    /// True when the state met a snapshot page or node it could not read (see `undamaged`).
    pub(super) fn is_damaged(&self) -> bool {
        self.state.damage().is_some()
    }

    fn damage_error(&self, dir: &Path) -> Option<Error> {
        let d = self.state.damage()?;
        let path = dir.join(SNAPSHOT);
        Some(match d.io {
            true => Error::Io {
                path,
                message: d.why.clone(),
                errno: None,
            },
            false => Error::corrupt(&path, d.why.clone()),
        })
    }

    /// Takes the OS lock on `dir/lock` (exclusive for a write, shared for a read) and makes
    /// sure it is the lock file at the path: a handle whose directory was removed (and maybe
    /// made again by another process) would otherwise lock a deleted file that nobody else
    /// locks, and write through stale files. Such a handle drops everything it holds and
    /// opens the store at the path afresh. `None` for a read of a store that does not exist.
    /// The lock is taken out of `self`; the caller puts it back once it is released.
    fn acquire(&mut self, dir: &Path, exclusive: bool) -> Result<Option<File>> {
        for _ in 0..3 {
            self.own();
            // A handle with the lock open finds out below whether the store is still there.
            if self.lock.is_none() {
                if exclusive {
                    fsutil::ensure_dir(dir)?;
                } else if !self.open_for_read(dir)? {
                    return Ok(None);
                }
            }
            self.open_lock(dir, exclusive)?;
            self.preload(dir);
            let lock = self
                .lock
                .take()
                .ok_or_else(|| Error::Internal("no lock".into()))?;
            let taken = if exclusive {
                lock.lock()
            } else {
                lock.lock_shared()
            };
            taken.map_err(|e| fsutil::describe(&dir.join(LOCK), &e))?;
            if self.lock_in_place(dir) {
                return Ok(Some(lock));
            }
            let _ = lock.unlock();
            *self = Embedded {
                pid: self.pid,
                ..Embedded::default()
            };
        }
        Err(Error::Io {
            path: dir.to_path_buf(),
            message: "the store directory keeps being replaced while in use".into(),
            errno: None,
        })
    }

    /// Opens the lock file of an existing store (and preloads a cold cache); `false`, with
    /// an empty state, when the store does not exist yet.
    fn open_for_read(&mut self, dir: &Path) -> Result<bool> {
        match std::fs::metadata(dir) {
            Ok(m) => fsutil::check_dir(dir, &m)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                *self = Embedded::default();
                return Ok(false);
            }
            Err(e) => return Err(fsutil::describe(dir, &e)),
        }
        Ok(true)
    }

    /// Takes the exclusive lock for a batch of writes (see `group`) and catches up with the
    /// files. The lock is out of `self` until [`Embedded::end`] puts it back.
    pub(super) fn begin(&mut self, dir: &Path) -> Result<File> {
        let lock = self
            .acquire(dir, true)?
            .ok_or_else(|| Error::Internal("no lock".into()))?;
        if let Err(e) = self.refresh(dir) {
            let _ = lock.unlock();
            self.lock = Some(lock);
            if matches!(e, Error::Io { .. }) {
                // The cache may be behind the files: reload next time.
                self.snap = None;
            }
            return Err(e);
        }
        // What this batch read was synced by the batches before it.
        self.durable = self.seq;
        Ok(lock)
    }

    /// A sync of this batch covered its records up to number `seq`.
    pub(super) fn synced_through(&mut self, seq: u64) {
        self.durable = self.durable.max(seq);
    }

    /// The number of the last record this cache applied.
    pub(super) fn seq(&self) -> u64 {
        self.seq
    }

    /// With the exclusive lock held and the cache current: runs `decide` and appends the
    /// change it returns, without syncing it, and applies it. True when a record was
    /// appended (a refusal or an empty change appends nothing). An append that fails takes
    /// its own record back, so the journal holds exactly the records before it.
    pub(super) fn stage(
        &mut self,
        dir: &Path,
        now: &dyn Fn() -> Millis,
        decide: &mut Decide<'_>,
    ) -> Result<bool> {
        let at = now();
        let archive = ArchiveFiles(dir);
        // A damaged state refuses every write of the batch without being reset: the batch
        // holds the lock and other writers stage after this one (the cache is read again
        // from the files when the batch ends).
        if let Some(e) = self.damage_error(dir) {
            return Err(e);
        }
        let change = decide(&self.state, &archive, at);
        if let Some(e) = self.damage_error(dir) {
            return Err(e);
        }
        let change = change?;
        if change.is_empty() {
            return Ok(false);
        }
        if self.snap.is_none() {
            self.create(dir)?;
        }
        if !self.swept {
            // Under the write lock, by a write that changes the store (a refused one changes
            // no file).
            remove_stale_temporaries(dir);
            self.swept = true;
        }
        let rec = Record {
            seq: self.seq + 1,
            at,
            change,
            replayed: self.unreported,
            durable: self.durable.min(self.seq),
        };
        self.append(dir, &journal::encode(&rec))?;
        self.unreported = 0;
        self.replayed = self.replayed.saturating_add(rec.replayed);
        self.seq = rec.seq;
        self.state.apply(&rec.change);
        Ok(true)
    }

    /// Where the journal ends: the records before this offset are the store's.
    pub(super) fn journal_end(&self) -> u64 {
        self.journal_end
    }

    /// A handle on the journal that can be synced without holding this cache.
    pub(super) fn journal_handle(&self) -> Result<Arc<File>> {
        self.journal
            .clone()
            .ok_or_else(|| Error::Internal("journal not open".into()))
    }

    /// True when the journal should be compacted: it has outgrown its threshold, or (past
    /// `compact_min_bytes`) the processes that wrote its records had together replayed more
    /// of it when they loaded than the snapshot holds. A new process (every `claimdag`
    /// command) reads the snapshot through its index, cheaply, but parses the whole journal
    /// (about 50 instructions a byte); a compaction writes the snapshot once (about 80 a
    /// byte). So once the replays have cost about what a compaction costs, the next write
    /// compacts: when each write is a new process writing small records, that is every
    /// `√(2 · record · snapshot)` bytes of journal (about 16 KiB at 1,000 nodes, 160 KiB
    /// at 100,000) instead of a quarter of the snapshot; a long-lived handle, which reads
    /// each record once as it is appended, reports nothing and keeps the quarter.
    pub(super) fn wants_compaction(&self, tuning: &Tuning) -> bool {
        let used = self.journal_end.saturating_sub(HEADER_LEN);
        self.snap.is_some()
            && (used > self.compaction_threshold(tuning)
                || (used > tuning.compact_min_bytes && self.replayed > self.snapshot_len))
    }

    /// The journal bytes past which the store is compacted: a quarter of the snapshot, at
    /// least `compact_min_bytes`. The snapshot is then rewritten once for every quarter of
    /// its size appended: four bytes of snapshot written for each byte of journal, which a
    /// long-lived handle (it reads each record once, as it is appended) never pays more
    /// than.
    pub(super) fn compaction_threshold(&self, tuning: &Tuning) -> u64 {
        tuning.compact_min_bytes.max(self.snapshot_len / 4)
    }

    /// Ends a batch: releases the lock, then compacts when asked (a failed compaction only
    /// leaves a longer journal). The lock goes back into `self`.
    pub(super) fn end(&mut self, dir: &Path, lock: File, compact: Option<Compaction>) {
        let _ = lock.unlock();
        if compact.is_some_and(|c| self.compact(dir, &lock, c).is_err()) {
            self.snap = None;
        }
        self.lock = Some(lock);
    }

    /// A batch whose records could not be made durable: they are cut from the journal
    /// (nobody else has seen them: the lock is still held) and the cache reloads from the
    /// files next time. Then [`Embedded::end`].
    pub(super) fn take_back(&mut self, start: u64) {
        // Only records this cache appended past `start` (a journal whose header is torn and
        // that nothing was appended to is left exactly as it is).
        let start = start.max(HEADER_LEN);
        if let Some(f) = self.journal.as_ref().filter(|_| self.journal_end > start) {
            erase(f, start, self.journal_end, self.journal_len);
            let _ = f.sync_data();
        }
        self.snap = None;
    }

    /// The number of the last committed write, read under a shared lock (the journal's
    /// tail only, as every read does).
    pub fn version(&mut self, dir: &Path) -> Result<u64> {
        let Some(lock) = self.acquire(dir, false)? else {
            return Ok(0);
        };
        let result = (|| {
            let _held = Held(&lock);
            self.refresh(dir)?;
            Ok(self.seq)
        })();
        self.lock = Some(lock);
        result
    }

    /// Runs `f` under a shared lock without reading the state: a reader of the side files
    /// only. `None` when the store does not exist yet.
    pub fn locked<R>(&mut self, dir: &Path, f: impl FnOnce() -> Result<R>) -> Result<Option<R>> {
        let Some(lock) = self.acquire(dir, false)? else {
            return Ok(None);
        };
        let result = {
            let _held = Held(&lock);
            f()
        };
        self.lock = Some(lock);
        result.map(Some)
    }

    /// Runs `f` under a shared lock once the state is read and found whole (a reader of the
    /// side files that reports a damaged store as every read does); `R::default()` when the
    /// store does not exist yet.
    pub fn checked<R: Default>(&mut self, dir: &Path, f: impl FnOnce() -> Result<R>) -> Result<R> {
        let Some(lock) = self.acquire(dir, false)? else {
            return Ok(R::default());
        };
        let result = (|| {
            let _held = Held(&lock);
            self.refresh(dir)?;
            let r = f()?;
            self.undamaged(dir)?;
            Ok(r)
        })();
        self.lock = Some(lock);
        result
    }

    /// Runs `f` on the state and the logs, read together under one shared lock. Without
    /// `history` only the archive is read.
    pub fn with_logs<R>(
        &mut self,
        dir: &Path,
        history: bool,
        f: impl FnOnce(&State, Logs) -> R,
    ) -> Result<R> {
        let Some(lock) = self.acquire(dir, false)? else {
            return Ok(f(&self.state, Logs::default()));
        };
        let result = (|| {
            let _held = Held(&lock);
            self.refresh(dir)?;
            let mut logs = read_logs(dir, history)?;
            logs.seq = self.seq;
            // Only nodes archived now: an unarchived node is live again.
            let archived = self.state.archived();
            logs.archive.retain(|id, _| archived.contains_key(id));
            let r = f(&self.state, logs);
            self.undamaged(dir)?;
            Ok(r)
        })();
        self.lock = Some(lock);
        result
    }

    fn open_lock(&mut self, dir: &Path, create: bool) -> Result<()> {
        self.own();
        if self.lock.is_some() {
            return Ok(());
        }
        let path = dir.join(LOCK);
        let f = match fsutil::open(&path, Mode::ReadWriteCreate) {
            Ok(f) => f,
            // A reader without write permission still takes a shared lock on a read-only fd.
            Err(Error::Io { errno: Some(e), .. })
                if !create && (e == libc::EACCES || e == libc::EROFS) =>
            {
                fsutil::open(&path, Mode::Read)?
            }
            Err(e) => return Err(e),
        };
        self.lock_id = Some(fsutil::placed(&f).map_err(|e| fsutil::describe(&path, &e))?);
        self.lock = Some(f);
        Ok(())
    }

    /// True when the lock file this handle opened is the file at `dir/lock` (the store has
    /// not been moved or removed under it).
    pub(super) fn lock_in_place(&self, dir: &Path) -> bool {
        let at_path = fsutil::placed_at(&dir.join(LOCK));
        self.lock_id
            .is_some_and(|id| at_path.is_ok_and(|p| p.same_file(&id)))
    }

    /// With a cold cache, parses the files before taking the lock, so that other processes'
    /// writes wait only for the tail this process reads under the lock. Nothing read here is
    /// trusted: under the lock, `refresh` keeps it only if the snapshot is the same file and
    /// the last record read is still in place, and reads everything again otherwise.
    fn preload(&mut self, dir: &Path) {
        if self.snap.is_none() && self.refresh(dir).is_err() {
            self.snap = None;
        }
    }

    /// A cache opened by another process (we are a forked child) is dropped: this one opens
    /// its own files.
    fn own(&mut self) {
        let pid = fsutil::pid();
        if self.pid != pid {
            *self = Embedded {
                pid,
                ..Embedded::default()
            };
        }
    }

    /// For a pick, without the lock: reads the files into a cold cache (as taking the lock
    /// would), then brings the snapshot's stored pick order up to date with the journal
    /// read. Under the lock the tail appended since is applied to it change by change, and
    /// a snapshot replaced meanwhile means a full load: what was read here is then dropped.
    /// Errors are left for the locked step to find and report.
    pub(super) fn warm_pick(&mut self, dir: &Path) {
        self.own();
        self.preload(dir);
        if self.snap.is_some() && !self.is_damaged() && self.state.has_stored_order() {
            let _ = self.state.pick_order();
        }
    }

    /// Brings the cached state up to date with the files (the lock is held).
    fn refresh(&mut self, dir: &Path) -> Result<()> {
        let spath = dir.join(SNAPSHOT);
        let meta = match std::fs::symlink_metadata(&spath) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(fsutil::describe(&spath, &e)),
        };
        let Some(meta) = meta else {
            return self.load_empty(dir);
        };
        if meta.file_type().is_symlink() {
            return Err(fsutil::describe(
                &spath,
                &std::io::Error::from_raw_os_error(libc::ELOOP),
            ));
        }
        if self.snap == Some(FileId::of(&meta)) && self.journal.is_some() {
            // Anything unexpected in the tail (a compaction meanwhile) means a full load.
            if let Ok(true) = self.tail(dir) {
                return self.undamaged(dir);
            }
        }
        self.full_load(dir)?;
        self.undamaged(dir)
    }

    /// No snapshot: an empty store (a journal may exist, torn or with a header only).
    fn load_empty(&mut self, dir: &Path) -> Result<()> {
        let jpath = dir.join(JOURNAL);
        if let Some(mut f) = fsutil::open_existing(&jpath)? {
            let bytes = read_all(&mut f, &jpath)?;
            if journal::check_header(&bytes, &jpath)? == Head::Good {
                let scan =
                    journal::scan(&bytes[HEADER_LEN as usize..], &jpath, HEADER_LEN, Some(0))?;
                if !scan.records.is_empty() {
                    return Err(Error::corrupt(
                        &dir.join(SNAPSHOT),
                        "missing, but the journal holds committed records",
                    ));
                }
            }
        }
        *self = Embedded {
            pid: self.pid,
            lock: self.lock.take(),
            lock_id: self.lock_id,
            ..Embedded::default()
        };
        Ok(())
    }

    fn full_load(&mut self, dir: &Path) -> Result<()> {
        let spath = dir.join(SNAPSHOT);
        let f = fsutil::open(&spath, Mode::Read)?;
        let meta = f.metadata().map_err(|e| fsutil::describe(&spath, &e))?;
        let snapshot_len = meta.len();
        let (mut state, snap_seq) = snapshot::read_file(f, &spath)?;
        let mut seq = snap_seq;
        let jpath = dir.join(JOURNAL);
        let mut journal_end = HEADER_LEN;
        let mut journal_len = 0;
        let (mut last_frame, mut replayed, mut torn) = (None, 0, false);
        let jf = fsutil::open_existing_rw(&jpath)?;
        if let Some(mut file) = jf.as_ref() {
            let jbytes = read_all(&mut file, &jpath)?;
            journal_len = jbytes.len() as u64;
            if journal::check_header(&jbytes, &jpath)? == Head::Good {
                let body = &jbytes[HEADER_LEN as usize..];
                let scan = journal::scan(body, &jpath, HEADER_LEN, Some(snap_seq))?;
                torn = scan.torn > 0;
                for rec in scan.records {
                    if rec.seq <= snap_seq {
                        continue;
                    }
                    if rec.seq != seq + 1 {
                        return Err(Error::corrupt(
                            &jpath,
                            format!(
                                "record {} follows record {seq}: records are missing",
                                rec.seq
                            ),
                        ));
                    }
                    state.apply(&rec.change);
                    replayed = rec.replayed.saturating_add(replayed);
                    seq = rec.seq;
                }
                journal_end = HEADER_LEN + scan.valid_len as u64;
                last_frame = scan.last.map(|p| {
                    let at = HEADER_LEN as usize + p;
                    let mut frame = [0u8; journal::FRAME_LEN];
                    frame.copy_from_slice(&jbytes[at..at + journal::FRAME_LEN]);
                    (at as u64, frame)
                });
            } else {
                journal_end = 0;
            }
        }
        if state.has_incomplete_stubs() {
            // A snapshot of format 1: complete its archived stubs from the archive.
            let logs = read_logs(dir, false)?;
            state.complete_stubs(&|id| logs.archive.get(id).cloned());
        }
        *self = Embedded {
            pid: self.pid,
            lock: self.lock.take(),
            state,
            seq,
            snap: Some(FileId::of(&meta)),
            snapshot_len,
            journal: jf.map(Arc::new),
            journal_id: None,
            lock_id: self.lock_id,
            journal_end,
            journal_len,
            torn,
            durable: seq,
            last_frame,
            unreported: journal_end.saturating_sub(HEADER_LEN),
            replayed,
            swept: self.swept,
        };
        Ok(())
    }

    /// Reads records appended since the last look. `Ok(false)` asks for a full load.
    fn tail(&mut self, dir: &Path) -> Result<bool> {
        let jpath = dir.join(JOURNAL);
        let Some(f) = self.journal.as_ref() else {
            return Ok(false);
        };
        // A compaction replaces the journal file: an open one that is no longer the file
        // at the path (an unlocked preload can open the old journal after the new snapshot)
        // must not be read or appended to.
        let Ok(at_path) = fsutil::placed_at(&jpath) else {
            return Ok(false);
        };
        let open = match self.journal_id {
            Some(id) => id,
            None => fsutil::placed(f).map_err(|e| fsutil::describe(&jpath, &e))?,
        };
        self.journal_id = Some(open);
        if !at_path.same_file(&open) {
            return Ok(false);
        }
        // The same file: its length as just seen at the path.
        let len = at_path.len;
        if len < self.journal_end || self.journal_end < HEADER_LEN {
            return Ok(false);
        }
        if let Some((at, frame)) = self.last_frame {
            let mut now = [0u8; journal::FRAME_LEN];
            if f.read_exact_at(&mut now, at).is_err() || now != frame {
                return Ok(false);
            }
        }
        self.journal_len = len;
        let (buf, scan) = read_records(f, &jpath, self.journal_end, len, self.seq)?;
        if scan.records.is_empty() {
            // Nothing appended since: what the last load saw after the end still stands.
            self.torn |= scan.torn > 0;
            return Ok(true);
        }
        for rec in scan.records {
            if rec.seq != self.seq + 1 {
                return Ok(false);
            }
            self.state.apply(&rec.change);
            self.replayed = self.replayed.saturating_add(rec.replayed);
            self.seq = rec.seq;
        }
        if let Some(p) = scan.last {
            let mut frame = [0u8; journal::FRAME_LEN];
            frame.copy_from_slice(&buf[p..p + journal::FRAME_LEN]);
            self.last_frame = Some((self.journal_end + p as u64, frame));
        }
        self.journal_end += scan.valid_len as u64;
        // The writer of these records cleared what lay after the old end.
        self.torn = scan.torn > 0;
        Ok(true)
    }

    /// The write that creates a store: an empty journal, then the first snapshot.
    fn create(&mut self, dir: &Path) -> Result<()> {
        let jpath = dir.join(JOURNAL);
        let f = fsutil::open(&jpath, Mode::ReadWriteCreate)?;
        f.set_len(0).map_err(|e| fsutil::describe(&jpath, &e))?;
        f.write_all_at(journal::HEADER, 0)
            .map_err(|e| fsutil::describe(&jpath, &e))?;
        f.sync_data().map_err(|e| fsutil::describe(&jpath, &e))?;
        let state = State::default();
        fsutil::replace_atomically(dir, SNAPSHOT, &mut |w| snapshot::write(w, &state, 0))?;
        let meta = std::fs::symlink_metadata(dir.join(SNAPSHOT))
            .map_err(|e| fsutil::describe(&dir.join(SNAPSHOT), &e))?;
        self.snap = Some(FileId::of(&meta));
        self.snapshot_len = meta.len();
        self.stand_at_journal(f);
        self.seq = 0;
        self.state = State::default();
        Ok(())
    }

    /// This cache now reads and writes `f`, a journal with its header and nothing this
    /// cache has read after it.
    pub(super) fn stand_at_journal(&mut self, f: File) {
        self.journal = Some(Arc::new(f));
        self.journal_id = None;
        self.journal_end = HEADER_LEN;
        self.journal_len = HEADER_LEN;
        self.torn = false;
        self.last_frame = None;
        (self.unreported, self.replayed) = (0, 0);
    }

    /// Appends one encoded record; the batch's sync makes it durable (see `group`).
    fn append(&mut self, dir: &Path, bytes: &[u8]) -> Result<()> {
        let jpath = dir.join(JOURNAL);
        if self.journal.is_none() || self.journal_end < HEADER_LEN {
            let f = fsutil::open(&jpath, Mode::ReadWriteCreate)?;
            f.set_len(0).map_err(|e| fsutil::describe(&jpath, &e))?;
            f.write_all_at(journal::HEADER, 0)
                .map_err(|e| fsutil::describe(&jpath, &e))?;
            f.sync_data().map_err(|e| fsutil::describe(&jpath, &e))?;
            fsutil::fsync_dir(dir)?;
            let unreported = (self.unreported, self.replayed);
            self.stand_at_journal(f);
            (self.unreported, self.replayed) = unreported;
        }
        let Some(f) = self.journal.as_ref() else {
            return Err(Error::Internal("journal not open".into()));
        };
        let at = self.journal_end;
        let io = |e: std::io::Error| fsutil::describe(&jpath, &e);
        if self.torn {
            // A torn tail left by a crash: it was never committed. Cut durably before
            // anything is written after the end, so that no power cut brings it back
            // behind a new record.
            f.set_len(at).map_err(io)?;
            f.sync_data().map_err(io)?;
            (self.journal_len, self.torn) = (at, false);
        }
        let need = at + bytes.len() as u64;
        if need > self.journal_len {
            self.journal_len = reserve(f, self.journal_len, need, self.snapshot_len);
        }
        let result = (|| {
            crash("before-append");
            if super::fault::armed("mid-append") {
                let _ = f.write_all_at(&bytes[..bytes.len() / 2], at);
                crash("mid-append");
            }
            f.write_all_at(bytes, at).map_err(io)?;
            crash("after-append");
            Ok(())
        })();
        match result {
            Ok(()) => {
                self.journal_end = need;
                self.journal_len = self.journal_len.max(need);
                let mut frame = [0u8; journal::FRAME_LEN];
                frame.copy_from_slice(&bytes[..journal::FRAME_LEN]);
                self.last_frame = Some((at, frame));
                Ok(())
            }
            Err(e) => {
                // Take the record back so that nobody reads a write we report as failed. No
                // sync here: it could swallow a writeback error that the batch's own sync
                // must see (one error is reported once per open file).
                self.journal_len = erase(f, at, need, self.journal_len);
                Err(e)
            }
        }
    }
}

/// Removes the temporaries (`snapshot.json.tmp`, `journal.tmp`) that a compaction left when
/// it did not finish (killed, or out of space): they hold room that writes need, and a write
/// that fails for lack of room never compacts. Called by a writer opening the store, under
/// the write lock; only when no compaction runs (`compact.lock` is free: otherwise they are
/// its own), and never anything but a file or a link.
fn remove_stale_temporaries(dir: &Path) {
    let stale: Vec<std::path::PathBuf> = [SNAPSHOT, JOURNAL]
        .iter()
        .map(|n| dir.join(format!("{n}.tmp")))
        .filter(|t| std::fs::symlink_metadata(t).is_ok_and(|m| !m.is_dir()))
        .collect();
    if stale.is_empty() {
        return;
    }
    let Ok(guard) = fsutil::open(&dir.join(COMPACT_LOCK), Mode::ReadWriteCreate) else {
        return;
    };
    if guard.try_lock().is_err() {
        return;
    }
    let _compacting = Held(&guard);
    for t in &stale {
        let _ = std::fs::remove_file(t);
    }
}
