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
