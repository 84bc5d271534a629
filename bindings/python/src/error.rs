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

/// Runs `attempt` with the GIL released, given the library's wait of `wait_ms` ended by a
/// signal: the wait looks every `claimdag::STOP_EVERY` (with the GIL) whether one came, so
/// Ctrl-C interrupts a long `claim_next(wait=...)` or `watch()` and raises as it should.
pub fn detach_waiting<T, F>(py: Python<'_>, wait_ms: u64, attempt: F) -> PyResult<Option<T>>
where
    F: FnOnce(claimdag::Wait<'_>) -> claimdag::Result<Option<T>> + Send,
    T: Send,
{
    let signal: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);
    let stop = || {
        Python::attach(|py| match py.check_signals() {
            Ok(()) => false,
            Err(e) => {
                if let Ok(mut s) = signal.lock() {
                    *s = Some(e);
                }
                true
            }
        })
    };
    let wait = claimdag::Wait {
        up_to: std::time::Duration::from_millis(wait_ms),
        stop: Some(claimdag::Stop(&stop)),
    };
    let got = detach(py, || attempt(wait))?;
    match signal.into_inner().ok().flatten() {
        Some(e) => Err(e),
        None => Ok(got),
    }
}
