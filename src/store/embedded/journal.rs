//! The journal: an append-only file of checksummed records, one per committed write.
//!
//! ```text
//! claimdag-journal 1\n                      header
//! #<len:8 hex> <crc32:8 hex> <json>\n       one record; len counts the JSON bytes
//! ```
//!
//! The file is reserved ahead of the records in large steps (zeros), so that a commit's
//! `fdatasync` flushes data only: the journal ends at the first byte that does not start a
//! good record, not at the file's length. A record that fails its framing or checksum at
//! the end is a torn tail left by a crash (never committed: the writer had not returned) and
//! is dropped, with whatever follows it. A bad record followed by a good one is corruption,
//! never skipped, unless that good one says it was written while the bad one was not yet
//! durable (`durable` below): then a power cut kept a later sector of one unfinished sync
//! and lost an earlier one, and neither was committed.

use crate::error::{Error, Result};
pub use crate::model::HistoryLine;
use crate::model::{Change, Event, Millis};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const HEADER: &[u8] = b"claimdag-journal 1\n";
const PREFIX: &[u8] = b"claimdag-journal ";
const FRAME: usize = 19; // '#' + 8 + ' ' + 8 + ' '

/// One committed write.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "Wire")]
pub struct Record {
    pub seq: u64,
    pub at: Millis,
    pub change: Change,
    /// The journal bytes the writing handle replayed when it loaded the store (the first
    /// record it wrote since; 0 in the others): what decides an early compaction.
    pub replayed: u64,
    /// The last record known durable when this one was written: `seq - 1`, unless it was
    /// written while earlier records of its batch waited for their sync.
    pub durable: u64,
}

/// A record as written: the change's fields beside `seq` and `at`. (Spelled out rather
/// than `#[serde(flatten)]`, which buffers every record and parses it several times slower.)
#[derive(Deserialize)]
struct Wire {
    seq: u64,
    at: Millis,
    #[serde(default)]
    nodes: Vec<crate::model::Node>,
    #[serde(default)]
    archived: Vec<crate::model::Node>,
    #[serde(default)]
    settings: Option<crate::model::Settings>,
    #[serde(default)]
    events: Vec<Event>,
    #[serde(default)]
    replayed: u64,
    #[serde(default)]
    durable: Option<u64>,
}

impl From<Wire> for Record {
    fn from(w: Wire) -> Record {
        Record {
            seq: w.seq,
            at: w.at,
            change: Change {
                nodes: w.nodes,
                archived: w.archived,
                settings: w.settings,
                events: w.events,
            },
            replayed: w.replayed,
            durable: w.durable.unwrap_or(w.seq.saturating_sub(1)),
        }
    }
}

impl Serialize for Record {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let c = &self.change;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("seq", &self.seq)?;
        m.serialize_entry("at", &self.at)?;
        if !c.nodes.is_empty() {
            m.serialize_entry("nodes", &c.nodes)?;
        }
        if !c.archived.is_empty() {
            m.serialize_entry("archived", &c.archived)?;
        }
        if let Some(st) = &c.settings {
            m.serialize_entry("settings", st)?;
        }
        if !c.events.is_empty() {
            m.serialize_entry("events", &c.events)?;
        }
        if self.replayed > 0 {
            m.serialize_entry("replayed", &self.replayed)?;
        }
        if self.durable.saturating_add(1) < self.seq {
            m.serialize_entry("durable", &self.durable)?;
        }
        m.end()
    }
}

/// Encodes a record with its frame and trailing newline.
pub fn encode(rec: &Record) -> Vec<u8> {
    // Serializing plain data into memory cannot fail.
    let json = serde_json::to_vec(rec).unwrap_or_default();
    let crc = crc32fast::hash(&json);
    let mut out = Vec::with_capacity(json.len() + FRAME + 1);
    out.extend_from_slice(format!("#{:08x} {:08x} ", json.len(), crc).as_bytes());
    out.extend_from_slice(&json);
    out.push(b'\n');
    out
}

/// The number of the first record of a journal's body (what follows its header), read from
/// the record's first bytes (`#LLLLLLLL CCCCCCCC {"seq":N,`) without checking it: `None`
/// when no record starts there.
pub fn first_seq(body: &[u8]) -> Option<u64> {
    let head = body.get(..FRAME)?;
    if head[0] != b'#' || head[9] != b' ' || head[18] != b' ' {
        return None;
    }
    let rest = body[FRAME..].strip_prefix(b"{\"seq\":")?;
    let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    std::str::from_utf8(&rest[..n]).ok()?.parse().ok()
}

fn hex8(b: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(b).ok()?;
    if s.len() != 8 || !s.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(s, 16).ok()
}

/// The JSON of a well-framed record with a good checksum at `pos`, and where it ends.
fn frame_at(buf: &[u8], pos: usize) -> Option<(&[u8], usize)> {
    let head = buf.get(pos..pos + FRAME)?;
    if head[0] != b'#' || head[9] != b' ' || head[18] != b' ' {
        return None;
    }
    let len = hex8(&head[1..9])? as usize;
    let crc = hex8(&head[10..18])?;
    let start = pos + FRAME;
    let json = buf.get(start..start + len)?;
    if buf.get(start + len) != Some(&b'\n') || crc32fast::hash(json) != crc {
        return None;
    }
    Some((json, start + len + 1))
}

/// The frame of a record: `#`, length, checksum and the separators.
pub const FRAME_LEN: usize = FRAME;

/// What a scan of journal bytes found.
#[derive(Debug, Default)]
pub struct Scan {
    pub records: Vec<Record>,
    /// Bytes of good records, from the start of the scanned slice.
    pub valid_len: usize,
    /// Bytes after `valid_len` up to the last one that is not zero: a torn tail (or the
    /// unfinished sync of a power cut) that the next write clears first. Zeros after it are
    /// space reserved for records.
    pub torn: usize,
    /// Where the last good record starts, from the start of the scanned slice.
    pub last: Option<usize>,
    /// Where each good record ends, from the start of the scanned slice.
    pub ends: Vec<usize>,
}

/// Scans records in `buf` (which starts at a record boundary, after the header). `before`
/// is the number of the record just before `buf` when the caller knows it (what the state
/// it stands at was read up to); it decides a bad record with no good one before it in
/// `buf`.
pub fn scan(buf: &[u8], path: &Path, base: u64, before: Option<u64>) -> Result<Scan> {
    let mut out = Scan::default();
    let mut pos = 0;
    while let Some((json, end)) = frame_at(buf, pos) {
        out.records.push(parse(json, path, base + pos as u64)?);
        out.last = Some(pos);
        out.ends.push(end);
        pos = end;
    }
    out.valid_len = pos;
    out.torn = nonzero_len(&buf[pos..]);
    if out.torn > 0 {
        let missing = out
            .records
            .last()
            .map(|r| r.seq.saturating_add(1))
            .or(before.map(|b| b.saturating_add(1)));
        unsynced_or_corrupt(&buf[pos..pos + out.torn], missing, path, base + pos as u64)?;
    }
    Ok(out)
}

fn parse(json: &[u8], path: &Path, at: u64) -> Result<Record> {
    std::str::from_utf8(json)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(t).map_err(|e| e.to_string()))
        .map_err(|e| {
            Error::corrupt(
                path,
                format!("record at byte {at} has a good checksum but is not a record: {e}"),
            )
        })
}

/// The length of `buf` without its trailing zeros.
fn nonzero_len(buf: &[u8]) -> usize {
    const STEP: usize = 64;
    let mut end = buf.len();
    // Whole blocks of zeros first: the reserved space is read by every load.
    while end >= STEP && buf[end - STEP..end].iter().fold(0, |a, &b| a | b) == 0 {
        end -= STEP;
    }
    buf[..end].iter().rposition(|&b| b != 0).map_or(0, |p| p + 1)
}

/// `bad` starts with a record that is not good. Fine when no good record follows it (a torn
/// tail), or when every one that does was written while the missing record `missing` was
/// not yet durable (a power cut kept later sectors of an unfinished sync and lost earlier
/// ones; none of them was committed). Otherwise a committed record is damaged: `corrupt`.
fn unsynced_or_corrupt(bad: &[u8], missing: Option<u64>, path: &Path, base: u64) -> Result<()> {
    // A record starts after a newline, or after zeros a power cut left unwritten.
    let starts = (1..bad.len()).filter(|&j| bad[j] == b'#' && matches!(bad[j - 1], b'\n' | 0));
    for j in starts {
        let Some((json, _)) = frame_at(bad, j) else {
            continue;
        };
        let later = parse(json, path, base + j as u64).ok();
        let unsynced = later.is_some_and(|r| match missing {
            Some(m) => r.seq > m && r.durable < m,
            None => r.durable.saturating_add(1) < r.seq,
        });
        if !unsynced {
            return Err(Error::corrupt(
                path,
                format!("garbled record at byte {base} followed by good records"),
            ));
        }
    }
    Ok(())
}

/// How the start of a journal file stands.
#[derive(Debug, PartialEq, Eq)]
pub enum Head {
    /// The full header is there; records start at `HEADER.len()`.
    Good,
    /// Empty, or a torn prefix of the header (a crash while creating it).
    Missing,
}

pub fn check_header(buf: &[u8], path: &Path) -> Result<Head> {
    if buf.len() >= HEADER.len() {
        if buf.starts_with(HEADER) {
            return Ok(Head::Good);
        }
        if buf.starts_with(PREFIX) {
            let line = buf.split(|&c| c == b'\n').next().unwrap_or_default();
            return Err(Error::corrupt(
                path,
                format!(
                    "journal format {:?} is not supported by this claimdag (it reads format 1)",
                    String::from_utf8_lossy(&line[PREFIX.len()..])
                ),
            ));
        }
        return Err(Error::corrupt(path, "not a claimdag journal (bad header)"));
    }
    if HEADER.starts_with(buf) {
        Ok(Head::Missing)
    } else {
        Err(Error::corrupt(path, "not a claimdag journal (bad header)"))
    }
}

/// Reads the complete lines of a side file; a torn last line (no newline) is ignored and a
/// garbled complete line is corruption.
pub fn parse_lines<T: serde::de::DeserializeOwned>(buf: &[u8], path: &Path) -> Result<Vec<T>> {
    let complete = match buf.iter().rposition(|&c| c == b'\n') {
        Some(p) => &buf[..=p],
        None => &buf[..0],
    };
    complete
        .split(|&c| c == b'\n')
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(n, line)| {
            serde_json::from_slice(line)
                .map_err(|e| Error::corrupt(path, format!("line {} is garbled: {e}", n + 1)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(seq: u64, durable: u64) -> Vec<u8> {
        encode(&Record {
            seq,
            at: 1000 + seq,
            change: Change::default(),
            replayed: 0,
            durable,
        })
    }

    fn scan_of(buf: &[u8], before: Option<u64>) -> Result<Scan> {
        scan(buf, Path::new("journal"), 19, before)
    }

    fn seqs(s: &Scan) -> Vec<u64> {
        s.records.iter().map(|r| r.seq).collect()
    }

    #[test]
    fn durable_is_written_only_when_earlier_records_were_unsynced() {
        let plain = rec(5, 4);
        assert!(!String::from_utf8_lossy(&plain).contains("durable"));
        let lagging = rec(5, 2);
        assert!(String::from_utf8_lossy(&lagging).contains("\"durable\":2"));
        let read = scan_of(&[plain, lagging].concat(), None).unwrap();
        assert_eq!(
            read.records.iter().map(|r| r.durable).collect::<Vec<_>>(),
            [4, 2]
        );
    }

    #[test]
    fn the_reserve_of_zeros_is_the_end() {
        let mut buf = [rec(1, 0), rec(2, 1)].concat();
        let used = buf.len();
        buf.resize(used + 70_000, 0);
        let s = scan_of(&buf, Some(0)).unwrap();
        assert_eq!((seqs(&s), s.valid_len, s.torn), (vec![1, 2], used, 0));
    }

    #[test]
    fn a_torn_record_before_the_reserve_is_dropped_and_marked() {
        let good = rec(1, 0);
        let next = rec(2, 1);
        let mut buf = [good.clone(), next[..next.len() / 2].to_vec()].concat();
        buf.resize(buf.len() + 4096, 0);
        let s = scan_of(&buf, Some(0)).unwrap();
        assert_eq!((seqs(&s), s.valid_len), (vec![1], good.len()));
        assert_eq!(s.torn, next.len() / 2);
    }

    #[test]
    fn a_garbled_record_before_a_good_one_is_corrupt() {
        let mut bad = rec(2, 1);
        bad[30] ^= 0x20;
        let buf = [rec(1, 0), bad, rec(3, 2)].concat();
        let e = scan_of(&buf, Some(0)).unwrap_err().to_string();
        assert!(e.contains("garbled record"), "{e}");
    }

    /// Record 2 was lost by a power cut and record 3, of the same unfinished sync, kept.
    fn hole_then(later: Vec<u8>) -> Vec<u8> {
        let lost = rec(2, 1).len();
        let mut buf = [rec(1, 0), vec![0; lost], later].concat();
        buf.resize(buf.len() + 512, 0);
        buf
    }

    #[test]
    fn a_lost_record_of_an_unfinished_sync_drops_the_rest_of_it() {
        let s = scan_of(&hole_then(rec(3, 1)), Some(0)).unwrap();
        assert_eq!(seqs(&s), [1]);
        assert_eq!(s.valid_len, rec(1, 0).len());
        assert!(s.torn > 0, "what follows is cleared by the next write");
    }

    #[test]
    fn a_lost_record_that_was_synced_is_corrupt() {
        // Record 3 was written after record 2 was durable: record 2 was committed.
        for later in [rec(3, 2), rec(2, 1)] {
            let e = scan_of(&hole_then(later), Some(0)).unwrap_err().to_string();
            assert!(e.contains("garbled record"), "{e}");
        }
    }

    #[test]
    fn a_lost_first_record_is_judged_by_what_was_read_before() {
        let lost = rec(8, 7).len();
        let buf = [vec![0; lost], rec(9, 7)].concat();
        assert_eq!(seqs(&scan_of(&buf, Some(7)).unwrap()), Vec::<u64>::new());
        assert!(scan_of(&buf, Some(6)).is_err(), "record 7 was durable");
        let buf = [vec![0; lost], rec(9, 8)].concat();
        assert!(scan_of(&buf, Some(7)).is_err(), "record 8 was durable");
        assert!(scan_of(&buf, None).is_err(), "an untagged record");
    }
}
