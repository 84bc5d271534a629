//! Compaction: the journal's records move to the side files and a new snapshot replaces the
//! old one, off the write lock's path; and what `check` says when that keeps failing.

use super::cache::{Compaction, Embedded, Held};
use super::segments;
use super::fault::crash;
use super::fsutil::{self, FileId, Mode};
use super::journal::{self, Head, HistoryLine};
use super::logs::{read_all, ArchiveLine};
use super::{snapshot, Tuning, ARCHIVE, COMPACT_LOCK, HISTORY, JOURNAL, LOCK, SNAPSHOT};
use crate::error::{Error, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

const HEADER_LEN: u64 = journal::HEADER.len() as u64;

impl Embedded {
    /// Compacts the store after a write, off the write lock's path: the new snapshot of
    /// this handle's state (record `seq`) is written and synced while other processes go on
    /// writing; then, briefly under the write lock, the journal's records up to `seq` move to
    /// the side files, the snapshot is renamed into place, and the journal is replaced by one
    /// holding only the records written since. Only one compaction runs at a time
    /// (`compact.lock`); one that finds the store compacted meanwhile gives up. A crash at
    /// any step leaves a store that reads the same.
    pub(super) fn compact(&mut self, dir: &Path, lock: &File, c: Compaction) -> Result<()> {
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
        if result.is_err() {
            // A new snapshot written but not renamed into place (the side files could not
            // be appended on a full disk) would hold the room the next write needs.
            let _ = std::fs::remove_file(dir.join(format!("{SNAPSHOT}.tmp")));
        }
        // The history file may have reached a segment's size; then what `history_keep` no
        // longer keeps live moves to the archive. A failure here leaves the history as it
        // was (read the same, tried again next time) and this handle's state good.
        let history = match &result {
            Ok(()) if self.lock_in_place(dir) => {
                let keep = self.state.settings.history_keep;
                segments::roll(dir, lock, c.segment_bytes, keep, c.now)
                    .and_then(|()| segments::retire(dir, lock, keep, c.now))
            }
            _ => Ok(()),
        };
        // compact.lock keeps the reason of the last failure, for `check` to report.
        match result.as_ref().err().or(history.as_ref().err()) {
            Some(e) => {
                let _ = guard.set_len(0);
                let _ = guard.write_all_at(format!("{e}\n").as_bytes(), 0);
            }
            None if guard.metadata().is_ok_and(|m| m.len() > 0) => {
                let _ = guard.set_len(0);
            }
            None => {}
        }
        result
    }

    /// What the last compaction left in `compact.lock` when it failed, if anything: the
    /// reason (`check` reports it).
    pub fn last_compaction_failure(dir: &Path) -> Option<String> {
        // Opened as every store file is: a FIFO or a link in its place is not read.
        let path = dir.join(COMPACT_LOCK);
        let f = fsutil::open_existing(&path).ok()??;
        let text = String::from_utf8(read_all(f, &path).ok()?).ok()?;
        Some(text.trim().to_string()).filter(|t| !t.is_empty())
    }

    /// Why the journal is past the compaction threshold, if it is: the store could not be
    /// compacted (`check` reports it). Uses what the last load read.
    pub fn compaction_backlog(&self, dir: &Path, tuning: &Tuning) -> Option<String> {
        let used = self.journal_end.saturating_sub(HEADER_LEN);
        let limit = self.compaction_threshold(tuning);
        if self.snap.is_none() || used <= limit {
            return None;
        }
        let reason = Embedded::last_compaction_failure(dir)
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
        if !self.lock_in_place(dir) {
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
        let scan = journal::scan(body, &jpath, HEADER_LEN, None)?;
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
                let line = HistoryLine::new(rec.seq, i as u32, event.clone());
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
        self.stand_at_journal(fsutil::open(&jpath, Mode::ReadWrite)?);
        Ok(())
    }
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
