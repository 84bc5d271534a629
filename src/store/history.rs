//! Reading the history as it grows. A [`HistoryCursor`] remembers where its reader is: the
//! last line it was given, and where the backend found it (a byte offset in the embedded
//! store's history file). The next read starts there, so a follower pays for the lines
//! written since, never for the history's age: `watch`, `serve`'s streams and metrics, and
//! the Python `Watch` read this way.

use super::backend::Hint;
use super::Store;
use crate::error::Result;
use crate::model::HistoryLine;

/// Where a reader of the history is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HistoryCursor {
    /// The last line read: `(seq, i)`.
    after: (u64, u32),
    /// Where the backend found it (its own count; zeros: not known yet).
    hint: Hint,
}

impl HistoryCursor {
    /// Before the first line of the writes after write `seq` (0: the whole history).
    pub fn after_write(seq: u64) -> HistoryCursor {
        HistoryCursor {
            after: (seq, u32::MAX),
            hint: [0; 4],
        }
    }

    /// The write of the last line read (or the one the cursor started after).
    pub fn seq(&self) -> u64 {
        self.after.0
    }

    /// The last line read, `(seq, i)`.
    pub fn position(&self) -> (u64, u32) {
        self.after
    }

    /// `line` was read another way (a live copy of the history): the next read starts after
    /// it (a line at or before the cursor changes nothing).
    pub fn passed(&mut self, line: &HistoryLine) {
        self.after = self.after.max((line.seq, line.i));
    }
}

impl Store {
    /// At most `most` history lines after the cursor, oldest first; the cursor moves past
    /// them. A reader that goes on from the cursor misses nothing and never holds more than
    /// `most` lines; what it costs follows the lines read.
    pub fn history_next(&self, cur: &mut HistoryCursor, most: usize) -> Result<Vec<HistoryLine>> {
        let mut hint = cur.hint;
        let lines = self
            .backend
            .history_from(cur.after, &mut hint, most.max(1))?;
        cur.hint = hint;
        if let Some(l) = lines.last() {
            cur.after = (l.seq, l.i);
        }
        Ok(lines)
    }

    /// The history lines after the cursor (as [`Store::history_next`], all of them),
    /// waiting up to `wait` for a write when there is none yet; empty when none came.
    pub fn history_wait<'w>(
        &self,
        cur: &mut HistoryCursor,
        wait: impl Into<super::Wait<'w>>,
    ) -> Result<Vec<HistoryLine>> {
        let wait = wait.into();
        // Only a write adds history: no look when a lease runs out.
        let got = self.wait_for(wait, false, || {
            let lines = self.history_next(cur, usize::MAX)?;
            Ok(Some(lines).filter(|l| !l.is_empty()))
        })?;
        Ok(got.unwrap_or_default())
    }
}
