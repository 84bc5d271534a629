//! The values a store hands back. Each is an immutable snapshot with typed attributes, a
//! readable `repr`, equality, and `to_dict()` (the same keys as the CLI's `--json`).

use crate::json::json_to_py;
use claimdag::model::json_value;
use claimdag::model::HistoryLine;
use claimdag::verbs::{CheckReport, ClaimedNode, SettingsReply};
use claimdag::{Id, NodeView};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

fn ids<'py>(py: Python<'py>, ids: &[Id]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, ids.iter().map(Id::hex))
}

/// A reply's JSON as a dict: exactly what `json.loads` gives of the CLI's `--json`.
fn dict<'py>(py: Python<'py>, value: &impl serde::Serialize) -> PyResult<Bound<'py, PyDict>> {
    let value = serde_json::to_value(value).unwrap_or_default();
    Ok(json_to_py(py, &value)?.cast_into::<PyDict>()?)
}

/// A stored output (compact JSON text) as the Python value `json.loads` gives; None for none.
pub fn output<'py>(py: Python<'py>, text: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
    match text {
        Some(t) => json_to_py(py, &json_value(t)),
        None => Ok(py.None().into_bound(py)),
    }
}

/// Python's `repr` of a string: quotes and escapes as Python writes them.
fn py_repr(py: Python<'_>, text: &str) -> PyResult<String> {
    Ok(text.into_pyobject(py)?.repr()?.to_string())
}

/// One node: every field of a node (docs/reference.md, "Nodes"; times in milliseconds since the Unix epoch), plus
/// the derived `display` word, `ready`, and `why` it is not ready.
#[pyclass(frozen, eq, module = "claimdag._claimdag")]
#[derive(PartialEq)]
pub struct Node(pub NodeView);

#[pymethods]
impl Node {
    #[getter]
    fn id(&self) -> String {
        self.0.node.id.hex()
    }
    #[getter]
    fn workspace(&self) -> &str {
        &self.0.node.workspace
    }
    #[getter]
    fn kind(&self) -> &str {
        &self.0.node.kind
    }
    #[getter]
    fn summary(&self) -> &str {
        &self.0.node.summary
    }
    #[getter]
    fn parent(&self) -> Option<String> {
        self.0.node.parent.map(|p| p.hex())
    }
    /// Hard prerequisites: satisfied when `done`.
    #[getter]
    fn deps<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        ids(py, &self.0.node.deps)
    }
    /// Soft prerequisites: satisfied when finished in any status.
    #[getter]
    fn soft_deps<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        ids(py, &self.0.node.soft_deps)
    }
    /// The stored status: todo, claimed, done, failed or cancelled.
    #[getter]
    fn status(&self) -> &'static str {
        self.0.node.status.as_str()
    }
    #[getter]
    fn generation(&self) -> u64 {
        self.0.node.generation
    }
    #[getter]
    fn holder(&self) -> Option<String> {
        self.0.node.holder.map(|h| h.hex())
    }
    /// The name the store keeps for the holder, or None.
    #[getter]
    fn holder_name(&self) -> Option<&str> {
        self.0.names.holder.as_deref()
    }
    /// The name the store keeps for `completed_by`, or None.
    #[getter]
    fn completed_by_name(&self) -> Option<&str> {
        self.0.names.completed_by.as_deref()
    }
    /// The name the store keeps for `last_holder`, or None.
    #[getter]
    fn last_holder_name(&self) -> Option<&str> {
        self.0.names.last_holder.as_deref()
    }
    #[getter]
    fn attempts(&self) -> u32 {
        self.0.node.attempts
    }
    #[getter]
    fn max_attempts(&self) -> Option<u32> {
        self.0.node.max_attempts
    }
    #[getter]
    fn claimed_at(&self) -> Option<u64> {
        self.0.node.claimed_at
    }
    #[getter]
    fn renewed_at(&self) -> Option<u64> {
        self.0.node.renewed_at
    }
    #[getter]
    fn ttl_ms(&self) -> Option<u64> {
        self.0.node.ttl_ms
    }
    #[getter]
    fn role(&self) -> &str {
        &self.0.node.role
    }
    #[getter]
    fn priority(&self) -> i64 {
        self.0.node.priority
    }
    #[getter]
    fn estimate(&self) -> u64 {
        self.0.node.estimate
    }
    #[getter]
    fn labels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.0.node.labels)
    }
    #[getter]
    fn resources<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.0.node.resources)
    }
    #[getter(r#ref)]
    fn ref_(&self) -> Option<&str> {
        self.0.node.ref_.as_deref()
    }
    #[getter]
    fn note(&self) -> Option<&str> {
        self.0.node.note.as_deref()
    }
    #[getter]
    fn completed_by(&self) -> Option<String> {
        self.0.node.completed_by.map(|a| a.hex())
    }
    /// The holder whose claim was last handed back (released, expired or reclaimed): its
    /// renew, release and complete are stale from then on.
    #[getter]
    fn last_holder(&self) -> Option<String> {
        self.0.node.last_holder.map(|a| a.hex())
    }
    #[getter]
    fn created_at(&self) -> u64 {
        self.0.node.created_at
    }
    #[getter]
    fn updated_at(&self) -> u64 {
        self.0.node.updated_at
    }
    #[getter]
    fn archived(&self) -> bool {
        self.0.node.archived
    }
    /// Not granted before this time (milliseconds since the Unix epoch), or None. A todo
    /// node ready but for it displays `scheduled`.
    #[getter]
    fn not_before(&self) -> Option<u64> {
        self.0.node.not_before
    }
    /// The last checkpoint a holder left (`renew(progress=...)`), kept across hand-backs and
    /// handed to the next holder; None when none was left (or since a reopen).
    #[getter]
    fn progress(&self) -> Option<&str> {
        self.0.node.progress.as_deref()
    }
    /// When `progress` was left (milliseconds since the Unix epoch), or None.
    #[getter]
    fn progress_at(&self) -> Option<u64> {
        self.0.node.progress_at
    }
    /// The request that the holder of this claimed node stop (`cancel`), or None.
    #[getter]
    fn cancel_requested(&self) -> Option<CancelRequest> {
        self.0.node.cancel_requested.clone().map(CancelRequest)
    }
    /// What the node produced (`complete(output=...)`), as `json.loads` gives it; None
    /// when it gave none.
    #[getter]
    fn output<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        output(py, self.0.node.output.as_deref())
    }
    /// The derived word: ready, scheduled, blocked, todo, claimed, expired, done, failed or
    /// cancelled.
    #[getter]
    fn display(&self) -> &'static str {
        self.0.display.as_str()
    }
    #[getter]
    fn ready(&self) -> bool {
        self.0.ready
    }
    /// Why a `todo` node is not ready (or is blocked); None otherwise.
    #[getter]
    fn why(&self) -> Option<&str> {
        self.0.why.as_deref()
    }

    /// Every field as a dict, with the keys of the CLI's `--json` output.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        dict(py, &self.0)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let n = &self.0.node;
        let holder = match n.holder {
            Some(h) => format!(", holder='{h}'"),
            None => String::new(),
        };
        Ok(format!(
            "Node(id='{}', display='{}', generation={}{holder}, kind='{}', summary={})",
            n.id,
            self.0.display.as_str(),
            n.generation,
            n.kind,
            py_repr(py, &n.summary)?
        ))
    }
}

/// One transition of the history: when, which verb, on which node, by whom, at which
/// generation, and a detail word (the status reached, the linked node, the setting).
#[pyclass(frozen, eq, module = "claimdag._claimdag")]
#[derive(PartialEq)]
pub struct Event(pub HistoryLine);

#[pymethods]
impl Event {
    /// The number of the committed write that recorded it.
    #[getter]
    fn seq(&self) -> u64 {
        self.0.seq
    }
    /// Its place among the events of that write.
    #[getter]
    fn i(&self) -> u32 {
        self.0.i
    }
    /// Milliseconds since the Unix epoch.
    #[getter]
    fn at(&self) -> u64 {
        self.0.event.at
    }
    #[getter]
    fn verb(&self) -> &str {
        &self.0.event.verb
    }
    #[getter]
    fn node(&self) -> Option<String> {
        self.0.event.node.map(|n| n.hex())
    }
    #[getter]
    fn actor(&self) -> Option<String> {
        self.0.event.actor.map(|a| a.hex())
    }
    /// The name the store keeps for `actor`, or None.
    #[getter]
    fn actor_name(&self) -> Option<&str> {
        self.0.actor_name.as_deref()
    }
    /// The name the store keeps for `by`, or None.
    #[getter]
    fn by_name(&self) -> Option<&str> {
        self.0.by_name.as_deref()
    }
    /// Who acted, when that was not `actor`, or None.
    #[getter]
    fn by(&self) -> Option<String> {
        self.0.event.by.map(|a| a.hex())
    }
    /// The front door the call came through (`cli`, `python`, `c`, `mcp`, `http`,
    /// `dashboard`), or None.
    #[getter]
    fn door(&self) -> Option<&str> {
        self.0.event.door.as_deref()
    }
    #[getter]
    fn generation(&self) -> Option<u64> {
        self.0.event.generation
    }
    #[getter]
    fn detail(&self) -> Option<&str> {
        self.0.event.detail.as_deref()
    }
    /// The output a completion stored, as `json.loads` gives it; None for other events.
    #[getter]
    fn output<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        output(py, self.0.event.output.as_deref())
    }

    /// The event as a dict, with the keys of the CLI's `log --json` (absent ones left out).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        dict(py, &self.0)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let e = &self.0.event;
        let mut s = format!(
            "Event(seq={}, i={}, at={}, verb={}",
            self.0.seq,
            self.0.i,
            e.at,
            py_repr(py, &e.verb)?
        );
        if let Some(n) = e.node {
            s.push_str(&format!(", node='{n}'"));
        }
        if let Some(a) = e.actor {
            s.push_str(&format!(", actor='{a}'"));
        }
        if let Some(g) = e.generation {
            s.push_str(&format!(", generation={g}"));
        }
        if let Some(d) = &e.detail {
            s.push_str(&format!(", detail={}", py_repr(py, d)?));
        }
        s.push(')');
        Ok(s)
    }
}

/// A ready node as `next` ranks it: its id, its critical path (the largest sum of
/// `estimate` along a chain of unfinished nodes waiting on it, its own included) and that
/// chain, this node first.
#[pyclass(frozen, eq, module = "claimdag._claimdag")]
#[derive(PartialEq)]
pub struct Pick(pub claimdag::Pick);

#[pymethods]
impl Pick {
    #[getter]
    fn id(&self) -> String {
        self.0.id.hex()
    }
    #[getter]
    fn critical(&self) -> u64 {
        self.0.critical
    }
    #[getter]
    fn path<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        ids(py, &self.0.path)
    }
    #[getter]
    fn summary(&self) -> &str {
        &self.0.summary
    }

    /// As the CLI's `ready --json` gives each node.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        dict(py, &self.0)
    }

    fn __repr__(&self) -> String {
        let path: Vec<String> = self.0.path.iter().map(|p| format!("'{p}'")).collect();
        let comma = if path.len() == 1 { "," } else { "" };
        format!(
            "Pick(id='{}', critical={}, path=({}{comma}))",
            self.0.id,
            self.0.critical,
            path.join(", ")
        )
    }
}

/// What `Store.check()` found: counts, and every broken invariant as a sentence.
#[pyclass(frozen, eq, module = "claimdag._claimdag")]
#[derive(PartialEq)]
pub struct Report(pub CheckReport);

#[pymethods]
impl Report {
    /// True when no invariant is broken.
    #[getter]
    fn ok(&self) -> bool {
        self.0.problems.is_empty()
    }
    #[getter]
    fn nodes(&self) -> usize {
        self.0.nodes
    }
    #[getter]
    fn archived(&self) -> usize {
        self.0.archived
    }
    #[getter]
    fn events(&self) -> usize {
        self.0.events
    }
    #[getter]
    fn problems<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.0.problems)
    }
    /// What is worth knowing but breaks nothing (a journal that could not be compacted).
    #[getter]
    fn notes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.0.notes)
    }

    /// As the CLI's `check --json` gives it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        dict(py, &self.0)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let r = &self.0;
        let problems: Vec<String> = r
            .problems
            .iter()
            .map(|p| py_repr(py, p))
            .collect::<PyResult<_>>()?;
        Ok(format!(
            "Report(ok={}, nodes={}, archived={}, events={}, problems=[{}])",
            if r.problems.is_empty() {
                "True"
            } else {
                "False"
            },
            r.nodes,
            r.archived,
            r.events,
            problems.join(", ")
        ))
    }
}

/// The settings of a store (docs/reference.md, "Nodes").
#[pyclass(frozen, eq, module = "claimdag._claimdag")]
#[derive(PartialEq)]
pub struct Settings(pub SettingsReply);

#[pymethods]
impl Settings {
    /// The lease a claim gets when it names no ttl, in milliseconds.
    #[getter]
    fn default_ttl_ms(&self) -> u64 {
        self.0.default_ttl_ms
    }
    /// Live claims one actor may hold in a workspace; 0 means no limit.
    #[getter]
    fn max_held(&self) -> u64 {
        self.0.max_held
    }
    /// The attempt cap of nodes that set none themselves; None means no cap.
    #[getter]
    fn max_attempts(&self) -> Option<u32> {
        self.0.max_attempts
    }
    /// The first backoff of a handed-back node in milliseconds, doubled with each attempt
    /// (0: a handed-back node is ready at once).
    #[getter]
    fn retry_delay_ms(&self) -> u64 {
        self.0.retry_delay_ms
    }
    /// The longest backoff, in milliseconds.
    #[getter]
    fn retry_delay_max_ms(&self) -> u64 {
        self.0.retry_delay_max_ms
    }

    /// How much history stays live: "all", a duration ("7d") or a number of events
    /// ("1000000"); older history moves to the archive, which `Store.log(all=True)` reads.
    #[getter]
    fn history_keep(&self) -> String {
        self.0.history_keep.to_string()
    }

    /// "cancel": the holder of a node past its deadline is asked to stop; "none": the node
    /// is only marked overdue.
    #[getter]
    fn deadline_action(&self) -> &str {
        &self.0.deadline_action
    }

    /// As the CLI's `config --json` gives it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        dict(py, &self.0)
    }

    fn __repr__(&self) -> String {
        let s = &self.0;
        format!(
            "Settings(default_ttl_ms={}, max_held={}, max_attempts={}, retry_delay_ms={}, \
             retry_delay_max_ms={}, history_keep={:?})",
            s.default_ttl_ms,
            s.max_held,
            s.max_attempts
                .map_or_else(|| "None".to_string(), |m| m.to_string()),
            s.retry_delay_ms,
            s.retry_delay_max_ms,
            s.history_keep.to_string()
        )
    }
}

/// A request that the holder of a claim stop (`Store.cancel` of a claimed node): who asked
/// (an actor, or None), why (or None) and when (milliseconds since the Unix epoch). The
/// holder learns it at its next renewal; it should stop and complete the node `cancelled`
/// (or finish it).
#[pyclass(frozen, eq, module = "claimdag._claimdag")]
#[derive(PartialEq)]
pub struct CancelRequest(pub claimdag::CancelRequest);

#[pymethods]
impl CancelRequest {
    #[getter]
    fn by(&self) -> Option<String> {
        self.0.by.map(|a| a.hex())
    }
    #[getter]
    fn reason(&self) -> Option<&str> {
        self.0.reason.as_deref()
    }
    #[getter]
    fn at(&self) -> u64 {
        self.0.at
    }

    /// `{"by", "reason", "at"}`, as the CLI's `--json` gives `cancel_requested`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        dict(py, &self.0)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let by = match self.0.by {
            Some(a) => format!("'{a}'"),
            None => "None".to_string(),
        };
        let reason = match &self.0.reason {
            Some(r) => py_repr(py, r)?,
            None => "None".to_string(),
        };
        Ok(format!(
            "CancelRequest(by={by}, reason={reason}, at={})",
            self.0.at
        ))
    }
}

/// A claim granted (`claim(..., details=True)`, `claim_next(..., details=True)`, a lease's
/// `grant`): the node's id and new generation (the fencing token), whether it is a claim the
/// actor already held (`resume`), the last checkpoint an earlier holder left and when, and
/// `inputs`: the output of every prerequisite that is done, by id (None for one that gave
/// none).
#[pyclass(frozen, eq, module = "claimdag._claimdag")]
#[derive(PartialEq)]
pub struct Grant(pub ClaimedNode);

#[pymethods]
impl Grant {
    #[getter]
    fn id(&self) -> String {
        self.0.id.hex()
    }
    #[getter]
    fn generation(&self) -> u64 {
        self.0.generation
    }
    #[getter]
    fn resumed(&self) -> bool {
        self.0.resumed
    }
    #[getter]
    fn progress(&self) -> Option<&str> {
        self.0.progress.as_deref()
    }
    #[getter]
    fn progress_at(&self) -> Option<u64> {
        self.0.progress_at
    }
    /// `{prerequisite id: its output}` for every prerequisite that is done (a fresh dict on
    /// each read).
    #[getter]
    pub fn inputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let map = serde_json::Value::Object(self.0.inputs.clone());
        Ok(json_to_py(py, &map)?.cast_into::<PyDict>()?)
    }

    /// As the CLI's `claim --json` gives it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        dict(py, &self.0)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let progress = match &self.0.progress {
            Some(p) => py_repr(py, p)?,
            None => "None".to_string(),
        };
        Ok(format!(
            "Grant(id='{}', generation={}, progress={progress}, inputs={})",
            self.0.id,
            self.0.generation,
            self.0.inputs.len()
        ))
    }
}
