//! A node as front doors show it: every field, plus the derived `display` word, `ready`,
//! and why it is not ready.

use crate::model::{Display, Millis, Node, State, Status};
use crate::rules;
use serde_json::{json, Value};

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
        let n = &self.node;
        json!({
            "id": n.id,
            "workspace": n.workspace,
            "kind": n.kind,
            "summary": n.summary,
            "parent": n.parent,
            "deps": n.deps,
            "soft_deps": n.soft_deps,
            "status": n.status,
            "display": self.display,
            "ready": self.ready,
            "why": self.why,
            "generation": n.generation,
            "holder": n.holder,
            "attempts": n.attempts,
            "max_attempts": n.max_attempts,
            "claimed_at": n.claimed_at,
            "renewed_at": n.renewed_at,
            "ttl_ms": n.ttl_ms,
            "role": n.role,
            "priority": n.priority,
            "estimate": n.estimate,
            "labels": n.labels,
            "resources": n.resources,
            "ref": n.ref_,
            "note": n.note,
            "completed_by": n.completed_by,
            "created_at": n.created_at,
            "updated_at": n.updated_at,
            "archived": n.archived,
        })
    }
}
