//! Conversions at the edge: Python durations in, JSON values out.

use crate::error::invalid;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDelta, PyDict, PyFloat, PyInt, PyList};
use serde_json::Value;

/// A duration argument (`ttl`, `lease`, `default_ttl`) in whole milliseconds: seconds as an
/// int or float, or a `datetime.timedelta`. Fractions of a millisecond round to the nearest
/// one. Negative, NaN or too long is `invalid_input`; any other type is a `TypeError`.
pub fn millis(what: &str, obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    let py = obj.py();
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be seconds (int or float) or a datetime.timedelta, got a bool"
        )));
    }
    let negative = || invalid(py, format!("{what} must not be negative"));
    let too_long = || invalid(py, format!("{what} is too long"));
    if obj.is_instance_of::<PyDelta>() {
        let days: i64 = obj.getattr("days")?.extract()?;
        let seconds: i64 = obj.getattr("seconds")?.extract()?;
        let micros: i64 = obj.getattr("microseconds")?.extract()?;
        // |days| <= 999_999_999, so the microsecond total fits an i128 with room to spare.
        let total =
            (i128::from(days) * 86_400 + i128::from(seconds)) * 1_000_000 + i128::from(micros);
        if total < 0 {
            return Err(negative());
        }
        return u64::try_from((total + 500) / 1000).map_err(|_| too_long());
    }
    if obj.is_instance_of::<PyInt>() {
        let secs: i128 = obj.extract().map_err(|_| too_long())?;
        if secs < 0 {
            return Err(negative());
        }
        return secs
            .checked_mul(1000)
            .and_then(|ms| u64::try_from(ms).ok())
            .ok_or_else(too_long);
    }
    if obj.is_instance_of::<PyFloat>() || obj.hasattr("__float__")? {
        let secs: f64 = obj.extract()?;
        if secs.is_nan() {
            return Err(invalid(py, format!("{what} must be a number, got NaN")));
        }
        if secs < 0.0 {
            return Err(negative());
        }
        let ms = (secs * 1000.0).round();
        // 2^64 as f64: anything at or above it does not fit a u64 (infinity included).
        if ms >= 18_446_744_073_709_551_616.0 {
            return Err(too_long());
        }
        return Ok(ms as u64);
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be seconds (int or float) or a datetime.timedelta, got {}",
        obj.get_type().name()?
    )))
}

/// An optional duration argument.
pub fn opt_millis(what: &str, obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    obj.filter(|o| !o.is_none())
        .map(|o| millis(what, o))
        .transpose()
}

/// A JSON value as the Python value `json.loads` would give.
pub fn json_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, json_to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}
