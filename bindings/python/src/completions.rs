//! `complete_many`'s arguments: a list of dicts or tuples (or its JSON text) as the verb
//! layer's completions, and `complete`'s optional output.

use crate::convert::{int, json_arg};
use crate::error::invalid;
use claimdag::verbs;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString, PyTuple};

/// An optional `output` argument: None is "no output".
pub fn opt_output(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<serde_json::Value>> {
    obj.filter(|o| !o.is_none())
        .map(|o| json_arg("output", o))
        .transpose()
}

/// The bytes of a JSON text argument (str, bytes or bytearray), or None for any other value.
pub fn json_text(obj: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Some(s.to_cow()?.as_bytes().to_vec()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Some(b.as_bytes().to_vec()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Some(b.to_vec()));
    }
    Ok(None)
}

/// The keys a completion dict of `complete_many` may have.
const COMPLETION_KEYS: [&str; 6] = ["node", "gen", "status", "actor", "note", "output"];

/// `complete_many`'s list of dicts or tuples as the verb layer's completions.
pub fn completion_list(obj: &Bound<'_, PyAny>) -> PyResult<Vec<verbs::Complete>> {
    if !(obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>()) {
        return Err(PyTypeError::new_err(format!(
            "completions must be a list of dicts or tuples, or its JSON text, got {}",
            obj.get_type().name()?
        )));
    }
    let mut all = Vec::new();
    for (i, item) in obj.try_iter()?.enumerate() {
        let item = item?;
        let c = if let Ok(d) = item.cast::<PyDict>() {
            of_dict(i, d)?
        } else if let Ok(t) = item.cast::<PyTuple>() {
            of_tuple(i, t)?
        } else {
            return Err(PyTypeError::new_err(format!(
                "completions[{i}] must be a dict or a tuple, got {}",
                item.get_type().name()?
            )));
        };
        all.push(c);
    }
    Ok(all)
}

/// Completion `i`, given as a dict.
fn of_dict(i: usize, d: &Bound<'_, PyDict>) -> PyResult<verbs::Complete> {
    let py = d.py();
    let what = |name: &str| format!("completions[{i}].{name}");
    for k in d.keys() {
        let key: String = k.extract()?;
        if !COMPLETION_KEYS.contains(&key.as_str()) {
            return Err(invalid(
                py,
                format!(
                    "completions[{i}]: unknown key {key:?} (expected node, gen, status, \
                         actor, note or output)"
                ),
            ));
        }
    }
    let need = |name: &str| -> PyResult<Bound<'_, PyAny>> {
        d.get_item(name)?
            .ok_or_else(|| invalid(py, format!("completions[{i}]: no {name:?}")))
    };
    let text = |name: &str| -> PyResult<Option<String>> {
        d.get_item(name)?
            .filter(|v| !v.is_none())
            .map(|v| v.extract::<String>())
            .transpose()
    };
    Ok(verbs::Complete {
        node: need("node")?.extract()?,
        gen: int(&what("gen"), &need("gen")?, 0)?,
        status: text("status")?.unwrap_or_else(|| "done".to_string()),
        actor: text("actor")?,
        note: text("note")?,
        output: d
            .get_item("output")?
            .filter(|v| !v.is_none())
            .map(|v| json_arg(&what("output"), &v))
            .transpose()?,
    })
}

/// Completion `i`, given as a tuple: (node, gen[, status[, output]]).
fn of_tuple(i: usize, t: &Bound<'_, PyTuple>) -> PyResult<verbs::Complete> {
    let py = t.py();
    let what = |name: &str| format!("completions[{i}].{name}");
    if !(2..=4).contains(&t.len()) {
        return Err(invalid(
            py,
            format!(
                "completions[{i}]: a tuple is (node, gen), (node, gen, status) or \
                     (node, gen, status, output), got {} items",
                t.len()
            ),
        ));
    }
    let status = match t.len() > 2 {
        true => t.get_item(2)?.extract::<String>()?,
        false => "done".to_string(),
    };
    let output = match t.len() > 3 {
        true => Some(t.get_item(3)?)
            .filter(|v| !v.is_none())
            .map(|v| json_arg(&what("output"), &v))
            .transpose()?,
        false => None,
    };
    Ok(verbs::Complete {
        node: t.get_item(0)?.extract()?,
        gen: int(&what("gen"), &t.get_item(1)?, 0)?,
        status,
        actor: None,
        note: None,
        output,
    })
}
