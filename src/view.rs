//! A node as front doors show it: every field, plus the derived `display` word, `ready`,
//! and why it is not ready.

use crate::id::{Actor, Id};
use crate::model::{
    json_value, ActorName, Budget, CancelRequest, Children, DisplayWord, HistoryLine, Millis,
    Node, Spend, Status,
};
use crate::rules;
use crate::state::State;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct NodeView {
    pub node: Node,
    pub display: DisplayWord,
    pub ready: bool,
    /// Why a `todo` node is not ready (or is blocked); `None` otherwise.
    pub why: Option<String>,
    /// Unfinished with its deadline passed.
    pub overdue: bool,
    /// The names kept for the node's actors ([`Names::name_view`]).
    pub names: NodeNames,
}

/// The names of a node's actors, where the store keeps one: in JSON `holder_name`,
/// `last_holder_name`, `completed_by_name` and `cancel_requested.by_name` (`null` when the
/// actor has none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeNames {
    pub holder: Option<String>,
    pub last_holder: Option<String>,
    pub completed_by: Option<String>,
    pub cancel_by: Option<String>,
}

/// The names the store keeps, by actor: what the doors show beside (or, in text, instead
/// of) an actor's id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names(std::collections::HashMap<Actor, String>);

impl Names {
    pub fn of(kept: &[ActorName]) -> Names {
        Names(kept.iter().map(|a| (a.id, a.name.clone())).collect())
    }

    /// The name kept for `actor`, if any.
    pub fn get(&self, actor: &Actor) -> Option<&str> {
        self.0.get(actor).map(String::as_str)
    }

    fn opt(&self, actor: &Option<Actor>) -> Option<String> {
        actor.and_then(|a| self.get(&a).map(str::to_string))
    }

    /// `view` with the names of its actors.
    pub fn name_view(&self, view: &mut NodeView) {
        let n = &view.node;
        view.names = NodeNames {
            holder: self.opt(&n.holder),
            last_holder: self.opt(&n.last_holder),
            completed_by: self.opt(&n.completed_by),
            cancel_by: self.opt(&n.cancel_requested.as_ref().and_then(|c| c.by)),
        };
    }

    /// `line` with the names of its actors.
    pub fn name_line(&self, line: &mut HistoryLine) {
        line.actor_name = self.opt(&line.event.actor);
        line.by_name = self.opt(&line.event.by);
    }
}

impl NodeView {
    /// A gate waiting for a person's decision ([`crate::model::decisions::awaits_decision`]).
    pub fn awaits_decision(&self) -> bool {
        crate::model::decisions::awaits_decision(&self.node.kind, self.display)
    }

    pub fn of(state: &State, node: &Node, now: Millis) -> NodeView {
        let display = rules::display(state, node, now);
        let why = match (node.status, display) {
            (Status::Todo, DisplayWord::Ready) => None,
            (Status::Todo, _) => Some(
                rules::readiness_at(&|id| state.status_of(id), &state.settings, node, now)
                    .explain(),
            ),
            _ => None,
        };
        NodeView {
            node: node.clone(),
            display,
            ready: display == DisplayWord::Ready,
            why,
            overdue: node.is_overdue(now),
            names: NodeNames::default(),
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
    display: DisplayWord,
    ready: bool,
    why: &'a Option<String>,
    generation: u64,
    holder: &'a Option<Id>,
    holder_name: &'a Option<String>,
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
    completed_by_name: &'a Option<String>,
    not_before: Option<Millis>,
    last_holder: &'a Option<Id>,
    last_holder_name: &'a Option<String>,
    progress: &'a Option<String>,
    progress_at: Option<Millis>,
    cancel_requested: Option<CancelShape<'a>>,
    output: Option<Value>,
    children: Option<Children>,
    deadline: Option<Millis>,
    overdue: bool,
    overdue_at: Option<Millis>,
    budget: Option<Budget>,
    spent: Spend,
    claim_spent: Spend,
    created_at: Millis,
    updated_at: Millis,
    archived: bool,
}

/// A cancel request's JSON shape, with the name of who asked.
#[derive(Serialize)]
struct CancelShape<'a> {
    by: &'a Option<Actor>,
    by_name: &'a Option<String>,
    reason: &'a Option<String>,
    at: Millis,
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
            holder_name: &self.names.holder,
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
            completed_by_name: &self.names.completed_by,
            not_before: n.not_before,
            last_holder: &n.last_holder,
            last_holder_name: &self.names.last_holder,
            progress: &n.progress,
            progress_at: n.progress_at,
            cancel_requested: n.cancel_requested.as_ref().map(|c| CancelShape {
                by: &c.by,
                by_name: &self.names.cancel_by,
                reason: &c.reason,
                at: c.at,
            }),
            output: n.output.as_deref().map(json_value),
            children: n.children,
            deadline: n.deadline,
            overdue: self.overdue,
            overdue_at: n.overdue_at,
            budget: n.budget,
            spent: n.spent,
            claim_spent: n.claim_spent,
            created_at: n.created_at,
            updated_at: n.updated_at,
            archived: n.archived,
        }
        .serialize(s)
    }
}

/// The JSON shape of a node, owned: what a node reads back as (and its JSON Schema).
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Node")]
struct Owned {
    id: Id,
    workspace: String,
    kind: String,
    summary: String,
    parent: Option<Id>,
    /// Hard prerequisites: satisfied when done.
    deps: Vec<Id>,
    /// Soft prerequisites: satisfied when finished in any status.
    soft_deps: Vec<Id>,
    status: Status,
    /// The derived word: ready, scheduled, blocked, todo, claimed, expired, done, failed,
    /// cancelled.
    display: DisplayWord,
    ready: bool,
    /// Why a todo node is not ready (or is blocked).
    why: Option<String>,
    /// The fencing token: every grant and hand-back moves it by one.
    generation: u64,
    holder: Option<Actor>,
    /// The name kept for the holder, if any.
    #[serde(default)]
    holder_name: Option<String>,
    attempts: u32,
    max_attempts: Option<u32>,
    claimed_at: Option<Millis>,
    renewed_at: Option<Millis>,
    ttl_ms: Option<u64>,
    role: String,
    priority: i64,
    estimate: u64,
    labels: Vec<String>,
    resources: Vec<String>,
    #[serde(rename = "ref")]
    ref_: Option<String>,
    note: Option<String>,
    completed_by: Option<Actor>,
    #[serde(default)]
    completed_by_name: Option<String>,
    /// Not granted before this time (ms since the epoch): a scheduled node, or one
    /// handed back with a backoff.
    #[serde(default)]
    not_before: Option<Millis>,
    last_holder: Option<Actor>,
    #[serde(default)]
    last_holder_name: Option<String>,
    /// The last checkpoint a holder left (kept across hand-backs; cleared by a reopen).
    #[serde(default)]
    progress: Option<String>,
    /// When `progress` was last written.
    #[serde(default)]
    progress_at: Option<Millis>,
    /// A request that the holder stop: who asked (and the name kept for it), why, when.
    #[serde(default)]
    cancel_requested: Option<CancelOwned>,
    /// What the node produced (any JSON value), handed to its dependents.
    #[serde(default)]
    output: Option<Value>,
    /// A container's children (kind epic): how many, and how many ended done, failed,
    /// cancelled.
    #[serde(default)]
    children: Option<Children>,
    /// Past this time (ms since the epoch) an unfinished node is overdue.
    #[serde(default)]
    deadline: Option<Millis>,
    /// Unfinished with its deadline passed.
    #[serde(default)]
    overdue: bool,
    /// When the node was first seen overdue.
    #[serde(default)]
    overdue_at: Option<Millis>,
    /// The most the node may spend (cost in millionths).
    #[serde(default)]
    budget: Option<Budget>,
    /// What its claims reported spending, summed (cost in millionths).
    #[serde(default)]
    spent: Spend,
    /// What the current claim reported.
    #[serde(default)]
    claim_spent: Spend,
    created_at: Millis,
    updated_at: Millis,
    archived: bool,
}

/// A cancel request as it reads back.
#[derive(Deserialize, schemars::JsonSchema)]
#[schemars(rename = "CancelRequest")]
struct CancelOwned {
    #[serde(default)]
    by: Option<Actor>,
    #[serde(default)]
    by_name: Option<String>,
    #[serde(default)]
    reason: Option<String>,
    at: Millis,
}

impl<'de> Deserialize<'de> for NodeView {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<NodeView, D::Error> {
        let o = Owned::deserialize(d)?;
        let cancel_by = o.cancel_requested.as_ref().and_then(|c| c.by_name.clone());
        Ok(NodeView {
            node: Node {
                id: o.id,
                workspace: o.workspace,
                kind: o.kind,
                summary: o.summary,
                parent: o.parent,
                deps: o.deps,
                soft_deps: o.soft_deps,
                status: o.status,
                generation: o.generation,
                holder: o.holder,
                attempts: o.attempts,
                max_attempts: o.max_attempts,
                claimed_at: o.claimed_at,
                renewed_at: o.renewed_at,
                ttl_ms: o.ttl_ms,
                role: o.role,
                priority: o.priority,
                estimate: o.estimate,
                labels: o.labels,
                resources: o.resources,
                rate_grants: Vec::new(),
                ref_: o.ref_,
                note: o.note,
                completed_by: o.completed_by,
                not_before: o.not_before,
                last_holder: o.last_holder,
                progress: o.progress,
                progress_at: o.progress_at,
                cancel_requested: o.cancel_requested.map(|c| CancelRequest {
                    by: c.by,
                    reason: c.reason,
                    at: c.at,
                }),
                output: o.output.map(|v| v.to_string()),
                children: o.children,
                deadline: o.deadline,
                overdue_at: o.overdue_at,
                budget: o.budget,
                spent: o.spent,
                claim_spent: o.claim_spent,
                created_at: o.created_at,
                updated_at: o.updated_at,
                archived: o.archived,
            },
            display: o.display,
            ready: o.ready,
            why: o.why,
            overdue: o.overdue,
            names: NodeNames {
                holder: o.holder_name,
                last_holder: o.last_holder_name,
                completed_by: o.completed_by_name,
                cancel_by,
            },
        })
    }
}

impl schemars::JsonSchema for NodeView {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        Owned::schema_name()
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Owned::json_schema(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_reads_back_as_it_was_written() {
        let s = State::default();
        let e = rules::apply(
            &s,
            &rules::NoArchive,
            &rules::Request::Upsert(rules::Upsert {
                summary: "parse".into(),
                labels: Some(vec!["x".into()]),
                ..rules::Upsert::default()
            }),
            7,
        )
        .unwrap();
        let node = &e.change.nodes[0];
        let v = NodeView::of(&s, node, 9);
        let back: NodeView = serde_json::from_value(v.to_json()).unwrap();
        assert_eq!(back, v);
    }
}
