//! `claimdag.Watch`: the history as it is written, as an iterator (`Store.watch`). Each
//! step waits with the GIL released (in pieces, so Ctrl-C interrupts it) until a write of
//! any process is committed, then yields its events one by one.

use crate::error::detach_waiting;
use crate::types::Event;
use claimdag::model::HistoryLine;
use claimdag::store::HistoryCursor;
use pyo3::prelude::*;
use std::collections::VecDeque;
use std::sync::Mutex;

/// What the iterator has read: where it is in the history (each step reads only what was
/// written since), and events read but not yet yielded.
struct Position {
    cursor: HistoryCursor,
    pending: VecDeque<HistoryLine>,
}

/// An iterator over the store's events as they are committed (`Store.watch`): each `next`
/// blocks, with the GIL released, until there is an event after the last one yielded. With
/// a `timeout`, iteration ends when nothing is written for that long.
#[pyclass(frozen, module = "claimdag._claimdag")]
pub struct Watch {
    core: claimdag::Store,
    timeout_ms: Option<u64>,
    position: Mutex<Position>,
}

impl Watch {
    pub fn new(core: claimdag::Store, at: u64, timeout_ms: Option<u64>) -> Watch {
        Watch {
            core,
            timeout_ms,
            position: Mutex::new(Position {
                cursor: HistoryCursor::after_write(at),
                pending: VecDeque::new(),
            }),
        }
    }

    fn pop(&self) -> Option<Event> {
        let mut p = self.position.lock().ok()?;
        p.pending.pop_front().map(Event)
    }
}

#[pymethods]
impl Watch {
    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Event>> {
        if let Some(e) = self.pop() {
            return Ok(Some(e));
        }
        let start = self.position.lock().map(|p| p.cursor).unwrap_or_default();
        let core = &self.core;
        let wait_ms = self.timeout_ms.unwrap_or(u64::MAX / 4);
        let mut cursor = start;
        let lines = detach_waiting(py, wait_ms, |wait| {
            let lines = core.history_wait(&mut cursor, wait)?;
            Ok(Some(lines).filter(|l| !l.is_empty()))
        })?;
        let Some(lines) = lines else {
            return Ok(None);
        };
        if let Ok(mut p) = self.position.lock() {
            // Another thread's step may have moved on meanwhile: keep what is new to it.
            let seen = p.cursor.position();
            p.pending
                .extend(lines.into_iter().filter(|l| (l.seq, l.i) > seen));
            if cursor.position() > seen {
                p.cursor = cursor;
            }
        }
        Ok(self.pop())
    }

    fn __repr__(&self) -> String {
        let at = self.position.lock().map(|p| p.cursor.seq()).unwrap_or(0);
        format!("Watch(after={at})")
    }
}
