//! The side files read back: the history (`history.jsonl` and the journal records not yet
//! moved there) and the archived nodes (`archive.jsonl`, likewise).

use super::fsutil;
use super::journal::{self, Head};
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

pub(super) fn read_all(mut f: impl Read, path: &Path) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)
        .map_err(|e| fsutil::describe(path, &e))?;
    Ok(buf)
}

/// The history (when asked) and the archived nodes, from the side files and the journal
/// records not yet moved there. The caller holds the lock.
pub(super) fn read_logs(dir: &Path, history: bool) -> Result<Logs> {
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
        let body = &journal_bytes[HEADER_LEN as usize..];
        let scan = journal::scan(body, &jpath, HEADER_LEN, None)?;
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
pub(super) struct ArchiveFiles<'a>(pub(super) &'a Path);

impl Archive for ArchiveFiles<'_> {
    fn archived_node(&self, id: &crate::id::Id) -> Result<Option<Node>> {
        Ok(read_logs(self.0, false)?.archive.remove(id))
    }
}

/// At most `most` history lines after `after` (`(seq, i)`), oldest first: from the history
/// file, then from the journal records not yet moved there. `hint` is where this reader's
/// last call stopped (`[history file offset, journal offset, number of the journal's first
/// record]`, zeros at first) and moves past what was read: a follower reads the bytes
/// written since, not the history. A history file now shorter than its offset was replaced,
/// and is read from its start; a journal whose first record changed was started again (a
/// compaction moved its records into the history file), and is read from its start. A line
/// of the file at or before `after` (one written again by a compaction that was cut short)
/// is passed over, as [`journal::parse_history`] does. The caller holds the lock.
pub(super) fn tail(
    dir: &Path,
    after: (u64, u32),
    hint: &mut [u64; 3],
    most: usize,
) -> Result<Vec<HistoryLine>> {
    let mut read = Reading {
        last: after,
        most,
        node: None,
        out: Vec::new(),
    };
    let hpath = dir.join(HISTORY);
    if let Some(f) = fsutil::open_existing(&hpath)? {
        tail_file(f, &hpath, &mut read, &mut hint[0])?;
    }
    if read.out.len() < most {
        tail_journal(dir, &mut read, hint)?;
    }
    Ok(read.out)
}

/// The history of one node after write `since`, oldest first: the history file read line
/// by line, only the lines that name the node parsed (what it holds is that node's lines,
/// never the history), then the journal. The caller holds the lock.
pub(super) fn of_node(dir: &Path, node: crate::id::Id, since: u64) -> Result<Vec<HistoryLine>> {
    let mut read = Reading {
        last: (since, u32::MAX),
        most: usize::MAX,
        node: Some((node, format!("\"node\":\"{}\"", node.hex()).into_bytes())),
        out: Vec::new(),
    };
    let hpath = dir.join(HISTORY);
    if let Some(f) = fsutil::open_existing(&hpath)? {
        tail_file(f, &hpath, &mut read, &mut 0)?;
    }
    tail_journal(dir, &mut read, &mut [0; 3])?;
    Ok(read.out)
}

/// What a read of the history keeps: the lines after `last` (which moves past every line
/// read, kept or not, as [`journal::parse_history`] passes over lines written twice), of
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

/// The journal's records' events after `read.last`, from where `hint` says this reader
/// stopped.
fn tail_journal(dir: &Path, read: &mut Reading, hint: &mut [u64; 3]) -> Result<()> {
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
    if hint[2] != first || hint[1] < HEADER_LEN || hint[1] > len {
        hint[1] = HEADER_LEN;
        hint[2] = first;
    }
    let base = hint[1];
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
            hint[1] = HEADER_LEN;
            return tail_journal(dir, read, hint);
        }
        Err(e) => return Err(e),
    };
    let mut start = 0usize;
    for (rec, end) in scan.records.into_iter().zip(scan.ends) {
        for (i, event) in rec.change.events.into_iter().enumerate() {
            if read.full() {
                // This record is read again next time, from its start.
                hint[1] = base + start as u64;
                return Ok(());
            }
            if read.passes((rec.seq, i as u32)) {
                read.keep(HistoryLine {
                    seq: rec.seq,
                    i: i as u32,
                    event,
                });
            }
        }
        start = end;
    }
    hint[1] = base + start as u64;
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

/// The history file's lines after `read.last`, from byte `hint` on.
fn tail_file(f: std::fs::File, path: &Path, read: &mut Reading, hint: &mut u64) -> Result<()> {
    use std::io::{BufRead, Seek, SeekFrom};
    let describe = |e: &std::io::Error| fsutil::describe(path, e);
    let len = f.metadata().map_err(|e| describe(&e))?.len();
    if *hint > len {
        *hint = 0;
    }
    let mut f = f;
    f.seek(SeekFrom::Start(*hint)).map_err(|e| describe(&e))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, f.take(len - *hint));
    let mut line = Vec::new();
    while !read.full() {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| describe(&e))?;
        // The end, or a torn last line (a crash mid-append): read again next time.
        if n == 0 || line.last() != Some(&b'\n') {
            break;
        }
        let at = *hint;
        *hint += n as u64;
        let place = match place_of(&line) {
            Some(p) => p,
            None => {
                let h: HistoryLine = parse_line(&line, path, at)?;
                (h.seq, h.i)
            }
        };
        if read.passes(place) && read.may_keep(&line) {
            read.keep(parse_line(&line, path, at)?);
        }
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
