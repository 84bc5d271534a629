//! What people and money decide, as `Store` methods: `approve` and `reject` a gate,
//! `retry` a parked node, `renew` reporting spend (SPEC 13).

use crate::convert::{int, opt_int, opt_millis, spend_arg};
use crate::store::dur;
use crate::store::Store;
use crate::types::{CancelRequest, Node};
use claimdag::verbs;
use pyo3::prelude::*;
use pyo3::types::PyDict;

#[pymethods]
impl Store {
    /// Approves gate `node` at `gen` (it is done); returns its status, "done".
    #[pyo3(signature = (node, gen, note=None, actor=None))]
    fn approve(
        &self,
        py: Python<'_>,
        node: String,
        gen: &Bound<'_, PyAny>,
        note: Option<String>,
        actor: Option<String>,
    ) -> PyResult<String> {
        let req = verbs::Approve {
            node,
            gen: int("gen", gen, 0)?,
            note,
            actor,
        };
        Ok(self.run(py, req)?.status.to_string())
    }

    /// Rejects gate `node` at `gen` (it failed); returns its status, "failed".
    #[pyo3(signature = (node, gen, note=None, actor=None))]
    fn reject(
        &self,
        py: Python<'_>,
        node: String,
        gen: &Bound<'_, PyAny>,
        note: Option<String>,
        actor: Option<String>,
    ) -> PyResult<String> {
        let req = verbs::Reject {
            node,
            gen: int("gen", gen, 0)?,
            note,
            actor,
        };
        Ok(self.run(py, req)?.status.to_string())
    }

    /// True when nothing is ready for `role` (None: nodes of no role) and nothing pending
    /// can make a node ready (no claim, scheduled node, gate or epic that will move on):
    /// the work is done and a worker may stop; False while it should wait or claim.
    #[pyo3(signature = (role=None, workspace=None))]
    pub(crate) fn finished(
        &self,
        py: Python<'_>,
        role: Option<String>,
        workspace: Option<String>,
    ) -> PyResult<bool> {
        Ok(self.run(py, verbs::Pending { role, workspace })?.finished)
    }

    /// Gives parked `node` (out of attempts) fresh attempts at `gen`; returns its new
    /// generation.
    fn retry(&self, py: Python<'_>, node: String, gen: &Bound<'_, PyAny>) -> PyResult<u64> {
        let req = verbs::Retry {
            node,
            gen: int("gen", gen, 0)?,
        };
        Ok(self.run(py, req)?.generation)
    }

    /// Keeps `actor`'s live claim alive: the lease starts again now (with `ttl` if given).
    /// `progress`: a checkpoint to leave (at most 64 KiB), replacing the last one; the next
    /// holder receives it if this one stops. Returns the `CancelRequest` when someone asked
    /// the holder to stop (`cancel`, a deadline passed, the budget spent), else None.
    /// `usage` (`"tokens=N,cost=X"` or a dict): what this claim has spent so far, its total
    /// (a field left out keeps the last one reported); past the node's budget, the request
    /// to stop comes back in this very answer.
    #[pyo3(signature = (node, actor, gen=None, ttl=None, progress=None, usage=None))]
    #[allow(clippy::too_many_arguments)]
    fn renew(
        &self,
        py: Python<'_>,
        node: String,
        actor: String,
        gen: Option<&Bound<'_, PyAny>>,
        ttl: Option<&Bound<'_, PyAny>>,
        progress: Option<String>,
        usage: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<CancelRequest>> {
        let req = verbs::Renew {
            node,
            actor: Some(actor),
            gen: opt_int("gen", gen, 0)?,
            ttl: dur(opt_millis("ttl", ttl)?),
            progress,
            usage: spend_arg("usage", usage)?,
        };
        Ok(self.run(py, req)?.cancel_requested.map(CancelRequest))
    }
}

/// A cost in millionths as the decimal text it was given in (`"2.5"`).
fn cost(micros: u64) -> String {
    claimdag::model::decisions::format_cost(micros)
}

#[pymethods]
impl Node {
    /// A container's children (kind `epic`): a dict of `total`, `done`, `failed`,
    /// `cancelled` and `open`; None for any other node.
    #[getter]
    fn children<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(c) = self.0.node.children else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("total", c.total)?;
        d.set_item("done", c.done)?;
        d.set_item("failed", c.failed)?;
        d.set_item("cancelled", c.cancelled)?;
        d.set_item("open", c.open())?;
        Ok(Some(d))
    }
    /// Past this time (milliseconds since the Unix epoch) an unfinished node is overdue;
    /// None when it has no deadline.
    #[getter]
    fn deadline(&self) -> Option<u64> {
        self.0.node.deadline
    }
    /// True when the node is unfinished and its deadline has passed.
    #[getter]
    fn overdue(&self) -> bool {
        self.0.overdue
    }
    /// The most the node may spend: `{"tokens": int or None, "cost": str or None}` (cost
    /// as decimal text, every digit kept); None when it has no budget.
    #[getter]
    fn budget<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(b) = self.0.node.budget else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("tokens", b.tokens)?;
        d.set_item("cost", b.cost_micros.map(cost))?;
        Ok(Some(d))
    }
    /// What the node's claims reported spending, summed: `{"tokens": int, "cost": str}`.
    #[getter]
    fn spent<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("tokens", self.0.node.spent.tokens)?;
        d.set_item("cost", cost(self.0.node.spent.cost_micros))?;
        Ok(d)
    }
}
