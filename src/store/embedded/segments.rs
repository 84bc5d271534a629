//! The history in segments (docs/files.md). `history.jsonl` is the
//! segment being written: compactions append to it, under `compact.lock`. Once it holds
//! `segment_bytes` or more it is sealed: its index is written beside where it goes, then it
//! moves to `history/NNNNNNNNNN.jsonl` (numbered from 1, in order; the file being written is
//! the number after the last). An index tells, for each node, where its lines are, and
//! where to start reading for the writes after a given one: `log NODE` and `--since` read
//! what they show. With `history_keep` set, sealed segments past it move, compressed, to
//! `history/archive/NNNNNNNNNN.jsonl.gz` (their index beside), read only by `log --all`
//! and by readers that start before them (`watch --since 0`).
//!
//! An index is derived, never trusted over its segment: one whose recorded length is not
//! the segment's (torn, missing, from a crash between its write and the segment's move) is
//! not used (the segment is read line by line) and is written again by the next
//! compaction; `check` compares every index with its segment.

use super::fault::crash;
use super::fsutil::{self, Mode};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::model::{HistoryKeep, HistoryLine};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The directory of the sealed segments (in the store directory).
pub const SEGMENTS: &str = "history";
/// The directory of the archived segments (in [`SEGMENTS`]).
pub const ARCHIVED: &str = "archive";
/// Segments are sealed once they reach this size.
pub const SEGMENT_BYTES: u64 = 4 << 20;

const MAGIC: &[u8; 8] = b"CDHIDX1\n";
const HEAD_LEN: u64 = 72;
const ENTRY: u64 = 24;
const MARK: u64 = 16;
/// A place to start reading is marked every this many bytes of a segment.
const MARK_EVERY: u64 = 64 << 10;

pub fn sealed(dir: &Path, n: u64) -> PathBuf {
    dir.join(SEGMENTS).join(format!("{n:010}.jsonl"))
}

pub fn index_of(dir: &Path, n: u64) -> PathBuf {
    dir.join(SEGMENTS).join(format!("{n:010}.idx"))
}

pub fn archived(dir: &Path, n: u64) -> PathBuf {
    dir.join(SEGMENTS).join(ARCHIVED).join(format!("{n:010}.jsonl.gz"))
}

pub fn archived_index(dir: &Path, n: u64) -> PathBuf {
    dir.join(SEGMENTS).join(ARCHIVED).join(format!("{n:010}.idx"))
}

/// Where each segment of a store's history is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// The archived segments' numbers, ascending (none also sealed).
    pub archived: Vec<u64>,
    /// The sealed segments' numbers, ascending.
    pub sealed: Vec<u64>,
    /// The number of `history.jsonl`: one past the last sealed or archived segment.
    pub active: u64,
}

/// A segment, as a reader finds it.
pub enum Place {
    Archived(u64),
    Sealed(u64),
    Active,
}

impl Layout {
    /// The segments in order, the archived ones only with `archived`.
    pub fn places(&self, archived: bool) -> Vec<(u64, Place)> {
        let mut v: Vec<(u64, Place)> = Vec::new();
        if archived {
            v.extend(self.archived.iter().map(|&n| (n, Place::Archived(n))));
        }
        v.extend(self.sealed.iter().map(|&n| (n, Place::Sealed(n))));
        v.push((self.active, Place::Active));
        v
    }

    /// Where segment `n` is, or the first segment after it when it is gone (archived
    /// segments counted only with `archived`).
    pub fn at_or_after(&self, n: u64, archived: bool) -> (u64, Place) {
        self.places(archived)
            .into_iter()
            .find(|(m, _)| *m >= n)
            .unwrap_or((self.active, Place::Active))
    }
}

/// The segments of the store at `dir`. The caller holds the lock.
pub fn layout(dir: &Path) -> Result<Layout> {
    let sealed = numbers(&dir.join(SEGMENTS), ".jsonl")?;
    let mut archived = numbers(&dir.join(SEGMENTS).join(ARCHIVED), ".jsonl.gz")?;
    // A segment both archived and sealed (a move cut short) is read from its sealed file.
    archived.retain(|n| sealed.binary_search(n).is_err());
    let last = sealed.last().max(archived.last()).copied().unwrap_or(0);
    Ok(Layout {
        archived,
        sealed,
        active: last + 1,
    })
}

/// The numbers of the files `NNNNNNNNNN<ext>` in `dir`, ascending.
fn numbers(dir: &Path, ext: &str) -> Result<Vec<u64>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(fsutil::describe(dir, &e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| fsutil::describe(dir, &e))?;
        let name = entry.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(ext)) else {
            continue;
        };
        if stem.len() == 10 && stem.bytes().all(|c| c.is_ascii_digit()) {
            out.push(stem.parse().unwrap_or(0));
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// What an index says of its segment as a whole.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Head {
    /// The segment's length in bytes, when the index was written.
    pub len: u64,
    pub first_seq: u64,
    /// The highest `seq` of its lines.
    pub last_seq: u64,
    /// The latest `at` of its lines.
    pub last_at: u64,
    /// Its lines.
    pub events: u64,
    entries: u64,
    marks: u64,
    crc: u32,
}

/// A segment's index, opened and found to fit the segment.
pub struct Index {
    file: File,
    pub head: Head,
}

impl Index {
    /// The index at `path`, when it is there and was written for a segment of `len` bytes.
    pub fn open(path: &Path, len: u64) -> Result<Option<Index>> {
        let Some(file) = fsutil::open_existing(path)? else {
            return Ok(None);
        };
        let size = file.metadata().map_err(|e| fsutil::describe(path, &e))?.len();
        let mut b = [0u8; HEAD_LEN as usize];
        if size < HEAD_LEN || file.read_exact_at(&mut b, 0).is_err() || &b[..8] != MAGIC {
            return Ok(None);
        }
        let head = parse_head(&b);
        let fits = head.len == len
            && head
                .entries
                .checked_mul(ENTRY)
                .and_then(|e| head.marks.checked_mul(MARK)?.checked_add(e))
                .and_then(|b| b.checked_add(HEAD_LEN))
                == Some(size);
        Ok(fits.then_some(Index { file, head }))
    }

    /// The index at `path` (an archived segment's), when it is there and whole.
    pub fn open_any(path: &Path) -> Result<Option<Index>> {
        let Some(file) = fsutil::open_existing(path)? else {
            return Ok(None);
        };
        let mut b = [0u8; HEAD_LEN as usize];
        if file.read_exact_at(&mut b, 0).is_err() || &b[..8] != MAGIC {
            return Ok(None);
        }
        let len = parse_head(&b).len;
        Index::open(path, len)
    }

    /// The offsets of `node`'s lines in the segment, ascending.
    pub fn offsets_of(&self, node: &Id) -> std::io::Result<Vec<u64>> {
        let (mut lo, mut hi) = (0u64, self.head.entries);
        let mut e = [0u8; ENTRY as usize];
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            self.file.read_exact_at(&mut e, HEAD_LEN + mid * ENTRY)?;
            if e[..16] < node.0[..] {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut out = Vec::new();
        let mut chunk = vec![0u8; (64 * ENTRY) as usize];
        let mut at = lo;
        'read: while at < self.head.entries {
            let n = (self.head.entries - at).min(64);
            let buf = &mut chunk[..(n * ENTRY) as usize];
            self.file.read_exact_at(buf, HEAD_LEN + at * ENTRY)?;
            for e in buf.chunks_exact(ENTRY as usize) {
                if e[..16] != node.0[..] {
                    break 'read;
                }
                out.push(u64::from_le_bytes(e[16..].try_into().unwrap_or_default()));
            }
            at += n;
        }
        Ok(out)
    }

    /// Where to start reading the segment for the lines of writes after `since`: no line
    /// before it is of such a write.
    pub fn start_after(&self, since: u64) -> std::io::Result<u64> {
        let base = HEAD_LEN + self.head.entries * ENTRY;
        let (mut lo, mut hi) = (0u64, self.head.marks);
        let mut m = [0u8; MARK as usize];
        // The last mark whose lines before are all of writes at or before `since`.
        let mut start = 0;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            self.file.read_exact_at(&mut m, base + mid * MARK)?;
            let before = u64::from_le_bytes(m[..8].try_into().unwrap_or_default());
            if before <= since {
                start = u64::from_le_bytes(m[8..].try_into().unwrap_or_default());
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(start)
    }

    /// The whole index file, for `check`.
    fn bytes(&self) -> std::io::Result<Vec<u8>> {
        let len = self.file.metadata()?.len();
        let mut b = vec![0u8; len as usize];
        self.file.read_exact_at(&mut b, 0)?;
        Ok(b)
    }
}

fn parse_head(b: &[u8]) -> Head {
    let u = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default());
    Head {
        len: u(8),
        first_seq: u(16),
        last_seq: u(24),
        last_at: u(32),
        events: u(40),
        entries: u(48),
        marks: u(56),
        crc: u32::from_le_bytes(b[64..68].try_into().unwrap_or_default()),
    }
}

/// The index of a segment's bytes (complete lines; a torn last line is left out).
pub fn build(segment: &[u8], path: &Path) -> Result<(Head, Vec<u8>)> {
    let mut entries: Vec<([u8; 16], u64)> = Vec::new();
    let mut marks: Vec<(u64, u64)> = Vec::new();
    let mut head = Head::default();
    let mut at = 0u64;
    let mut next_mark = 0u64;
    for line in segment.split_inclusive(|&c| c == b'\n') {
        if line.last() != Some(&b'\n') {
            break;
        }
        if at >= next_mark {
            marks.push((head.last_seq, at));
            next_mark = at + MARK_EVERY;
        }
        let h: HistoryLine = serde_json::from_slice(line).map_err(|e| {
            Error::corrupt(path, format!("the line at byte {at} is garbled: {e}"))
        })?;
        if head.events == 0 {
            head.first_seq = h.seq;
        }
        head.events += 1;
        head.last_seq = head.last_seq.max(h.seq);
        head.last_at = head.last_at.max(h.event.at);
        if let Some(node) = h.event.node {
            entries.push((node.0, at));
        }
        at += line.len() as u64;
    }
    entries.sort_unstable();
    head.len = at;
    head.entries = entries.len() as u64;
    head.marks = marks.len() as u64;
    let mut body = Vec::with_capacity((entries.len() * 24) + marks.len() * 16);
    for (id, off) in &entries {
        body.extend_from_slice(id);
        body.extend_from_slice(&off.to_le_bytes());
    }
    for (before, off) in &marks {
        body.extend_from_slice(&before.to_le_bytes());
        body.extend_from_slice(&off.to_le_bytes());
    }
    head.crc = crc32fast::hash(&body);
    let mut out = Vec::with_capacity(HEAD_LEN as usize + body.len());
    out.extend_from_slice(MAGIC);
    for v in [
        head.len,
        head.first_seq,
        head.last_seq,
        head.last_at,
        head.events,
        head.entries,
        head.marks,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&head.crc.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&body);
    Ok((head, out))
}

/// Writes an index file atomically.
fn write_index(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("index");
    let tmp = fsutil::write_synced(dir, name, &mut |w| w.write_all(bytes))?;
    std::fs::rename(&tmp, path).map_err(|e| fsutil::describe(path, &e))?;
    fsutil::fsync_dir(dir)
}

/// A segment or index file, opened as every store file is (a link or a FIFO in its place is
/// refused, never followed or waited on).
fn read_file(path: &Path) -> Result<Vec<u8>> {
    fsutil::read_all(fsutil::open(path, Mode::Read)?, path)
}

/// The bytes of an archived segment, decompressed. The last one read in this process is
/// kept (an archived segment is never written again: a file of the same identity holds the
/// same bytes), so a follower paging through it decompresses it once, not once a page.
pub fn read_archived(path: &Path) -> Result<std::sync::Arc<Vec<u8>>> {
    use std::io::Read;
    use std::sync::{Arc, Mutex};
    type Kept = Option<(PathBuf, fsutil::FileId, Arc<Vec<u8>>)>;
    static LAST: Mutex<Kept> = Mutex::new(None);
    let f = fsutil::open(path, Mode::Read)?;
    let id = fsutil::FileId::of(&f.metadata().map_err(|e| fsutil::describe(path, &e))?);
    if let Ok(last) = LAST.lock() {
        if let Some((_, _, bytes)) = last.as_ref().filter(|(p, i, _)| p == path && *i == id) {
            return Ok(bytes.clone());
        }
    }
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(std::io::BufReader::new(f))
        .read_to_end(&mut out)
        .map_err(|e| Error::corrupt(path, format!("the archived segment is unreadable: {e}")))?;
    let out = Arc::new(out);
    if let Ok(mut last) = LAST.lock() {
        *last = Some((path.to_path_buf(), id, out.clone()));
    }
    Ok(out)
}

/// Seals `history.jsonl` when it holds `segment_bytes` or more, or (with `history_keep` a
/// duration) when its first line is older than a tenth of that duration, so that a segment
/// spans at most a tenth of what is kept live; and brings the indexes of the sealed
/// segments up to date. Called with `compact.lock` held (no other process appends to
/// `history.jsonl` meanwhile); takes the write lock `lock` only for the move.
pub fn roll(
    dir: &Path,
    lock: &File,
    segment_bytes: u64,
    keep: HistoryKeep,
    now: u64,
) -> Result<()> {
    let lay = layout(dir)?;
    for &n in &lay.sealed {
        reindex(dir, n)?;
    }
    let active = dir.join(super::HISTORY);
    let Some(f) = fsutil::open_existing(&active)? else {
        return Ok(());
    };
    let len = f.metadata().map_err(|e| fsutil::describe(&active, &e))?.len();
    let old = |span: u64| first_at(&f).is_some_and(|at| now.saturating_sub(at) >= span);
    let due = len >= segment_bytes.max(1)
        || matches!(keep, HistoryKeep::ForMs(ms) if len > 0 && old(ms / 10));
    if !due {
        return Ok(());
    }
    let bytes = fsutil::read_all(f, &active)?;
    let (head, index) = build(&bytes, &active)?;
    if head.len != len {
        // A torn last line (a compaction cut short): the next compaction drops it first.
        return Ok(());
    }
    let segs = dir.join(SEGMENTS);
    ensure(&segs, dir)?;
    let n = lay.active;
    write_index(&index_of(dir, n), &index)?;
    crash("roll-after-index");
    lock.lock()
        .map_err(|e| fsutil::describe(&dir.join(super::LOCK), &e))?;
    let _held = fsutil::Held(lock);
    let to = sealed(dir, n);
    std::fs::rename(&active, &to).map_err(|e| fsutil::describe(&to, &e))?;
    crash("roll-after-rename");
    fsutil::fsync_dir(&segs)?;
    fsutil::fsync_dir(dir)
}

/// The `at` of a segment file's first line, read from its first bytes as this crate writes
/// them (`{"seq":N,"i":M,"at":T,`), however long the line; else from the line parsed whole
/// when it fits in 64 KiB.
fn first_at(f: &File) -> Option<u64> {
    let mut b = vec![0u8; 64 << 10];
    let n = f.read_at(&mut b, 0).ok()?;
    let b = &b[..n];
    let prefix = (|| {
        let rest = b.strip_prefix(b"{\"seq\":")?;
        let rest = &rest[rest.iter().position(|c| !c.is_ascii_digit())?..];
        let rest = rest.strip_prefix(b",\"i\":")?;
        let rest = &rest[rest.iter().position(|c| !c.is_ascii_digit())?..];
        let rest = rest.strip_prefix(b",\"at\":")?;
        let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()
    })();
    prefix.or_else(|| {
        let end = memchr::memchr(b'\n', b)?;
        let h: HistoryLine = serde_json::from_slice(&b[..end]).ok()?;
        Some(h.event.at)
    })
}

/// Creates a segment directory when missing, and makes its entry durable (also when an
/// earlier call made it and a crash may have come before its entry was synced).
fn ensure(path: &Path, parent: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(fsutil::describe(path, &e)),
    }
    fsutil::fsync_dir(parent)
}

/// Writes sealed segment `n`'s index again when it does not fit the segment.
fn reindex(dir: &Path, n: u64) -> Result<()> {
    let path = sealed(dir, n);
    let len = std::fs::metadata(&path)
        .map_err(|e| fsutil::describe(&path, &e))?
        .len();
    if Index::open(&index_of(dir, n), len)?.is_some() {
        return Ok(());
    }
    let (_, index) = build(&read_file(&path)?, &path)?;
    write_index(&index_of(dir, n), &index)
}

/// Moves the sealed segments that `keep` no longer keeps live to the archive, compressed,
/// oldest first; `now` is the store clock's time. Called with `compact.lock` held;
/// each segment is compressed first, then moved under the write lock `lock`.
pub fn retire(dir: &Path, lock: &File, keep: HistoryKeep, now: u64) -> Result<()> {
    if keep.is_all() {
        return Ok(());
    }
    let lay = layout(dir)?;
    let mut heads = Vec::new();
    for &n in &lay.sealed {
        let path = sealed(dir, n);
        let len = std::fs::metadata(&path)
            .map_err(|e| fsutil::describe(&path, &e))?
            .len();
        match Index::open(&index_of(dir, n), len)? {
            Some(ix) => heads.push((n, ix.head)),
            None => return Ok(()), // indexed again by the next compaction first
        }
    }
    let mut newer: u64 = heads.iter().map(|(_, h)| h.events).sum();
    for (n, head) in heads {
        newer -= head.events;
        let due = match keep {
            HistoryKeep::All => false,
            HistoryKeep::ForMs(ms) => head.last_at < now.saturating_sub(ms),
            HistoryKeep::Events(k) => newer >= k,
        };
        if !due {
            break;
        }
        archive(dir, lock, n)?;
    }
    Ok(())
}

/// Moves sealed segment `n` to the archive.
fn archive(dir: &Path, lock: &File, n: u64) -> Result<()> {
    let arch = dir.join(SEGMENTS).join(ARCHIVED);
    ensure(&arch, &dir.join(SEGMENTS))?;
    let from = sealed(dir, n);
    let bytes = read_file(&from)?;
    let to = archived(dir, n);
    let name = to.file_name().and_then(|n| n.to_str()).unwrap_or("segment");
    let tmp = fsutil::write_synced(&arch, name, &mut |w| {
        let mut gz = flate2::write::GzEncoder::new(w, flate2::Compression::default());
        gz.write_all(&bytes)?;
        gz.finish().map(|_| ())
    })?;
    let ix = read_file(&index_of(dir, n)).unwrap_or_default();
    let ixto = archived_index(dir, n);
    write_index(&ixto, &ix)?;
    lock.lock()
        .map_err(|e| fsutil::describe(&dir.join(super::LOCK), &e))?;
    let _held = fsutil::Held(lock);
    std::fs::rename(&tmp, &to).map_err(|e| fsutil::describe(&to, &e))?;
    fsutil::fsync_dir(&arch)?;
    crash("archive-after-rename");
    std::fs::remove_file(&from).map_err(|e| fsutil::describe(&from, &e))?;
    let _ = std::fs::remove_file(index_of(dir, n));
    fsutil::fsync_dir(&dir.join(SEGMENTS))
}

/// What `check` finds wrong with the segments and their indexes: problems (a segment that
/// cannot be read) and notes (an index that does not fit, read around and rewritten by the
/// next compaction).
pub fn check(dir: &Path) -> Result<(Vec<String>, Vec<String>)> {
    let lay = layout(dir)?;
    let (mut problems, mut notes) = (Vec::new(), Vec::new());
    for &n in &lay.sealed {
        let path = sealed(dir, n);
        let bytes = match read_file(&path) {
            Ok(b) => b,
            Err(e) => {
                problems.push(e.to_string());
                continue;
            }
        };
        let ipath = index_of(dir, n);
        let (head, want) = match build(&bytes, &path) {
            Ok(b) => b,
            Err(e) => {
                problems.push(e.to_string());
                continue;
            }
        };
        if head.len != bytes.len() as u64 {
            problems.push(format!(
                "{}: the sealed segment ends with a torn line",
                path.display()
            ));
        }
        match Index::open(&ipath, bytes.len() as u64)? {
            None => notes.push(format!(
                "{}: missing or not this segment's; the segment is read line by line until \
                 the next compaction writes it again",
                ipath.display()
            )),
            Some(ix) => {
                let have = ix.bytes().map_err(|e| fsutil::describe(&ipath, &e))?;
                if have != want {
                    problems.push(format!(
                        "{}: the index disagrees with its segment (checksum {:08x}, the \
                         segment's lines give {:08x}); remove it and the next compaction \
                         writes it again",
                        ipath.display(),
                        ix.head.crc,
                        head.crc
                    ));
                }
            }
        }
    }
    for &n in &lay.archived {
        if let Err(e) = read_archived(&archived(dir, n)) {
            problems.push(e.to_string());
        }
    }
    Ok((problems, notes))
}

#[cfg(test)]
mod tests {
    use super::first_at;
    use std::io::Write;

    #[test]
    fn the_first_line_time_is_read_however_long_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let long = "x".repeat(200 << 10);
        let mut f = std::fs::File::create(&path).unwrap();
        writeln!(
            f,
            "{{\"seq\":7,\"i\":0,\"at\":1700000000123,\"verb\":\"complete\",\"output\":\"{long}\"}}"
        )
        .unwrap();
        let f = std::fs::File::open(&path).unwrap();
        assert_eq!(first_at(&f), Some(1_700_000_000_123));
        std::fs::write(&path, "{\"i\":0,\"seq\":7,\"at\":5,\"verb\":\"create\"}\n").unwrap();
        let f = std::fs::File::open(&path).unwrap();
        assert_eq!(first_at(&f), Some(5), "another spelling, parsed whole");
    }
}
