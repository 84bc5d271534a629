//! The one place a [`claimdag::Error`] becomes a Python exception, and the helper every
//! blocking call goes through: GIL released, panics caught as `internal`.
//!
//! The classes are built in `claimdag/exceptions.py` from the core's table of codes (the
//! module's `CODES`), so `StoreIOError` can also be an `OSError` and `InvalidInput` a
//! `ValueError`; `BY_CODE` there maps each stable code (docs/reference.md, "Exit codes and errors") to its class.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;
use std::panic::{catch_unwind, AssertUnwindSafe};

static BY_CODE: PyOnceLock<Py<PyDict>> = PyOnceLock::new();

/// The exception class for `code`, from `claimdag.exceptions.BY_CODE`.
fn class_for<'py>(py: Python<'py>, code: &str) -> PyResult<Bound<'py, PyAny>> {
    let table = BY_CODE.get_or_try_init(py, || -> PyResult<Py<PyDict>> {
        let module = py.import("claimdag.exceptions")?;
        Ok(module.getattr("BY_CODE")?.cast_into::<PyDict>()?.unbind())
    })?;
    table
        .bind(py)
        .get_item(code)?
        .ok_or_else(|| PyRuntimeError::new_err(format!("no exception class for code {code:?}")))
}

/// Maps a core error to its `ClaimdagError` subclass, with `.node`, `.holder`,
/// `.generation` and `.path` set from the error's context (None when absent). An `io`
/// error also carries `errno`, `strerror` and `filename` like any `OSError`.
pub fn to_py_err(py: Python<'_>, err: claimdag::Error) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let class = class_for(py, err.code().as_str())?;
        let exc = match &err {
            claimdag::Error::Io {
                path,
                message,
                errno: Some(errno),
            } => class.call1((*errno, message.as_str(), path.display().to_string()))?,
            _ => class.call1((err.to_string(),))?,
        };
        exc.setattr("node", err.node().map(|n| n.hex()))?;
        exc.setattr("holder", err.holder().map(|h| h.hex()))?;
        exc.setattr("generation", err.generation())?;
        exc.setattr("path", err.path().map(|p| p.display().to_string()))?;
        exc.setattr(
            "held",
            err.held()
                .map(|h| h.iter().map(|i| i.hex()).collect::<Vec<_>>()),
        )?;
        let body = claimdag::verbs::error_body(&err);
        exc.setattr("body", crate::json::json_to_py(py, &body)?)?;
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|e| e)
}

/// Runs `f` with the GIL released. A panic inside becomes `claimdag.InternalError` rather
/// than a `PanicException` that `except Exception` would not catch.
pub fn detach<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    F: FnOnce() -> claimdag::Result<T> + Send,
    T: Send,
{
    py.detach(move || {
        catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_string());
            Err(claimdag::Error::Internal(what))
        })
    })
    .map_err(|e| to_py_err(py, e))
}

/// An `invalid_input` error for a bad argument, as the core would report it.
pub fn invalid(py: Python<'_>, message: impl Into<String>) -> PyErr {
    to_py_err(py, claimdag::Error::invalid(message))
}

/// The longest piece of a wait run with the GIL released: between pieces the wait checks
/// for signals, so Ctrl-C interrupts a long `claim_next(wait=...)` or `watch()`.
const WAIT_PIECE: std::time::Duration = std::time::Duration::from_millis(500);

/// Runs `attempt` with the GIL released until it answers something or `wait_ms` runs out;
/// `attempt` is given the milliseconds it may wait itself (never more than half a second:
/// signals are checked in between, with the GIL held). Tried at least once (with 0 when
/// `wait_ms` is 0); `None` when the wait ran out with nothing.
pub fn detach_waiting<T, F>(py: Python<'_>, wait_ms: u64, mut attempt: F) -> PyResult<Option<T>>
where
    F: FnMut(u64) -> claimdag::Result<Option<T>> + Send,
    T: Send,
{
    let start = std::time::Instant::now();
    let end = start
        .checked_add(std::time::Duration::from_millis(wait_ms))
        .ok_or_else(|| {
            invalid(
                py,
                format!("wait of {wait_ms} ms is too long for the clock"),
            )
        })?;
    loop {
        let left = end.saturating_duration_since(std::time::Instant::now());
        let piece = left.min(WAIT_PIECE);
        // Rounded up: a last fraction of a millisecond is waited, not spun through.
        let piece_ms = u64::try_from(piece.as_micros().div_ceil(1000)).unwrap_or(u64::MAX);
        if let Some(got) = detach(py, || attempt(piece_ms))? {
            return Ok(Some(got));
        }
        if std::time::Instant::now() >= end {
            return Ok(None);
        }
        py.check_signals()?;
    }
}
