//! The embedded store of SPEC section 6: a directory with a stable `lock` file, a
//! `snapshot.json` replaced atomically, an append-only `journal`, and the side files
//! `history.jsonl` (every transition) and `archive.jsonl` (archived nodes).
//!
//! A write holds the exclusive lock across load, transition and save; it costs one append
//! and one `fdatasync`. A process that keeps a store open reloads only the journal records
//! appended since its last look. When the journal outgrows the snapshot, the writer that
//! notices moves the journal's events to the history file, writes a new snapshot and
//! empties the journal; a crash at any step leaves a store that reads the same.

use super::fault::crash;
use super::fsutil::{self, FileId, Mode};
use super::journal::{self, Head, HistoryLine, Record};
use super::snapshot;
use crate::error::{Error, Result};
use crate::model::{Change, Millis, Node, State};
use crate::rules::{Archive, NoArchive};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;

pub const LOCK: &str = "lock";
pub const SNAPSHOT: &str = "snapshot.json";
pub const JOURNAL: &str = "journal";
pub const HISTORY: &str = "history.jsonl";
pub const ARCHIVE: &str = "archive.jsonl";
/// Held (try-locked) by the one process compacting the store.
pub const COMPACT_LOCK: &str = "compact.lock";

/// One line of the archive file: an archived node's last value and the record that moved it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ArchiveLine {
    pub seq: u64,
    pub node: crate::model::Node,
}

/// The history and the archived nodes of a store.
#[derive(Debug, Default)]
pub struct Logs {
    pub history: Vec<HistoryLine>,
    pub archive: std::collections::HashMap<crate::id::Id, crate::model::Node>,
    /// Where each archived node's last line stands in the archive (file, then journal):
    /// nodes archived together keep the order they had in the live state.
    pub archive_order: std::collections::HashMap<crate::id::Id, usize>,
}

const HEADER_LEN: u64 = journal::HEADER.len() as u64;

/// Decides a write: the state, its archive and the time in, the change to commit and the
/// answer out.
pub type Decide<'a, R> = dyn Fn(&State, &dyn Archive, Millis) -> Result<(Change, R)> + 'a;

/// Tuning of the embedded store.
#[derive(Debug, Clone)]
pub struct Tuning {
    /// `fdatasync` every write (the default). Off only for measurements.
    pub sync: bool,
    /// The journal is compacted once it holds more than this many bytes and more than the
    /// snapshot.
    pub compact_min_bytes: u64,
}

/// The journal size below which a store is never compacted.
pub const COMPACT_MIN_BYTES: u64 = 64 << 10;

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            sync: true,
            compact_min_bytes: compact_min_bytes(),
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

/// The cached view of one store directory, owned by one `Store` handle.
#[derive(Default)]
pub struct Embedded {
    /// The process that opened the files below: a child made by `fork` shares them with
    /// its parent, and OS locks on a shared open file do not exclude each other.
    pid: u32,
    lock: Option<File>,
    state: State,
    seq: u64,
    snap: Option<FileId>,
    snapshot_len: u64,
    journal: Option<File>,
    journal_end: u64,
    journal_len: u64,
    /// Where the last record this cache applied starts, and its frame (length and
    /// checksum): if those bytes change, the journal was rewritten and the cache is stale.
    last_frame: Option<(u64, [u8; journal::FRAME_LEN])>,
}

/// A held OS lock on the `lock` file; released on drop (and by the kernel on a crash).
struct Held<'a>(&'a File);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

fn read_all(mut f: impl Read, path: &Path) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)
        .map_err(|e| fsutil::describe(path, &e))?;
    Ok(buf)
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
            Ok(f(&self.state))
        })();
        self.lock = Some(lock);
        result
    }

    /// Takes the OS lock on `dir/lock` (exclusive for a write, shared for a read) and makes
    /// sure it is the lock file at the path: a handle whose directory was removed (and maybe
    /// made again by another process) would otherwise lock a deleted file that nobody else
    /// locks, and write through stale files. Such a handle drops everything it holds and
    /// opens the store at the path afresh. `None` for a read of a store that does not exist.
    /// The lock is taken out of `self`; the caller puts it back once it is released.
    fn acquire(&mut self, dir: &Path, exclusive: bool) -> Result<Option<File>> {
        for _ in 0..3 {
            if exclusive {
                fsutil::ensure_dir(dir)?;
            } else if !self.open_for_read(dir)? {
                return Ok(None);
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
            if lock_is_at_path(&lock, dir) {
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

    /// Runs `decide` on the current state under the exclusive lock and commits the change it
    /// returns (if any) before releasing the lock.
    pub fn write<R>(
        &mut self,
        dir: &Path,
        tuning: &Tuning,
        now: &dyn Fn() -> Millis,
        decide: &Decide<'_, R>,
    ) -> Result<R> {
        if !dir.exists() {
            // Nothing exists yet: a refused call must not create the store either.
            decide(&State::default(), &NoArchive, now())?;
        }
        let lock = self
            .acquire(dir, true)?
            .ok_or_else(|| Error::Internal("no lock".into()))?;
        let result = (|| {
            let _held = Held(&lock);
            self.refresh(dir)?;
            let at = now();
            let archive = ArchiveFiles(dir);
            let (change, out) = decide(&self.state, &archive, at)?;
            if change.is_empty() {
                return Ok((out, false));
            }
            if self.snap.is_none() {
                self.create(dir)?;
            }
            let rec = Record {
                seq: self.seq + 1,
                at,
                change,
            };
            self.append(dir, &journal::encode(&rec), tuning.sync)?;
            crash("after-sync");
            if !lock_is_at_path(&lock, dir) {
                // The directory was removed while this write held its lock: the record went
                // to a deleted file, so it is not committed.
                self.snap = None;
                return Err(Error::Io {
                    path: dir.to_path_buf(),
                    message: "the store directory was removed or replaced during the write; \
                              the write is not in the store"
                        .into(),
                    errno: None,
                });
            }
            self.seq = rec.seq;
            self.state.apply(&rec.change);
            let used = self.journal_end - HEADER_LEN;
            Ok((out, used > tuning.compact_min_bytes.max(self.snapshot_len)))
        })();
        let result = match result {
            Ok((out, true)) => {
                // The write is committed and the lock released; a failed compaction only
                // leaves a longer journal.
                if self.compact(dir, &lock).is_err() {
                    self.snap = None;
                }
                Ok(out)
            }
            Ok((out, false)) => Ok(out),
            Err(e) => Err(e),
        };
        self.lock = Some(lock);
        if matches!(result, Err(Error::Io { .. })) {
            // After an I/O failure the cache may be behind the files: reload next time.
            self.snap = None;
        }
        result
    }

    /// The history (oldest first) and the archived nodes (last value of each), from the
    /// side files and the journal records not yet moved there.
    pub fn logs(&mut self, dir: &Path) -> Result<Logs> {
        self.with_logs(dir, true, |_, logs| logs)
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
            // Only nodes archived now: an unarchived node is live again.
            let archived = self.state.archived();
            logs.archive.retain(|id, _| archived.contains_key(id));
            Ok(f(&self.state, logs))
        })();
        self.lock = Some(lock);
        result
    }

    fn open_lock(&mut self, dir: &Path, create: bool) -> Result<()> {
        let pid = std::process::id();
        if self.pid != pid {
            // Opened by another process (we are a forked child): open our own files.
            *self = Embedded {
                pid,
                ..Embedded::default()
            };
        }
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
        self.lock = Some(f);
        Ok(())
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
                return Ok(());
            }
        }
        self.full_load(dir)
    }

    /// No snapshot: an empty store (a journal may exist, torn or with a header only).
    fn load_empty(&mut self, dir: &Path) -> Result<()> {
        let jpath = dir.join(JOURNAL);
        if let Some(mut f) = fsutil::open_existing(&jpath)? {
            let bytes = read_all(&mut f, &jpath)?;
            if journal::check_header(&bytes, &jpath)? == Head::Good {
                let scan = journal::scan(&bytes[HEADER_LEN as usize..], &jpath, HEADER_LEN)?;
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
            ..Embedded::default()
        };
        Ok(())
    }

    fn full_load(&mut self, dir: &Path) -> Result<()> {
        let spath = dir.join(SNAPSHOT);
        let mut f = fsutil::open(&spath, Mode::Read)?;
        let meta = f.metadata().map_err(|e| fsutil::describe(&spath, &e))?;
        let bytes = read_all(&mut f, &spath)?;
        let (mut state, snap_seq) = snapshot::read(&bytes, &spath)?;
        let mut seq = snap_seq;
        let jpath = dir.join(JOURNAL);
        let mut journal_end = HEADER_LEN;
        let mut journal_len = 0;
        let mut last_frame = None;
        let jf = fsutil::open_existing_rw(&jpath)?;
        if let Some(mut file) = jf.as_ref() {
            let jbytes = read_all(&mut file, &jpath)?;
            journal_len = jbytes.len() as u64;
            if journal::check_header(&jbytes, &jpath)? == Head::Good {
                let scan = journal::scan(&jbytes[HEADER_LEN as usize..], &jpath, HEADER_LEN)?;
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
            snapshot_len: bytes.len() as u64,
            journal: jf,
            journal_end,
            journal_len,
            last_frame,
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
        let at_path = match std::fs::symlink_metadata(&jpath) {
            Ok(m) => m,
            Err(_) => return Ok(false),
        };
        let open = f.metadata().map_err(|e| fsutil::describe(&jpath, &e))?;
        if !same_file(&open, &at_path) {
            return Ok(false);
        }
        let len = f
            .metadata()
            .map_err(|e| fsutil::describe(&jpath, &e))?
            .len();
        if len < self.journal_end || self.journal_end < HEADER_LEN {
            return Ok(false);
        }
        if let Some((at, frame)) = self.last_frame {
            let mut now = [0u8; journal::FRAME_LEN];
            if f.read_exact_at(&mut now, at).is_err() || now != frame {
                return Ok(false);
            }
        }
        if len == self.journal_end {
            // Nothing after the last good record: the cache is current.
            self.journal_len = len;
            return Ok(true);
        }
        let mut buf = vec![0u8; (len - self.journal_end) as usize];
        f.read_exact_at(&mut buf, self.journal_end)
            .map_err(|e| fsutil::describe(&jpath, &e))?;
        let scan = journal::scan(&buf, &jpath, self.journal_end)?;
        if scan.records.first().is_some_and(|r| r.seq != self.seq + 1) {
            return Ok(false);
        }
        for rec in scan.records {
            if rec.seq != self.seq + 1 {
                return Ok(false);
            }
            self.state.apply(&rec.change);
            self.seq = rec.seq;
        }
        if let Some(p) = scan.last {
            let mut frame = [0u8; journal::FRAME_LEN];
            frame.copy_from_slice(&buf[p..p + journal::FRAME_LEN]);
            self.last_frame = Some((self.journal_end + p as u64, frame));
        }
        self.journal_end += scan.valid_len as u64;
        self.journal_len = len;
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
        self.journal = Some(f);
        self.journal_end = HEADER_LEN;
        self.journal_len = HEADER_LEN;
        self.last_frame = None;
        self.seq = 0;
        self.state = State::default();
        Ok(())
    }

    /// Appends one encoded record and makes it durable.
    fn append(&mut self, dir: &Path, bytes: &[u8], sync: bool) -> Result<()> {
        let jpath = dir.join(JOURNAL);
        if self.journal.is_none() || self.journal_end < HEADER_LEN {
            let f = fsutil::open(&jpath, Mode::ReadWriteCreate)?;
            f.set_len(0).map_err(|e| fsutil::describe(&jpath, &e))?;
            f.write_all_at(journal::HEADER, 0)
                .map_err(|e| fsutil::describe(&jpath, &e))?;
            f.sync_data().map_err(|e| fsutil::describe(&jpath, &e))?;
            fsutil::fsync_dir(dir)?;
            self.journal = Some(f);
            self.journal_end = HEADER_LEN;
            self.journal_len = HEADER_LEN;
            self.last_frame = None;
        }
        let Some(f) = self.journal.as_ref() else {
            return Err(Error::Internal("journal not open".into()));
        };
        let at = self.journal_end;
        let io = |e: std::io::Error| fsutil::describe(&jpath, &e);
        let result = (|| {
            if self.journal_len > at {
                // A torn tail left by a crash: it was never committed.
                f.set_len(at).map_err(io)?;
            }
            crash("before-append");
            if super::fault::armed("mid-append") {
                let _ = f.write_all_at(&bytes[..bytes.len() / 2], at);
                crash("mid-append");
            }
            f.write_all_at(bytes, at).map_err(io)?;
            crash("after-append");
            if sync {
                f.sync_data().map_err(io)?;
            }
            Ok(())
        })();
        match result {
            Ok(()) => {
                self.journal_end = at + bytes.len() as u64;
                self.journal_len = self.journal_end;
                let mut frame = [0u8; journal::FRAME_LEN];
                frame.copy_from_slice(&bytes[..journal::FRAME_LEN]);
                self.last_frame = Some((at, frame));
                Ok(())
            }
            Err(e) => {
                // Take the record back so that nobody reads a write we report as failed.
                let _ = f.set_len(at);
                let _ = f.sync_data();
                self.journal_len = at;
                Err(e)
            }
        }
    }

    /// Compacts the store after a write, off the write lock's path: the new snapshot of
    /// this handle's state (record `seq`) is written and synced while other processes go on
    /// writing; then, briefly under the write lock, the journal's records up to `seq` move to
    /// the side files, the snapshot is renamed into place, and the journal is replaced by one
    /// holding only the records written since. Only one compaction runs at a time
    /// (`compact.lock`); one that finds the store compacted meanwhile gives up. A crash at
    /// any step leaves a store that reads the same.
    fn compact(&mut self, dir: &Path, lock: &File) -> Result<()> {
        let Some(base) = self.snap else {
            return Ok(());
        };
        let cpath = dir.join(COMPACT_LOCK);
        let guard = fsutil::open(&cpath, Mode::ReadWriteCreate)?;
        if guard.try_lock().is_err() {
            return Ok(()); // another process is compacting
        }
        let _compacting = Held(&guard);
        let result = self.compact_locked(dir, lock, base);
        // compact.lock keeps the reason of the last failure, for `check` to report.
        match &result {
            Err(e) => {
                let _ = guard.set_len(0);
                let _ = guard.write_all_at(format!("{e}\n").as_bytes(), 0);
            }
            Ok(()) if guard.metadata().is_ok_and(|m| m.len() > 0) => {
                let _ = guard.set_len(0);
            }
            Ok(()) => {}
        }
        result
    }

    /// Why the journal is past the compaction threshold, if it is: the store could not be
    /// compacted (`check` reports it). Uses what the last load read.
    pub fn compaction_backlog(&self, dir: &Path, tuning: &Tuning) -> Option<String> {
        let used = self.journal_end.saturating_sub(HEADER_LEN);
        let limit = tuning.compact_min_bytes.max(self.snapshot_len);
        if self.snap.is_none() || used <= limit {
            return None;
        }
        let reason = std::fs::read_to_string(dir.join(COMPACT_LOCK))
            .ok()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .map(|t| format!("; the last attempt failed: {t}"))
            .unwrap_or_default();
        Some(format!(
            "the journal holds {used} bytes, past the compaction threshold of {limit} bytes: \
             the store could not be compacted yet (the next write tries again){reason}"
        ))
    }

    /// The body of [`Embedded::compact`], with `compact.lock` held.
    fn compact_locked(&mut self, dir: &Path, lock: &File, base: FileId) -> Result<()> {
        let (state, seq) = (&self.state, self.seq);
        let tmp = fsutil::write_synced(dir, SNAPSHOT, &mut |w| snapshot::write(w, state, seq))?;
        lock.lock()
            .map_err(|e| fsutil::describe(&dir.join(LOCK), &e))?;
        let _held = Held(lock);
        if !lock_is_at_path(lock, dir) {
            let _ = std::fs::remove_file(&tmp);
            return Ok(()); // the directory was replaced meanwhile
        }
        let spath = dir.join(SNAPSHOT);
        let now = std::fs::symlink_metadata(&spath).map_err(|e| fsutil::describe(&spath, &e))?;
        if FileId::of(&now) != base {
            let _ = std::fs::remove_file(&tmp);
            return Ok(()); // compacted by another process meanwhile
        }
        let jpath = dir.join(JOURNAL);
        let bytes = match fsutil::open_existing(&jpath)? {
            Some(f) => read_all(f, &jpath)?,
            None => return Ok(()),
        };
        if journal::check_header(&bytes, &jpath)? != Head::Good {
            return Ok(());
        }
        let body = &bytes[HEADER_LEN as usize..];
        let scan = journal::scan(body, &jpath, HEADER_LEN)?;
        let mut lines = Vec::new();
        let mut archived = Vec::new();
        let mut keep_from = 0;
        let json = |e: serde_json::Error| Error::Internal(e.to_string());
        for (rec, end) in scan.records.iter().zip(&scan.ends) {
            if rec.seq > seq {
                break;
            }
            keep_from = *end;
            for (i, event) in rec.change.events.iter().enumerate() {
                let line = HistoryLine {
                    seq: rec.seq,
                    i: i as u32,
                    event: event.clone(),
                };
                serde_json::to_writer(&mut lines, &line).map_err(json)?;
                lines.push(b'\n');
            }
            for node in &rec.change.archived {
                let line = ArchiveLine {
                    seq: rec.seq,
                    node: node.clone(),
                };
                serde_json::to_writer(&mut archived, &line).map_err(json)?;
                archived.push(b'\n');
            }
        }
        append_lines(dir, ARCHIVE, &archived)?;
        append_lines(dir, HISTORY, &lines)?;
        crash("compact-after-history");
        crash("compact-before-rename");
        std::fs::rename(&tmp, &spath).map_err(|e| fsutil::describe(&spath, &e))?;
        crash("compact-after-rename");
        fsutil::fsync_dir(dir)?;
        crash("compact-before-truncate");
        // The records written since `seq` (by other processes) start the new journal.
        let kept = &body[keep_from..scan.valid_len];
        let mut fresh = Vec::with_capacity(journal::HEADER.len() + kept.len());
        fresh.extend_from_slice(journal::HEADER);
        fresh.extend_from_slice(kept);
        let jtmp = fsutil::write_synced(dir, JOURNAL, &mut |w| w.write_all(&fresh))?;
        std::fs::rename(&jtmp, &jpath).map_err(|e| fsutil::describe(&jpath, &e))?;
        fsutil::fsync_dir(dir)?;
        // This handle now stands at the new snapshot; the next call reads the kept records.
        let snap = std::fs::symlink_metadata(&spath).map_err(|e| fsutil::describe(&spath, &e))?;
        self.snap = Some(FileId::of(&snap));
        self.snapshot_len = snap.len();
        self.journal = Some(fsutil::open(&jpath, Mode::ReadWrite)?);
        self.journal_end = HEADER_LEN;
        self.journal_len = HEADER_LEN;
        self.last_frame = None;
        Ok(())
    }
}

/// The history (when asked) and the archived nodes, from the side files and the journal
/// records not yet moved there. The caller holds the lock.
fn read_logs(dir: &Path, history: bool) -> Result<Logs> {
    let mut logs = Logs::default();
    let mut order = 0usize;
    let mut archived = |logs: &mut Logs, n: Node| {
        order += 1;
        logs.archive_order.insert(n.id, order);
        logs.archive.insert(n.id, n);
    };
    if history {
        let hpath = dir.join(HISTORY);
        if let Some(f) = fsutil::open_existing(&hpath)? {
            logs.history = journal::parse_history(&read_all(f, &hpath)?, &hpath)?;
        }
    }
    let apath = dir.join(ARCHIVE);
    if let Some(f) = fsutil::open_existing(&apath)? {
        for line in journal::parse_lines::<ArchiveLine>(&read_all(f, &apath)?, &apath)? {
            archived(&mut logs, line.node);
        }
    }
    let jpath = dir.join(JOURNAL);
    let journal_bytes = match fsutil::open_existing(&jpath)? {
        Some(f) => read_all(f, &jpath)?,
        None => Vec::new(),
    };
    let last = logs.history.last().map(|h| h.seq).unwrap_or(0);
    if journal::check_header(&journal_bytes, &jpath)? == Head::Good {
        let scan = journal::scan(&journal_bytes[HEADER_LEN as usize..], &jpath, HEADER_LEN)?;
        for rec in scan.records {
            for n in rec.change.archived {
                archived(&mut logs, n);
            }
            if history && rec.seq > last {
                let seq = rec.seq;
                logs.history
                    .extend(rec.change.events.into_iter().enumerate().map(|(i, event)| {
                        HistoryLine {
                            seq,
                            i: i as u32,
                            event,
                        }
                    }));
            }
        }
    }
    Ok(logs)
}

/// The archive of a store whose lock the caller holds, read when the rules ask for a node.
struct ArchiveFiles<'a>(&'a Path);

impl Archive for ArchiveFiles<'_> {
    fn archived_node(&self, id: &crate::id::Id) -> Result<Option<Node>> {
        Ok(read_logs(self.0, false)?.archive.remove(id))
    }
}

/// True when `lock` is the file at `dir/lock` (and the store has not been moved or removed
/// under this handle).
fn lock_is_at_path(lock: &File, dir: &Path) -> bool {
    match (lock.metadata(), std::fs::symlink_metadata(dir.join(LOCK))) {
        (Ok(open), Ok(at_path)) => same_file(&open, &at_path),
        _ => false,
    }
}

/// True when two metadata describe the same file (device and inode).
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Appends complete lines to a side file, first dropping a torn last line.
fn append_lines(dir: &Path, name: &str, lines: &[u8]) -> Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    let path = dir.join(name);
    let f = fsutil::open(&path, Mode::ReadWriteCreate)?;
    let io = |e: std::io::Error| fsutil::describe(&path, &e);
    let mut len = f.metadata().map_err(io)?.len();
    // Walk back to the last newline: anything after it is a torn line.
    let mut end = len;
    while end > 0 {
        let start = end.saturating_sub(64 * 1024);
        let mut chunk = vec![0u8; (end - start) as usize];
        f.read_exact_at(&mut chunk, start).map_err(io)?;
        if let Some(p) = chunk.iter().rposition(|&c| c == b'\n') {
            end = start + p as u64 + 1;
            break;
        }
        end = start;
    }
    if end != len {
        f.set_len(end).map_err(io)?;
        len = end;
    }
    f.write_all_at(lines, len).map_err(io)?;
    f.sync_data().map_err(io)?;
    Ok(())
}
