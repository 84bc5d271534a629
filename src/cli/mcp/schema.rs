//! The tools' schemas as the MCP server lists them, kept small: an agent pays for every
//! character of the tool list in each conversation. An input schema is the verb layer's
//! request schema without what an agent does not act on (titles, number formats, bounds
//! of the integer types, the `$schema` line, and the top-level description, which repeats
//! the tool's). An output schema names the reply's top-level fields only: what a client
//! needs to find them in the structured result; the replies' full shapes are in the
//! reference (docs/reference.md) and in the OpenAPI document of `claimdag serve`.

use rmcp::model::JsonObject;
use serde_json::{json, Value};

/// Keys left out of an input schema, at every depth.
const LEFT_OUT: [&str; 4] = ["title", "format", "minimum", "$schema"];

/// The request schema of a verb, as the tool list carries it.
pub fn input(schema: Value) -> JsonObject {
    let mut v = strip(schema);
    if let Some(o) = v.as_object_mut() {
        o.remove("description");
    }
    match v {
        Value::Object(o) => o,
        _ => JsonObject::new(),
    }
}

fn strip(v: Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.into_iter()
                .filter(|(k, _)| !LEFT_OUT.contains(&k.as_str()))
                .map(|(k, v)| (k, strip(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(strip).collect()),
        v => v,
    }
}

/// The reply schema of a verb, as the tool list carries it: an object naming the reply's
/// top-level fields, or, for a reply that is not an object (a list, or a value that may be
/// null), an object with that reply under `key`.
pub fn output(schema: &Value, key: Option<&str>) -> JsonObject {
    let fields: serde_json::Map<String, Value> = match key {
        Some(k) => [(k.to_string(), json!({}))].into_iter().collect(),
        None => schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(|k| (k.clone(), json!({}))).collect())
            .unwrap_or_default(),
    };
    let mut o = JsonObject::new();
    o.insert("type".into(), json!("object"));
    o.insert("properties".into(), Value::Object(fields));
    if let Some(k) = key {
        o.insert("required".into(), json!([k]));
    }
    o
}

/// An input schema without the arguments a bound server fixes: `workspace`, and with an
/// actor bound, `actor` and `assignee` (naming another is refused; leaving them out acts as
/// the bound one), so that an agent is not offered what it may not choose.
pub fn without_bound(schema: &mut JsonObject, actor: bool) {
    let mut gone = vec!["workspace"];
    if actor {
        gone.extend(["actor", "assignee"]);
    }
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for k in &gone {
            props.remove(*k);
        }
    }
    if let Some(Value::Array(req)) = schema.get_mut("required") {
        req.retain(|r| !r.as_str().is_some_and(|r| gone.contains(&r)));
    }
}
