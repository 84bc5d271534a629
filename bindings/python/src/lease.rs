//! `claimdag.Lease`: a claim that renews itself (the core's [`claimdag::Lease`], renewing on
//! its own thread, so nothing here holds the GIL or blocks an event loop while it waits),
//! used as a context manager:
//!
//! ```python
//! with store.lease_next(me, ttl=60) as lease:   # None when nothing is ready
//!     ...                                       # the work; the lease renews itself
//! ```
//!
//! Leaving the block completes the node `done` at the granted generation (unless the block
//! completed or released it already, or the lease was lost); an exception completes it
//! `failed`, or releases it for another attempt with `on_error="release"`, and propagates.

use crate::error::{detach, detach_waiting, invalid, to_py_err};
use crate::types::Node;
use claimdag::verbs::{self, parse_finish_status, Ctx, Dur, Verb};
use pyo3::prelude::*;
use pyo3::types::PyType;
use std::sync::Mutex;

/// What to do with the node when the block raises.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    Failed,
    Release,
}

impl OnError {
    pub fn parse(py: Python<'_>, text: &str) -> PyResult<OnError> {
        match text {
            "failed" => Ok(OnError::Failed),
            "release" => Ok(OnError::Release),
            _ => Err(invalid(
                py,
                format!("on_error must be \"failed\" or \"release\", got {text:?}"),
            )),
        }
    }
}

/// A live claim held for you: renewed about every third of its ttl with the generation it
/// was granted, finished with that generation. `lost` turns true (and `on_lost` is called
/// with the refusal) once the store refuses a renew or none succeeded for a whole ttl: the
/// node is someone else's now, and the work done under the lease must be dropped. `lost`
/// also turns true when finishing the lease is refused because the claim is gone
/// (`StaleGeneration`, ...), whether or not a renewal had noticed it first.
#[pyclass(frozen, module = "claimdag._claimdag")]
pub struct Lease {
    inner: Mutex<Option<claimdag::Lease>>,
    id: String,
    generation: u64,
    actor: String,
    node: Py<Node>,
    on_error: OnError,
    /// Set when the lease was finished (or lost) and the inner lease is gone.
    lost_at_end: Mutex<Option<bool>>,
}

impl Lease {
    /// Claims through `request` (`claim_next`), waiting up to `wait_ms` for a node to
    /// become ready, and holds the claim; `None` when nothing is ready by then.
    #[allow(clippy::too_many_arguments)]
    pub fn next(
        py: Python<'_>,
        store: &claimdag::Store,
        workspace: &str,
        mut request: verbs::ClaimNext,
        ttl_ms: u64,
        wait_ms: u64,
        on_error: OnError,
        on_lost: Option<Py<PyAny>>,
    ) -> PyResult<Option<Lease>> {
        let got = detach_waiting(py, wait_ms, |piece| {
            let cx = Ctx::new(store, workspace)?;
            let who = cx.actor(request.assignee.as_deref(), "assignee")?;
            request.wait = Some(Dur::Ms(piece)).filter(|_| piece > 0);
            let Some(c) = request.run(&cx)?.0 else {
                return Ok(None);
            };
            let lease = claimdag::Lease::hold(store.clone(), c.id, c.generation, who, ttl_ms);
            let view = store.get(c.id)?;
            Ok(Some((lease, view)))
        })?;
        let Some((lease, view)) = got else {
            return Ok(None);
        };
        if let Some(cb) = on_lost {
            lease.on_lost(move |e| {
                let e = e.clone();
                Python::attach(|py| {
                    let exc = to_py_err(py, e);
                    if let Err(err) = cb.call1(py, (exc.value(py),)) {
                        err.write_unraisable(py, Some(cb.bind(py)));
                    }
                });
            });
        }
        Ok(Some(Lease {
            id: lease.id().hex(),
            generation: lease.generation(),
            actor: lease.actor().hex(),
            inner: Mutex::new(Some(lease)),
            node: Py::new(py, Node(view))?,
            on_error,
            lost_at_end: Mutex::new(None),
        }))
    }

    fn take(&self) -> Option<claimdag::Lease> {
        self.inner.lock().ok().and_then(|mut i| i.take())
    }

    fn is_lost(&self) -> bool {
        match self
            .inner
            .lock()
            .ok()
            .and_then(|i| i.as_ref().map(|l| l.is_lost()))
        {
            Some(lost) => lost,
            None => self
                .lost_at_end
                .lock()
                .ok()
                .and_then(|l| *l)
                .unwrap_or(false),
        }
    }

    /// Finishes with `status` (or releases, for `None`, not granted again for `retry_in_ms`
    /// when given) unless finished already.
    fn finish(
        &self,
        py: Python<'_>,
        status: Option<&str>,
        note: Option<String>,
        retry_in_ms: Option<u64>,
    ) -> PyResult<()> {
        let status = status
            .map(parse_finish_status)
            .transpose()
            .map_err(|e| to_py_err(py, e))?;
        let Some(lease) = self.take() else {
            return Err(invalid(py, "this lease was completed or released already"));
        };
        let lost_at_end = &self.lost_at_end;
        if let Ok(mut l) = lost_at_end.lock() {
            *l = Some(lease.is_lost());
        }
        detach(py, move || {
            let done = match status {
                Some(st) => lease.complete(st, note.as_deref()),
                None => match retry_in_ms {
                    Some(ms) => lease.release_retry_in(ms).map(|_| ()),
                    None => lease.release().map(|_| ()),
                },
            };
            // Refused because the claim is gone (a stale generation...): the lease is lost,
            // even if its renewal had not noticed yet.
            if done.as_ref().is_err_and(claimdag::Lease::lost_by) {
                if let Ok(mut l) = lost_at_end.lock() {
                    *l = Some(true);
                }
            }
            done
        })
    }
}

#[pymethods]
impl Lease {
    /// The node's id.
    #[getter]
    fn id(&self) -> &str {
        &self.id
    }
    /// The generation the claim was granted: the fencing token the lease finishes with.
    #[getter]
    fn generation(&self) -> u64 {
        self.generation
    }
    #[getter]
    fn actor(&self) -> &str {
        &self.actor
    }
    /// The node as it was when it was claimed.
    #[getter]
    fn node(&self, py: Python<'_>) -> Py<Node> {
        self.node.clone_ref(py)
    }
    /// True once the lease was lost: drop the work done under it.
    #[getter]
    fn lost(&self) -> bool {
        self.is_lost()
    }
    /// True once the lease was completed or released.
    #[getter]
    fn finished(&self) -> bool {
        self.inner.lock().map(|i| i.is_none()).unwrap_or(true)
    }

    /// Finishes the node with `status` ("done", "failed" or "cancelled") at the granted
    /// generation. A lost lease is refused (`StaleGeneration`) and changes nothing.
    #[pyo3(signature = (status="done", note=None))]
    fn complete(&self, py: Python<'_>, status: &str, note: Option<String>) -> PyResult<()> {
        self.finish(py, Some(status), note, None)
    }

    /// Hands the claim back at the granted generation, for another attempt. `retry_in`
    /// (seconds or a timedelta): not granted again for that long (the node displays
    /// `scheduled`), in place of the store's `retry_delay` backoff.
    #[pyo3(signature = (retry_in=None))]
    fn release(&self, py: Python<'_>, retry_in: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let retry_in_ms = crate::convert::opt_millis("retry_in", retry_in)?;
        self.finish(py, None, None, retry_in_ms)
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// Leaving the block: `done` on a clean exit, else `failed` or released (`on_error`);
    /// nothing for a lease finished already or lost. Never swallows the block's exception.
    #[pyo3(signature = (exc_type=None, _exc=None, _tb=None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyType>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        if self.finished() {
            return Ok(false);
        }
        if self.is_lost() {
            // Someone else has the node: nothing to finish, nothing to hand back.
            if let Some(l) = self.take() {
                if let Ok(mut end) = self.lost_at_end.lock() {
                    *end = Some(true);
                }
                detach(py, move || {
                    drop(l);
                    Ok(())
                })?;
            }
            return Ok(false);
        }
        let outcome = match (exc_type.is_some(), self.on_error) {
            (false, _) => self.finish(py, Some("done"), None, None),
            (true, OnError::Failed) => self.finish(py, Some("failed"), None, None),
            (true, OnError::Release) => self.finish(py, None, None, None),
        };
        match outcome {
            // The block's own exception wins over a failure to finish.
            Err(e) if exc_type.is_none() => Err(e),
            _ => Ok(false),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Lease(id='{}', generation={}, lost={})",
            self.id,
            self.generation,
            if self.is_lost() { "True" } else { "False" }
        )
    }
}

impl Drop for Lease {
    /// An unfinished lease that Python forgets is handed back (the core's lease does that
    /// when dropped). Its renewal thread may be waiting for the GIL to call `on_lost`, so
    /// it is joined with the GIL released.
    fn drop(&mut self) {
        if let Some(lease) = self.take() {
            Python::attach(|py| py.detach(move || drop(lease)));
        }
    }
}

/// `with store.lease_next(...) as lease:` — enters as the lease, or None when nothing is
/// ready (the block then runs with `lease` None and leaving it does nothing).
#[pyclass(module = "claimdag._claimdag")]
pub struct LeaseNext {
    pub lease: Option<Py<Lease>>,
}

#[pymethods]
impl LeaseNext {
    fn __enter__(&self, py: Python<'_>) -> Option<Py<Lease>> {
        self.lease.as_ref().map(|l| l.clone_ref(py))
    }

    #[pyo3(signature = (exc_type=None, exc=None, tb=None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyType>>,
        exc: Option<&Bound<'_, PyAny>>,
        tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        match &self.lease {
            Some(l) => l.get().__exit__(py, exc_type, exc, tb),
            None => Ok(false),
        }
    }

    /// The lease, or None when nothing was ready.
    #[getter]
    fn lease(&self, py: Python<'_>) -> Option<Py<Lease>> {
        self.lease.as_ref().map(|l| l.clone_ref(py))
    }
}

/// The lease's ttl in milliseconds, and the request that claims the next node.
pub fn claim_next_request(
    assignee: String,
    role: Option<String>,
    ttl_ms: u64,
    workspace: Option<String>,
) -> verbs::ClaimNext {
    verbs::ClaimNext {
        assignee: Some(assignee),
        role,
        ttl: Some(Dur::Ms(ttl_ms)),
        resume: false,
        wait: None,
        workspace,
    }
}
