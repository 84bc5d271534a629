//! What people decide, as `Store` methods: `approve` and `reject` a gate, `retry` a parked
//! node (SPEC 13).

use crate::convert::int;
use crate::store::Store;
use claimdag::verbs;
use pyo3::prelude::*;

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

    /// Gives parked `node` (out of attempts) fresh attempts at `gen`; returns its new
    /// generation.
    fn retry(&self, py: Python<'_>, node: String, gen: &Bound<'_, PyAny>) -> PyResult<u64> {
        let req = verbs::Retry {
            node,
            gen: int("gen", gen, 0)?,
        };
        Ok(self.run(py, req)?.generation)
    }
}
