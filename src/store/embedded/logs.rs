//! The side files read back: the history (its segments, `segments.rs`, and the journal
//! records not yet moved there) and the archived nodes (`archive.jsonl`, likewise).

use super::fsutil::{self, Mode};
use super::journal::{self, Head};
use super::segments::{self, Index, Layout, Place};
use super::{ARCHIVE, HISTORY, JOURNAL};
use crate::error::Result;
use crate::model::{HistoryLine, Node};
use crate::rules::Archive;
use std::io::Read;
use std::path::Path;

const HEADER_LEN: u64 = journal::HEADER.len() as u64;

/// One line of the archive file: an archived node's last value and the record that moved it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ArchiveLine {
    pub seq: u64,
    pub node: Node,
}

/// The history and the archived nodes of a store.
#[derive(Debug, Default)]
pub struct Logs {
    pub history: Vec<HistoryLine>,
    pub archive: std::collections::HashMap<crate::id::Id, Node>,
    /// Where each archived node's last line stands in the archive (file, then journal):
    /// nodes archived together keep the order they had in the live state.
    pub archive_order: std::collections::HashMap<crate::id::Id, usize>,
    /// The write the state read with these logs stands at.
    pub seq: u64,
}

impl Logs {
    /// The archived nodes by creation time, then in the order they were archived (a batch
    /// keeps the order of the live state, which is creation order).
    pub fn in_order(&self) -> Vec<Node> {
        let mut v: Vec<&Node> = self.archive.values().collect();
        v.sort_by_key(|n| (n.created_at, self.archive_order.get(&n.id).copied()));
        v.into_iter().cloned().collect()
    }
}

pub(super) use fsutil::read_all;

/// The history (when asked: every segment, the archived ones too) and the archived nodes,
/// from the side files and the journal records not yet moved there. The caller holds the
/// lock.
pub(super) fn read_logs(dir: &Path, history: bool) -> Result<Logs> {
    let mut logs = Logs::default();
    let mut order = 0usize;
    let mut archived = |logs: &mut Logs, n: Node| {
        order += 1;
        logs.archive_order.insert(n.id, order);
        logs.archive.insert(n.id, n);
    };
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
    if journal::check_header(&journal_bytes, &jpath)? == Head::Good {
        let body = &journal_bytes[HEADER_LEN as usize..];
        let scan = journal::scan(body, &jpath, HEADER_LEN, None)?;
        for rec in scan.records {
            for n in rec.change.archived {
                archived(&mut logs, n);
            }
        }
    }
    if history {
        logs.history = range(dir, 0, true)?;
    }
    Ok(logs)
}
/// The archive of a store whose lock the caller holds, read when the rules ask for a node.
pub(super) struct ArchiveFiles<'a>(pub(super) &'a Path);

impl Archive for ArchiveFiles<'_> {
    fn archived_node(&self, id: &crate::id::Id) -> Result<Option<Node>> {
        Ok(read_logs(self.0, false)?.archive.remove(id))
    }
}

/// At most `most` history lines after `after` (`(seq, i)`), oldest first: from the
/// history's segments (the archived ones too), then from the journal records not yet moved
/// there. `hint` is where this reader's last call stopped (`[segment, offset in it, journal
/// offset, number of the journal's first record]`, zeros at first: the segment to start in
/// is then found by the indexes) and moves past what was read: a follower reads the bytes
/// written since, not the history. A sealed segment read to its end is followed by the next
/// one; a journal whose first record changed was started again (a compaction moved its
/// records into the history), and is read from its start. A line at or before `after` (one
/// written again by a compaction that was cut short) is passed over: lines are kept in
/// strictly increasing `(seq, i)` order. The caller holds the lock.
pub(super) fn tail(
    dir: &Path,
    after: (u64, u32),
    hint: &mut [u64; 4],
    most: usize,
) -> Result<Vec<HistoryLine>> {
    let mut read = Reading {
        last: after,
        most,
        node: None,
        out: Vec::new(),
    };
    read_segments(dir, &mut read, hint, true)?;
    if !read.full() {
        let (_, rest) = hint.split_at_mut(2);
        tail_journal(dir, &mut read, rest)?;
    }
    Ok(read.out)
}

/// Every history line of the writes after `since`, oldest first, the archived segments
/// included with `archived`. The caller holds the lock.
pub(super) fn range(dir: &Path, since: u64, archived: bool) -> Result<Vec<HistoryLine>> {
    let mut read = Reading {
        last: (since, u32::MAX),
        most: usize::MAX,
        node: None,
        out: Vec::new(),
    };
    let mut hint = [0u64; 4];
    read_segments(dir, &mut read, &mut hint, archived)?;
    let (_, rest) = hint.split_at_mut(2);
    tail_journal(dir, &mut read, rest)?;
    Ok(read.out)
}

/// The segments' lines for `read`, from where `hint` (`[segment, offset]`) says, or from
/// the first segment holding writes after `read.last` when it is not known yet.
fn read_segments(
    dir: &Path,
    read: &mut Reading,
    hint: &mut [u64; 4],
    archived: bool,
) -> Result<()> {
    let lay = segments::layout(dir)?;
    if hint[0] == 0 || hint[0] > lay.active {
        // After a line in the middle of its write, or at its end: the rest of that write
        // is read too (a position before the whole write), the lines up to it passed over.
        let since = match read.last {
            (seq, u32::MAX) => seq,
            (seq, _) => seq.saturating_sub(1),
        };
        (hint[0], hint[1]) = start(dir, &lay, since, archived)?;
    }
    loop {
        let (n, place) = lay.at_or_after(hint[0], archived);
        if n != hint[0] {
            (hint[0], hint[1]) = (n, 0);
        }
        match place {
            Place::Active => {
                let path = dir.join(HISTORY);
                if let Some(f) = fsutil::open_existing(&path)? {
                    tail_file(f, &path, read, &mut hint[1])?;
                }
                return Ok(());
            }
            Place::Sealed(n) => {
                let path = segments::sealed(dir, n);
                tail_file(fsutil::open(&path, Mode::Read)?, &path, read, &mut hint[1])?;
            }
            Place::Archived(n) => {
                let path = segments::archived(dir, n);
                let bytes = segments::read_archived(&path)?;
                tail_bytes(&bytes, &path, read, &mut hint[1])?;
            }
        }
        if read.full() {
            return Ok(());
        }
        (hint[0], hint[1]) = (n + 1, 0);
    }
}

/// The first segment that may hold lines of writes after `since`, and where in it to start.
fn start(dir: &Path, lay: &Layout, since: u64, archived: bool) -> Result<(u64, u64)> {
    for (n, place) in lay.places(archived) {
        let ix = match place {
            Place::Active => return Ok((n, 0)),
            Place::Sealed(n) => {
                let path = segments::sealed(dir, n);
                let len = std::fs::metadata(&path)
                    .map_err(|e| fsutil::describe(&path, &e))?
                    .len();
                Index::open(&segments::index_of(dir, n), len)?
            }
            Place::Archived(n) => Index::open_any(&segments::archived_index(dir, n))?,
        };
        let Some(ix) = ix else {
            return Ok((n, 0));
        };
        if ix.head.last_seq > since {
            let at = ix
                .start_after(since)
                .map_err(|e| fsutil::describe(&segments::index_of(dir, n), &e))?;
            return Ok((n, at));
        }
    }
    Ok((lay.active, 0))
}

/// The history of one node after write `since`, oldest first (the archived segments too
/// with `archived`): in a sealed segment the lines its index points to, in a segment
/// without one (the one being written) the lines that name the node (what it holds is that
/// node's lines, never the history), then the journal. The caller holds the lock.
pub(super) fn of_node(
    dir: &Path,
    node: crate::id::Id,
    since: u64,
    archived: bool,
) -> Result<Vec<HistoryLine>> {
    let mut read = Reading {
        last: (since, u32::MAX),
        most: usize::MAX,
        node: Some((node, format!("\"node\":\"{}\"", node.hex()).into_bytes())),
        out: Vec::new(),
    };
    let lay = segments::layout(dir)?;
    for (_, place) in lay.places(archived) {
        match place {
            Place::Active => {
                let path = dir.join(HISTORY);
                if let Some(f) = fsutil::open_existing(&path)? {
                    file_lines_naming(f, &path, &mut read)?;
                }
            }
            Place::Sealed(n) => {
                let path = segments::sealed(dir, n);
                let len = std::fs::metadata(&path)
                    .map_err(|e| fsutil::describe(&path, &e))?
                    .len();
                match Index::open(&segments::index_of(dir, n), len)? {
                    Some(ix) if ix.head.last_seq <= since => {}
                    Some(ix) => {
                        let io = |e: std::io::Error| fsutil::describe(&path, &e);
                        let offsets = ix.offsets_of(&node).map_err(io)?;
                        if offsets.is_empty() {
                            continue;
                        }
                        let f = fsutil::open(&path, Mode::Read)?;
                        for at in offsets {
                            let line = line_at(&f, at).map_err(io)?;
                            read.offer(&line, &path, at)?;
                        }
                    }
                    None => {
                        let f = fsutil::open(&path, Mode::Read)?;
                        file_lines_naming(f, &path, &mut read)?;
                    }
                }
            }
            Place::Archived(n) => {
                let ix = Index::open_any(&segments::archived_index(dir, n))?;
                if ix.is_some_and(|ix| ix.head.last_seq <= since) {
                    continue;
                }
                let path = segments::archived(dir, n);
                let bytes = segments::read_archived(&path)?;
                tail_bytes(&bytes, &path, &mut read, &mut 0)?;
            }
        }
    }
    tail_journal(dir, &mut read, &mut [0; 2])?;
    Ok(read.out)
}

/// [`lines_naming`] over a segment file, read 256 KiB at a time into one buffer.
fn file_lines_naming(mut f: std::fs::File, path: &Path, read: &mut Reading) -> Result<()> {
    const CHUNK: usize = 256 << 10;
    let mut buf: Vec<u8> = Vec::with_capacity(2 * CHUNK);
    let mut base = 0u64; // the file offset of buf[0]
    loop {
        let have = buf.len();
        buf.resize(have + CHUNK, 0);
        let n = read_up_to(&mut f, &mut buf[have..]).map_err(|e| fsutil::describe(path, &e))?;
        buf.truncate(have + n);
        let whole = match memchr::memrchr(b'\n', &buf) {
            Some(p) => p + 1,
            None if n == 0 => return Ok(()),
            None => continue, // one line longer than what was read so far
        };
        lines_naming(&buf[..whole], base, path, read)?;
        if n == 0 {
            return Ok(()); // what is left is a torn last line
        }
        buf.drain(..whole);
        base += whole as u64;
    }
}

/// The complete lines of `bytes` (at file offset `base`) that carry the node's text (found
/// by a search of the whole buffer, not line by line), offered to `read` in order.
fn lines_naming(bytes: &[u8], base: u64, path: &Path, read: &mut Reading) -> Result<()> {
    let Some((_, text)) = read.node.clone() else {
        return Ok(());
    };
    let mut next = 0usize;
    for hit in memchr::memmem::find_iter(bytes, &text) {
        if hit < next {
            continue; // a second mention in a line already offered
        }
        let start = memchr::memrchr(b'\n', &bytes[..hit]).map_or(0, |p| p + 1);
        let Some(end) = memchr::memchr(b'\n', &bytes[hit..]).map(|p| hit + p + 1) else {
            break; // a torn last line
        };
        read.offer(&bytes[start..end], path, base + start as u64)?;
        next = end;
    }
    Ok(())
}

/// The line that starts at byte `at` of `f`, with its newline.
fn line_at(f: &std::fs::File, at: u64) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut out = Vec::new();
    let mut chunk = vec![0u8; 4096];
    loop {
        let n = f.read_at(&mut chunk, at + out.len() as u64)?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("the index points at byte {at}, past the last whole line"),
            ));
        }
        if let Some(p) = memchr::memchr(b'\n', &chunk[..n]) {
            out.extend_from_slice(&chunk[..=p]);
            return Ok(out);
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

/// What a read of the history keeps: the lines after `last` (which moves past every line
/// read, kept or not, so that lines written twice are passed over), of
/// `node` only when given (with the text its lines carry), `most` of them at the most.
struct Reading {
    last: (u64, u32),
    most: usize,
    node: Option<(crate::id::Id, Vec<u8>)>,
    out: Vec<HistoryLine>,
}

impl Reading {
    fn full(&self) -> bool {
        self.out.len() >= self.most
    }

    /// A line at `place` was read: whether it is new, moving `last` past it if so.
    fn passes(&mut self, place: (u64, u32)) -> bool {
        let new = place > self.last;
        if new {
            self.last = place;
        }
        new
    }

    /// Whether a raw line of the history file may be the node's (no node: any).
    fn may_keep(&self, line: &[u8]) -> bool {
        self.node
            .as_ref()
            .is_none_or(|(_, text)| memchr::memmem::find(line, text).is_some())
    }

    /// A raw line at byte `at` of `path`: kept when it is new and of the node.
    fn offer(&mut self, line: &[u8], path: &Path, at: u64) -> Result<()> {
        let place = match place_of(line) {
            Some(p) => p,
            None => {
                let h: HistoryLine = parse_line(line, path, at)?;
                (h.seq, h.i)
            }
        };
        if self.passes(place) && self.may_keep(line) {
            self.keep(parse_line(line, path, at)?);
        }
        Ok(())
    }

    fn keep(&mut self, h: HistoryLine) {
        if self
            .node
            .as_ref()
            .is_none_or(|(id, _)| h.event.node == Some(*id))
        {
            self.out.push(h);
        }
    }
}

/// The journal's records' events after `read.last`, from where `hint` (`[offset, number of
/// the first record]`) says this reader stopped.
fn tail_journal(dir: &Path, read: &mut Reading, hint: &mut [u64]) -> Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let jpath = dir.join(JOURNAL);
    let Some(mut f) = fsutil::open_existing(&jpath)? else {
        return Ok(());
    };
    let describe = |e: &std::io::Error| fsutil::describe(&jpath, e);
    let len = f.metadata().map_err(|e| describe(&e))?.len();
    let mut head = vec![0u8; HEADER_LEN as usize + 64];
    let n = read_up_to(&mut f, &mut head).map_err(|e| describe(&e))?;
    head.truncate(n);
    if journal::check_header(&head, &jpath)? != Head::Good {
        return Ok(());
    }
    let first = journal::first_seq(&head[HEADER_LEN as usize..]).unwrap_or(0);
    if hint[1] != first || hint[0] < HEADER_LEN || hint[0] > len {
        hint[0] = HEADER_LEN;
        hint[1] = first;
    }
    let base = hint[0];
    let mut body = Vec::new();
    f.seek(SeekFrom::Start(base)).map_err(|e| describe(&e))?;
    f.take(len - base)
        .read_to_end(&mut body)
        .map_err(|e| describe(&e))?;
    let scan = match journal::scan(&body, &jpath, base, None) {
        Ok(scan) => scan,
        // A torn tail is judged by the records before it: read the journal whole, as
        // every other reader does.
        Err(_) if base > HEADER_LEN => {
            hint[0] = HEADER_LEN;
            return tail_journal(dir, read, hint);
        }
        Err(e) => return Err(e),
    };
    let mut start = 0usize;
    for (rec, end) in scan.records.into_iter().zip(scan.ends) {
        for (i, event) in rec.change.events.into_iter().enumerate() {
            if read.full() {
                // This record is read again next time, from its start.
                hint[0] = base + start as u64;
                return Ok(());
            }
            if read.passes((rec.seq, i as u32)) {
                read.keep(HistoryLine::new(rec.seq, i as u32, event));
            }
        }
        start = end;
    }
    hint[0] = base + start as u64;
    Ok(())
}

/// Reads into `buf` until it is full or the file ends; how many bytes were read.
fn read_up_to(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    use std::io::Read;
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// A segment file's lines after `read.last`, from byte `hint` on.
fn tail_file(f: std::fs::File, path: &Path, read: &mut Reading, hint: &mut u64) -> Result<()> {
    use std::io::{Seek, SeekFrom};
    let describe = |e: &std::io::Error| fsutil::describe(path, e);
    let len = f.metadata().map_err(|e| describe(&e))?.len();
    if *hint > len {
        *hint = 0;
    }
    let mut f = f;
    f.seek(SeekFrom::Start(*hint)).map_err(|e| describe(&e))?;
    let reader = std::io::BufReader::with_capacity(1 << 20, f.take(len - *hint));
    tail_lines(reader, path, read, hint)
}

/// An archived segment's lines (decompressed) after `read.last`, from byte `hint` on.
fn tail_bytes(bytes: &[u8], path: &Path, read: &mut Reading, hint: &mut u64) -> Result<()> {
    if *hint > bytes.len() as u64 {
        *hint = 0;
    }
    tail_lines(&bytes[*hint as usize..], path, read, hint)
}

/// The lines of `reader` (which starts at byte `hint` of `path`) after `read.last`.
fn tail_lines(
    mut reader: impl std::io::BufRead,
    path: &Path,
    read: &mut Reading,
    hint: &mut u64,
) -> Result<()> {
    let mut line = Vec::new();
    while !read.full() {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| fsutil::describe(path, &e))?;
        // The end, or a torn last line (a crash mid-append): read again next time.
        if n == 0 || line.last() != Some(&b'\n') {
            break;
        }
        let at = *hint;
        *hint += n as u64;
        read.offer(&line, path, at)?;
    }
    Ok(())
}

fn parse_line(line: &[u8], path: &Path, at: u64) -> Result<HistoryLine> {
    serde_json::from_slice(line).map_err(|e| {
        crate::error::Error::corrupt(path, format!("the line at byte {at} is garbled: {e}"))
    })
}

/// A history line's `(seq, i)` read from its first bytes, as this crate writes them
/// (`{"seq":N,"i":M,`), without parsing the rest; `None` for any other spelling.
fn place_of(line: &[u8]) -> Option<(u64, u32)> {
    let rest = line.strip_prefix(b"{\"seq\":")?;
    let (seq, rest) = digits(rest)?;
    let rest = rest.strip_prefix(b",\"i\":")?;
    let (i, rest) = digits(rest)?;
    matches!(rest.first(), Some(b',' | b'}')).then_some((seq, u32::try_from(i).ok()?))
}

fn digits(b: &[u8]) -> Option<(u64, &[u8])> {
    let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if n == 0 || n > 19 {
        return None;
    }
    let v = std::str::from_utf8(&b[..n]).ok()?.parse().ok()?;
    Some((v, &b[n..]))
}
