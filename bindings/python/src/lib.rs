//! The Python module `claimdag._claimdag` (docs/python.md).
//!
//! - `store`: `Store`, one method a verb; arguments become owned Rust values first, then the
//!   core call runs with the GIL released.
//! - `types`: the value classes a store hands back (`Node`, `Event`, `Pick`, `Report`,
//!   `Settings`, `Grant`, `CancelRequest`).
//! - `error`: the one place a `claimdag::Error` becomes a Python exception.
//! - `convert`: durations, integers and plans in.
//! - `json`: JSON values out.
//! - `lease`: `Lease`, a claim that renews itself, for `with` and `async with`.
//! - `watch`: `Watch`, the history as it is written (`Store.watch`).
//!
//! The exception classes themselves live in `claimdag/exceptions.py`, built from `CODES`:
//! the core's table of error codes.

mod completions;
mod convert;
mod decisions;
mod error;
mod json;
mod lease;
mod store;
mod types;
mod watch;

use pyo3::prelude::*;

/// The actor `name:NAME` stands for: 32 hex characters (docs/reference.md, "The actor recipe"). Every argument
/// that takes an actor also takes `name:NAME`.
#[pyfunction]
fn actor(py: Python<'_>, name: &str) -> PyResult<String> {
    claimdag::Actor::from_name_arg(name)
        .map(|a| a.hex())
        .map_err(|e| error::to_py_err(py, e.into()))
}

/// The core's table of error codes, one tuple a code in numeric order: the variant name
/// (`"NotFound"`), the stable code (`"not_found"`), the C value, the CLI exit status and
/// what the code means. `claimdag.exceptions` builds its classes from it.
fn codes() -> Vec<(&'static str, &'static str, u32, i32, &'static str)> {
    claimdag::Code::ALL
        .iter()
        .map(|&c| {
            (
                c.variant_name(),
                c.as_str(),
                c as u32,
                c.exit_code(),
                c.meaning(),
            )
        })
        .collect()
}

#[pymodule]
fn _claimdag(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("CODES", pyo3::types::PyTuple::new(m.py(), codes())?)?;
    m.add_class::<store::Store>()?;
    m.add_class::<types::Node>()?;
    m.add_class::<types::Event>()?;
    m.add_class::<types::Pick>()?;
    m.add_class::<types::Report>()?;
    m.add_class::<types::Settings>()?;
    m.add_class::<types::CancelRequest>()?;
    m.add_class::<types::Grant>()?;
    m.add_class::<lease::Lease>()?;
    m.add_class::<lease::LeaseNext>()?;
    m.add_class::<watch::Watch>()?;
    m.add_function(wrap_pyfunction!(actor, m)?)?;
    Ok(())
}
