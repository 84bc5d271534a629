//! A node as front doors show it: every field, plus the derived `display` word, `ready`,
//! and why it is not ready.

use crate::id::Id;
use crate::model::{Display, Millis, Node, State, Status};
use crate::rules;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct NodeView {
    pub node: Node,
    pub display: Display,
    pub ready: bool,
    /// Why a `todo` node is not ready (or is blocked); `None` otherwise.
    pub why: Option<String>,
}

impl NodeView {
    pub fn of(state: &State, node: &Node, now: Millis) -> NodeView {
        let display = rules::display(state, node, now);
        let why = match (node.status, display) {
            (Status::Todo, Display::Ready) => None,
            (Status::Todo, _) => {
                Some(rules::readiness(&|id| state.status_of(id), &state.settings, node).explain())
            }
            _ => None,
        };
        NodeView {
            node: node.clone(),
            display,
            ready: display == Display::Ready,
            why,
        }
    }

    /// Every field, with `null` for unset ones.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The JSON shape of a node: every field in a stable order, `null` for unset ones.
#[derive(Serialize)]
struct Shape<'a> {
    id: &'a Id,
    workspace: &'a str,
    kind: &'a str,
    summary: &'a str,
    parent: &'a Option<Id>,
    deps: &'a [Id],
    soft_deps: &'a [Id],
    status: Status,
    display: Display,
    ready: bool,
    why: &'a Option<String>,
    generation: u64,
    holder: &'a Option<Id>,
    attempts: u32,
    max_attempts: Option<u32>,
    claimed_at: Option<Millis>,
    renewed_at: Option<Millis>,
    ttl_ms: Option<u64>,
    role: &'a str,
    priority: i64,
    estimate: u64,
    labels: &'a [String],
    resources: &'a [String],
    #[serde(rename = "ref")]
    ref_: &'a Option<String>,
    note: &'a Option<String>,
    completed_by: &'a Option<Id>,
    last_holder: &'a Option<Id>,
    created_at: Millis,
    updated_at: Millis,
    archived: bool,
}

impl Serialize for NodeView {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = &self.node;
        Shape {
            id: &n.id,
            workspace: &n.workspace,
            kind: &n.kind,
            summary: &n.summary,
            parent: &n.parent,
            deps: &n.deps,
            soft_deps: &n.soft_deps,
            status: n.status,
            display: self.display,
            ready: self.ready,
            why: &self.why,
            generation: n.generation,
            holder: &n.holder,
            attempts: n.attempts,
            max_attempts: n.max_attempts,
            claimed_at: n.claimed_at,
            renewed_at: n.renewed_at,
            ttl_ms: n.ttl_ms,
            role: &n.role,
            priority: n.priority,
            estimate: n.estimate,
            labels: &n.labels,
            resources: &n.resources,
            ref_: &n.ref_,
            note: &n.note,
            completed_by: &n.completed_by,
            last_holder: &n.last_holder,
            created_at: n.created_at,
            updated_at: n.updated_at,
            archived: n.archived,
        }
        .serialize(s)
    }
}
