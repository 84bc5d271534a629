//! The journal: an append-only file of checksummed records, one per committed write.
//!
//! ```text
//! claimdag-journal 1\n                      header
//! #<len:8 hex> <crc32:8 hex> <json>\n       one record; len counts the JSON bytes
//! ```
//!
//! A record that fails its framing or checksum at the end of the file is a torn tail left
//! by a crash (never committed: the writer had not returned) and is dropped. A bad record
//! followed by a good one is corruption, never skipped.

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
    /// Bytes after `valid_len` that are a torn tail.
    pub torn: usize,
    /// Where the last good record starts, from the start of the scanned slice.
    pub last: Option<usize>,
    /// Where each good record ends, from the start of the scanned slice.
    pub ends: Vec<usize>,
}

/// Scans records in `buf` (which starts at a record boundary, after the header).
pub fn scan(buf: &[u8], path: &Path, base: u64) -> Result<Scan> {
    let mut out = Scan::default();
    let mut pos = 0;
    while pos < buf.len() {
        match frame_at(buf, pos) {
            Some((json, end)) => {
                let rec: Record = std::str::from_utf8(json)
                    .map_err(|e| e.to_string())
                    .and_then(|t| serde_json::from_str(t).map_err(|e| e.to_string()))
                    .map_err(|e| {
                        Error::corrupt(
                            path,
                            format!(
                                "record at byte {} has a good checksum but is not a record: {e}",
                                base + pos as u64
                            ),
                        )
                    })?;
                out.records.push(rec);
                out.last = Some(pos);
                out.ends.push(end);
                pos = end;
            }
            None => {
                let later = (pos + 1..buf.len())
                    .filter(|&j| buf[j] == b'#' && buf[j - 1] == b'\n')
                    .any(|j| frame_at(buf, j).is_some());
                if later {
                    return Err(Error::corrupt(
                        path,
                        format!(
                            "garbled record at byte {} followed by good records",
                            base + pos as u64
                        ),
                    ));
                }
                out.torn = buf.len() - pos;
                break;
            }
        }
    }
    out.valid_len = pos;
    Ok(out)
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

/// Reads history lines; a torn last line (no newline) is ignored, a garbled complete line is
/// corruption, and lines already read (a compaction retried after a crash writes them again)
/// are skipped: lines are kept in strictly increasing (record, index) order.
pub fn parse_history(buf: &[u8], path: &Path) -> Result<Vec<HistoryLine>> {
    let mut out: Vec<HistoryLine> = Vec::new();
    let mut last: Option<(u64, u32)> = None;
    for h in parse_lines::<HistoryLine>(buf, path)? {
        if last.is_none_or(|l| (h.seq, h.i) > l) {
            last = Some((h.seq, h.i));
            out.push(h);
        }
    }
    Ok(out)
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
