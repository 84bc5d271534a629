//! `GET /v1/openapi.json`: the HTTP API described from the verb layer's own schemas (the
//! ones the MCP tools carry), so that it cannot drift from what the server takes.

use super::http::{served, status_of};
use crate::error::Code;
use crate::verbs;
use serde_json::{json, Map, Value};

/// The OpenAPI 3.1 document of every verb served.
pub fn document() -> Value {
    let mut paths = Map::new();
    for about in served() {
        let Some((mut input, mut output)) = verbs::schemas(about.verb) else {
            continue;
        };
        for s in [&mut input, &mut output] {
            if let Some(o) = s.as_object_mut() {
                o.remove("$schema");
            }
        }
        let mut responses = Map::new();
        responses.insert(
            "200".into(),
            json!({"description": "The verb's reply.",
                   "content": {"application/json": {"schema": output}}}),
        );
        for (status, what) in refusals(about.read_only) {
            responses.insert(
                status.to_string(),
                json!({"description": what,
                       "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}),
            );
        }
        let mut op = json!({
            "operationId": about.verb,
            "summary": about.about,
            "requestBody": {"required": false,
                            "content": {"application/json": {"schema": input}}},
            "responses": responses,
        });
        if !about.read_only {
            op["security"] = json!([{"bearer": []}]);
        }
        paths.insert(format!("/v1/{}", about.verb), json!({ "post": op }));
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "claimdag",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The verbs of one claimdag store over HTTP: POST the verb's JSON request \
                (the JSON its MCP tool takes), get its JSON reply or an error body. Writes need \
                Authorization: Bearer TOKEN.",
        },
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": error_schema()},
        },
    })
}

/// The refusals a verb may answer, by status, with what they mean.
fn refusals(read_only: bool) -> Vec<(u16, String)> {
    let mut by_status: Vec<(u16, Vec<&str>)> = Vec::new();
    for code in Code::ALL {
        let status = status_of(code).as_u16();
        match by_status.iter_mut().find(|(s, _)| *s == status) {
            Some((_, codes)) => codes.push(code.as_str()),
            None => by_status.push((status, vec![code.as_str()])),
        }
    }
    let mut out: Vec<(u16, String)> = by_status
        .into_iter()
        .map(|(s, codes)| (s, format!("Refused: {}.", codes.join(", "))))
        .collect();
    out.push((413, "The request body is too large (invalid_input).".into()));
    if !read_only {
        out.push((401, "No or a wrong bearer token (invalid_input).".into()));
    }
    out.sort();
    out
}

/// The error body of docs/reference.md ("Exit codes and errors").
fn error_schema() -> Value {
    let codes: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    let body = json!({
        "type": "object",
        "required": ["code", "message"],
        "properties": {
            "code": {"type": "string", "enum": codes},
            "message": {"type": "string"},
            "node": {"type": "string", "description": "The node the error is about."},
            "holder": {"type": "string", "description": "Who holds the node's claim."},
            "generation": {"type": "integer", "minimum": 0,
                           "description": "The node's current generation."},
            "held": {"type": "array", "items": {"type": "string"},
                     "description": "The nodes the actor holds (assignee_busy)."},
            "path": {"type": "string", "description": "The file the error is about."},
        },
    });
    json!({
        "type": "object",
        "required": ["error"],
        "properties": {"error": body},
        "description": "A refusal: the error body of every door, as the CLI writes it with --json.",
    })
}
