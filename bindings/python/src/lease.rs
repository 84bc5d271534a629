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

use crate::convert::json_arg;
use crate::error::{detach, detach_waiting, invalid, to_py_err};
use crate::types::{CancelRequest, Grant, Node};
use claimdag::verbs::{self, parse_finish_status, Ctx, Dur};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};
use std::sync::{Arc, Mutex};

/// The Python callbacks waiting for a cancel request, and the request once a renewal
/// learned it (the core lease runs one callback; this one calls them all).
#[derive(Default)]
struct CancelHooks {
    fired: Option<claimdag::CancelRequest>,
    callbacks: Vec<Py<PyAny>>,
}

/// Calls `cb(request)`; an exception it raises is reported as unraisable.
fn call_back(py: Python<'_>, cb: &Py<PyAny>, c: &claimdag::CancelRequest) {
    let done = Py::new(py, CancelRequest(c.clone())).and_then(|req| cb.call1(py, (req,)));
    if let Err(err) = done {
        err.write_unraisable(py, Some(cb.bind(py)));
    }
}

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
///
/// The holder talks through it: `progress(text)` leaves a checkpoint (sent with the next
/// renewal, or at once with `now=True`), `cancel_requested` (and `on_cancel`) tells that
/// someone asked the holder to stop, `inputs` are the outputs of the prerequisites, and
/// `complete(output=...)` hands an output to the dependents.
#[pyclass(frozen, module = "claimdag._claimdag")]
pub struct Lease {
    /// Shared with a `progress(now=True)` in flight, which runs without the lock held.
    inner: Mutex<Option<Arc<claimdag::Lease>>>,
    id: String,
    generation: u64,
    actor: String,
    node: Py<Node>,
    grant: Py<Grant>,
    hooks: Arc<Mutex<CancelHooks>>,
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
        on_cancel: Option<Py<PyAny>>,
    ) -> PyResult<Option<Lease>> {
        request.wait = Some(Dur::Ms(wait_ms)).filter(|_| wait_ms > 0);
        let got = detach_waiting(py, wait_ms, |wait| {
            let mut cx = Ctx::new(store, workspace)?;
            cx.stop = wait.stop;
            let who = cx.actor(request.assignee.as_deref(), "assignee")?;
            let Some(c) = verbs::reply(&cx, &request)?.into_first() else {
                return Ok(None);
            };
            let lease = claimdag::Lease::hold(store.clone(), c.id, c.generation, who, ttl_ms);
            let view = store.get(c.id)?;
            Ok(Some((lease, view, c)))
        })?;
        let Some((lease, view, granted)) = got else {
            return Ok(None);
        };
        let hooks = Arc::new(Mutex::new(CancelHooks::default()));
        if let Some(cb) = on_cancel {
            if let Ok(mut h) = hooks.lock() {
                h.callbacks.push(cb);
            }
        }
        let h2 = hooks.clone();
        lease.on_cancel(move |c| {
            let callbacks = match h2.lock() {
                Ok(mut h) => {
                    h.fired = Some(c.clone());
                    std::mem::take(&mut h.callbacks)
                }
                Err(_) => Vec::new(),
            };
            if !callbacks.is_empty() {
                Python::attach(|py| {
                    for cb in &callbacks {
                        call_back(py, cb, c);
                    }
                });
            }
        });
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
            inner: Mutex::new(Some(Arc::new(lease))),
            node: Py::new(py, Node(view))?,
            grant: Py::new(py, Grant(granted))?,
            hooks,
            on_error,
            lost_at_end: Mutex::new(None),
        }))
    }

    fn take(&self) -> Option<Arc<claimdag::Lease>> {
        self.inner.lock().ok().and_then(|mut i| i.take())
    }

    /// The live inner lease, shared, without keeping the lock.
    fn live(&self) -> Option<Arc<claimdag::Lease>> {
        self.inner.lock().ok().and_then(|i| i.clone())
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
        output: Option<serde_json::Value>,
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
        let inner = &self.inner;
        detach(py, move || {
            let mut lease = sole(lease);
            let done = match status {
                Some(st) => {
                    let done = lease.try_complete(st, note.as_deref(), output);
                    // Refused while the claim is still held (an output too large): the lease
                    // renews on, and may be completed again.
                    if !lease.is_finished() {
                        if let Ok(mut slot) = inner.lock() {
                            *slot = Some(Arc::new(lease));
                        }
                    }
                    done
                }
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

    /// What the claim handed over: the last checkpoint an earlier holder left and the
    /// outputs of the prerequisites.
    #[getter]
    fn grant(&self, py: Python<'_>) -> Py<Grant> {
        self.grant.clone_ref(py)
    }
    /// `{prerequisite id: its output}` for every prerequisite that was done when the claim
    /// was granted (None for one that gave no output).
    #[getter]
    fn inputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.grant.get().inputs(py)
    }
    /// The request that this holder stop, once a renewal learned of one (None before):
    /// stop, and complete the node "cancelled" (or finish it).
    #[getter]
    fn cancel_requested(&self) -> Option<CancelRequest> {
        let live = self.live().and_then(|l| l.cancel_requested());
        live.or_else(|| self.hooks.lock().ok().and_then(|h| h.fired.clone()))
            .map(CancelRequest)
    }

    /// Leaves a checkpoint (at most 64 KiB): the next holder receives it if this one stops.
    /// It is sent with the next renewal (a later one replaces it if none was sent
    /// meanwhile), and returns None; with `now=True` the claim is renewed with it at once,
    /// and the cancel request made of the holder (or None) is returned. A text over 64 KiB
    /// or with a NUL raises InvalidInput at once and is not queued; any other refused
    /// renewal raises, and the lease is lost.
    #[pyo3(signature = (text, now=false))]
    fn progress(&self, py: Python<'_>, text: String, now: bool) -> PyResult<Option<CancelRequest>> {
        let Some(lease) = self.live() else {
            return Err(invalid(py, "this lease was completed or released already"));
        };
        if !now {
            lease.progress(&text).map_err(|e| to_py_err(py, e))?;
            return Ok(None);
        }
        Ok(detach(py, move || lease.progress_now(&text))?.map(CancelRequest))
    }

    /// Reports what this claim has spent so far (`"tokens=N,cost=X"` or a dict; its total, a
    /// field left out keeping the last one reported), sent with the next renewal; with
    /// `now=True` the claim is renewed with it at once, and the request to stop (past the
    /// node's budget) is returned.
    #[pyo3(signature = (spent, now=false))]
    fn usage(
        &self,
        py: Python<'_>,
        spent: &Bound<'_, PyAny>,
        now: bool,
    ) -> PyResult<Option<CancelRequest>> {
        let Some(lease) = self.live() else {
            return Err(invalid(py, "this lease was completed or released already"));
        };
        let text = crate::convert::spend_arg("usage", Some(spent))?.unwrap_or_default();
        let report = claimdag::model::Usage::parse("usage", &text).map_err(|e| to_py_err(py, e))?;
        if !now {
            lease.usage(report);
            return Ok(None);
        }
        Ok(detach(py, move || lease.usage_now(report))?.map(CancelRequest))
    }

    /// Calls `callback(request)` (on the renewal thread) when a renewal learns that someone
    /// asked the holder to stop; at once if one already did.
    fn on_cancel(&self, py: Python<'_>, callback: Py<PyAny>) {
        let fired = match self.hooks.lock() {
            Ok(mut h) => match &h.fired {
                Some(c) => Some(c.clone()),
                None => {
                    h.callbacks.push(callback.clone_ref(py));
                    None
                }
            },
            Err(_) => None,
        };
        if let Some(c) = fired {
            call_back(py, &callback, &c);
        }
    }

    /// Finishes the node with `status` ("done", "failed" or "cancelled") at the granted
    /// generation. `output`: what it produced, any value `json.dumps` takes (at most 64
    /// KiB as JSON), handed to its dependents as an input. A lost lease is refused
    /// (`StaleGeneration`) and changes nothing. A completion refused while the claim is
    /// still held (`InvalidInput`: an output too large) leaves the lease held and
    /// renewing: complete it again.
    #[pyo3(signature = (status="done", note=None, output=None))]
    fn complete(
        &self,
        py: Python<'_>,
        status: &str,
        note: Option<String>,
        output: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let output = output
            .filter(|o| !o.is_none())
            .map(|o| json_arg("output", o))
            .transpose()?;
        self.finish(py, Some(status), note, output, None)
    }

    /// Hands the claim back at the granted generation, for another attempt. `retry_in`
    /// (seconds or a timedelta): not granted again for that long (the node displays
    /// `scheduled`), in place of the store's `retry_delay` backoff.
    #[pyo3(signature = (retry_in=None))]
    fn release(&self, py: Python<'_>, retry_in: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let retry_in_ms = crate::convert::opt_millis("retry_in", retry_in)?;
        self.finish(py, None, None, None, retry_in_ms)
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
            (false, _) => self.finish(py, Some("done"), None, None, None),
            (true, OnError::Failed) => self.finish(py, Some("failed"), None, None, None),
            (true, OnError::Release) => self.finish(py, None, None, None, None),
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

/// The inner lease alone: waits for a `progress(now=True)` in flight to let go of it.
fn sole(mut lease: Arc<claimdag::Lease>) -> claimdag::Lease {
    loop {
        match Arc::try_unwrap(lease) {
            Ok(l) => return l,
            Err(shared) => {
                lease = shared;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
    }
}

/// `with store.lease_next(...) as lease:` — enters as the lease, or None when nothing is
/// ready (the block then runs with `lease` None and leaving it does nothing).
#[pyclass(module = "claimdag._claimdag")]
pub struct LeaseNext {
    pub lease: Option<Py<Lease>>,
    /// No lease, and nothing left to wait for (see `Store.finished`).
    pub finished: bool,
}

#[pymethods]
impl LeaseNext {
    /// True when no node was ready and none can become ready (no claim, scheduled node,
    /// gate or epic is pending for the role): the work is done, a worker may stop. False
    /// with a lease, or when something pending may still make a node ready: wait.
    #[getter]
    fn finished(&self) -> bool {
        self.finished
    }

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
        count: None,
        workspace,
    }
}
