//! Conversions at the edge: Python durations, integers and plans in (JSON values out are
//! in `json`).

use crate::error::invalid;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDateTime, PyDelta, PyDict, PyFloat, PyInt, PyList, PyString,
    PyTuple,
};
use serde_json::{Map, Number, Value};

/// A duration argument (`ttl`, `lease`, `default_ttl`, `wait`, `retry_in`) in whole milliseconds: seconds as an
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

/// An integer argument (`gen`, `priority`, `estimate`, `max_attempts`, `max_held`) as `T`:
/// a Python int from `min` to `T`'s largest value. Out of range (however large) is
/// `InvalidInput` naming the argument; a bool, or anything that is not an int, is a
/// `TypeError` (True is not the generation 1).
pub fn int<T: TryFrom<i128>>(what: &str, obj: &Bound<'_, PyAny>, min: i128) -> PyResult<T> {
    let py = obj.py();
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be an int, got {}",
            obj.get_type().name()?
        )));
    }
    let too_large = || invalid(py, format!("{what} is too large: {obj}"));
    let v: i128 = obj.extract().map_err(|_| too_large())?;
    if v < min {
        return Err(invalid(
            py,
            format!("{what} must be at least {min}, got {v}"),
        ));
    }
    T::try_from(v).map_err(|_| too_large())
}

/// An optional integer argument: None is "not given".
pub fn opt_int<T: TryFrom<i128>>(
    what: &str,
    obj: Option<&Bound<'_, PyAny>>,
    min: i128,
) -> PyResult<Option<T>> {
    obj.filter(|o| !o.is_none())
        .map(|o| int(what, o, min))
        .transpose()
}

/// An optional duration argument.
pub fn opt_millis(what: &str, obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    obj.filter(|o| !o.is_none())
        .map(|o| millis(what, o))
        .transpose()
}

/// How deeply a plan's values may nest; a plan needs three levels (plan, nodes, lists).
const MAX_DEPTH: usize = 64;

/// The JSON text of a plan argument: a str or bytes-like object is taken as JSON text as
/// given; anything else is converted as `json.dumps` would (dicts with str keys, lists,
/// tuples, str, int, float, bool, None). Any other type is a `TypeError`.
pub fn plan_bytes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_cow()?.as_bytes().to_vec());
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    if !obj.is_instance_of::<PyDict>() {
        return Err(PyTypeError::new_err(format!(
            "plan must be a dict {{\"nodes\": [...]}}, or its JSON text as str or bytes, got {}",
            obj.get_type().name()?
        )));
    }
    let value = py_to_json(obj, 0)?;
    serde_json::to_vec(&value).map_err(|e| invalid(obj.py(), format!("plan: {e}")))
}

/// A Python value as JSON, the way `json.dumps` maps it (verb arguments, plans).
pub fn py_to_json(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    to_json(obj, "plan", depth)
}

/// A value argument (`output`) as JSON, the way `json.dumps` maps it; errors name `what`.
/// A value `json.dumps` refuses (a set, an object) is a `TypeError`; NaN, an infinity or
/// nesting deeper than 64 levels is `InvalidInput`. An int of any size is kept digit for
/// digit, as `json.dumps` writes it.
pub fn json_arg(what: &str, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    to_json(obj, what, 0)
}

fn to_json(obj: &Bound<'_, PyAny>, what: &str, depth: usize) -> PyResult<Value> {
    let py = obj.py();
    if depth > MAX_DEPTH {
        return Err(invalid(
            py,
            format!("{what} nests deeper than {MAX_DEPTH} levels"),
        ));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        // Beyond 64 bits: its decimal digits, kept as written (serde_json's
        // arbitrary_precision, which the claimdag crate turns on).
        let digits = obj.str()?.to_cow()?.into_owned();
        return match serde_json::from_str::<Value>(&digits) {
            Ok(v @ Value::Number(_)) => Ok(v),
            _ => Err(invalid(
                py,
                format!("{what} number {obj} is not a JSON number"),
            )),
        };
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let f = f.value();
        return Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| invalid(py, format!("{what} number {f} is not a JSON number")));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::new();
        for (k, v) in d.iter() {
            let key = k.cast::<PyString>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "{what} keys must be str, got {}",
                    k.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })?;
            map.insert(key.to_cow()?.into_owned(), to_json(&v, what, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return l.iter().map(|v| to_json(&v, what, depth + 1)).collect();
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return t.iter().map(|v| to_json(&v, what, depth + 1)).collect();
    }
    Err(PyTypeError::new_err(format!(
        "{what} values must be dict, list, tuple, str, int, float, bool or None, got {}",
        obj.get_type().name()?
    )))
}

/// A `not_before` argument as the verb layer takes it (RFC 3339, or `+DUR` from now): a
/// str is passed as written (the core refuses a bad one, naming it); an aware `datetime`
/// becomes RFC 3339 in UTC, rounded up to the millisecond. A naive `datetime` is refused: which clock
/// it means is a guess (`InvalidInput`). Any other type is a `TypeError`.
pub fn not_before(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    time_arg("not_before", obj)
}

/// A point in time as [`not_before`] reads it, for the argument `what`.
pub fn time_arg(what: &str, obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    let py = obj.py();
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Some(s.to_cow()?.into_owned()));
    }
    if obj.is_instance_of::<PyDateTime>() {
        if obj.call_method0("utcoffset")?.is_none() {
            return Err(invalid(
                py,
                format!(
                    "{what} must be an aware datetime (give it a tzinfo, such as \
                     datetime.timezone.utc), got the naive {}",
                    obj.str()?
                ),
            ));
        }
        let datetime = py.import("datetime")?;
        let utc = datetime.getattr("timezone")?.getattr("utc")?;
        // Rounded up to the millisecond: never granted before the time given.
        let micros: u32 = obj.getattr("microsecond")?.extract()?;
        let up = (1000 - micros % 1000) % 1000;
        let step = datetime.getattr("timedelta")?.call1((0, 0, up))?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("timespec", "milliseconds")?;
        let text = obj
            .call_method1("__add__", (step,))?
            .call_method1("astimezone", (utc,))?
            .call_method("isoformat", (), Some(&kwargs))?;
        return Ok(Some(text.extract()?));
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be an aware datetime.datetime, or a str (RFC 3339, or +DUR from now \
         such as \"+90s\"), got {}",
        obj.get_type().name()?
    )))
}

/// Tokens and cost as a str (`"tokens=1000,cost=2.5"`) or a dict (`{"tokens": 1000,
/// "cost": "2.5"}`, a cost as str, int, float or Decimal), in the text the verbs read.
pub fn spend_arg(what: &str, obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Some(s.to_cow()?.into_owned()));
    }
    let Ok(d) = obj.cast::<PyDict>() else {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a str (\"tokens=1000,cost=2.5\") or a dict ({{\"tokens\": 1000, \
             \"cost\": \"2.5\"}}), got {}",
            obj.get_type().name()?
        )));
    };
    let mut parts = Vec::new();
    for (k, v) in d.iter() {
        parts.push(format!("{}={}", k.str()?, v.str()?));
    }
    Ok(Some(parts.join(",")))
}

/// A keyword argument that tells "not given" apart from an explicit `None`.
pub enum Given<'py> {
    No,
    Yes(Bound<'py, PyAny>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for Given<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Given::Yes(obj.to_owned()))
    }
}

/// The settings `Store.config` was given, in their text form, in the order they are
/// applied.
#[allow(clippy::too_many_arguments)] // one keyword argument per setting
pub fn setting_changes(
    py: Python<'_>,
    default_ttl: Given<'_>,
    max_held: Option<&Bound<'_, PyAny>>,
    max_attempts: Given<'_>,
    retry_delay: Option<&Bound<'_, PyAny>>,
    retry_delay_max: Option<&Bound<'_, PyAny>>,
    history_keep: Option<&Bound<'_, PyAny>>,
    deadline_action: Option<String>,
) -> PyResult<Vec<(&'static str, String)>> {
    let mut changes: Vec<(&'static str, String)> = Vec::new();
    if let Some(a) = deadline_action {
        changes.push(("deadline_action", a));
    }
    if let Given::Yes(v) = default_ttl {
        changes.push(("default_ttl", format!("{}ms", millis("default_ttl", &v)?)));
    }
    if let Some(v) = opt_millis("retry_delay", retry_delay)? {
        changes.push(("retry_delay", format!("{v}ms")));
    }
    if let Some(v) = opt_millis("retry_delay_max", retry_delay_max)? {
        changes.push(("retry_delay_max", format!("{v}ms")));
    }
    if let Some(v) = history_keep {
        let text = match v.extract::<u64>() {
            Ok(n) => n.to_string(),
            Err(_) => v.extract::<String>().map_err(|_| {
                invalid(
                    py,
                    "history_keep must be \"all\", a duration such as \"7d\", or a \
                     number of events",
                )
            })?,
        };
        changes.push(("history_keep", text));
    }
    if let Some(h) = opt_int::<u64>("max_held", max_held, 0)? {
        changes.push(("max_held", h.to_string()));
    }
    if let Given::Yes(v) = max_attempts {
        let cap: Option<u32> = opt_int("max_attempts", Some(&v), 1)?;
        changes.push((
            "max_attempts",
            cap.map_or_else(|| "none".to_string(), |c| c.to_string()),
        ));
    }
    Ok(changes)
}
