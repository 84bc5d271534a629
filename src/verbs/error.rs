//! The one JSON body of an error (docs/reference.md, "Exit codes and errors"), for every front door: the CLI's `--json`
//! stderr, the C `_json` functions' callers, Python's `ClaimdagError.body`, MCP tool results.

use crate::error::Error;
use serde_json::{json, Value};

/// `{"code", "message", ...context}`: the node, holder, generation, the busy actor and the
/// nodes it holds (`assignee_busy`) and the path, when the error names them; beside each
/// actor, the name the store keeps for it (or null).
pub fn error_body(e: &Error) -> Value {
    let mut body = json!({"code": e.code().as_str(), "message": e.to_string()});
    if let Some(n) = e.node() {
        body["node"] = json!(n);
    }
    if let Some(h) = e.holder() {
        body["holder"] = json!(h);
        body["holder_name"] = json!(e.holder_name());
    }
    if let Some((a, name)) = e.busy_actor() {
        body["actor"] = json!(a);
        body["actor_name"] = json!(name);
    }
    if let Some(g) = e.generation() {
        body["generation"] = json!(g);
    }
    if let Some(h) = e.held() {
        body["held"] = json!(h);
    }
    if let Some(p) = e.path() {
        body["path"] = json!(p.display().to_string());
    }
    body
}

/// `{"error": body}`, as the CLI writes it to stderr with `--json`.
pub fn error_json(e: &Error) -> Value {
    json!({ "error": error_body(e) })
}
