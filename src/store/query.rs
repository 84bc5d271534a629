//! The named queries every front door asks, pure functions of one consistent [`Reading`]: a
//! node, a filtered list, the ready nodes with their critical paths, the claims an actor
//! holds, and resolving a node argument.

use super::backend::Reading;
use crate::error::{Error, Result};
use crate::id::{Actor, Id};
use crate::model::Node;
use crate::rules;
use crate::schedule::{self, Pick};
use crate::view::NodeView;

/// The words `list --status` takes: stored statuses and display words.
pub const STATUS_WORDS: [&str; 9] = [
    "todo",
    "ready",
    "scheduled",
    "blocked",
    "claimed",
    "expired",
    "done",
    "failed",
    "cancelled",
];

/// Which nodes `list` shows.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Only this workspace; `None` for every workspace.
    pub workspace: Option<String>,
    /// A stored status or a display word (`ready`, `blocked`, `expired`, ...).
    pub status: Option<String>,
    pub holder: Option<Actor>,
    /// Include finished nodes.
    pub terminal: bool,
    /// Include archived nodes.
    pub archived: bool,
    /// Show archived nodes only.
    pub only_archived: bool,
    /// Only ready (`Some(true)`) or only not ready (`Some(false)`) nodes.
    pub ready: Option<bool>,
}

impl ListFilter {
    /// Refuses a status word `list` does not know.
    pub fn check(&self) -> Result<()> {
        if let Some(w) = &self.workspace {
            rules::validate_workspace(w)?;
        }
        match &self.status {
            Some(st) if !STATUS_WORDS.contains(&st.as_str()) => Err(Error::invalid(format!(
                "unknown status {st:?}: use one of {}",
                STATUS_WORDS.join(", ")
            ))),
            _ => Ok(()),
        }
    }
}

/// A live or archived node with its derived words.
pub(super) fn node_view(v: &Reading<'_>, id: &Id) -> Option<NodeView> {
    v.state
        .get(id)
        .or_else(|| v.archived.iter().find(|n| n.id == *id))
        .map(|n| NodeView::of(v.state, n, v.now))
}

pub(super) fn list(v: &Reading<'_>, filter: &ListFilter) -> Vec<NodeView> {
    // Only a node stored as `claimed` shows as `claimed` or `expired`: walk the claims, not
    // the whole DAG.
    let claims_only = matches!(filter.status.as_deref(), Some("claimed" | "expired"));
    let live: Box<dyn Iterator<Item = &Node>> = match (filter.only_archived, claims_only) {
        (true, _) => Box::new(std::iter::empty()),
        (false, true) => Box::new(v.state.claimed_nodes().into_iter()),
        (false, false) => Box::new(v.state.nodes().iter()),
    };
    live.chain(v.archived.iter())
        .filter(|n| filter.workspace.as_deref().is_none_or(|w| n.workspace == w))
        .filter(|n| filter.holder.is_none_or(|h| n.holder == Some(h)))
        .map(|n| NodeView::of(v.state, n, v.now))
        .filter(|nv| match &filter.status {
            Some(st) => nv.node.status.as_str() == st || nv.display.as_str() == st,
            None => nv.node.archived || filter.terminal || !nv.node.status.is_terminal(),
        })
        .filter(|nv| filter.ready.is_none_or(|r| nv.ready == r))
        .collect()
}

/// The workspace and role of `next` and `ready`, checked as `claim-next` checks them.
pub(super) fn check_pick_args(workspace: &str, role: Option<&str>) -> Result<()> {
    rules::validate_workspace(workspace)?;
    if let Some(r) = role {
        rules::validate_word("role", r, 0)?;
    }
    Ok(())
}

pub(super) fn ready(v: &Reading<'_>, workspace: &str, role: Option<&str>) -> Vec<Pick> {
    schedule::order(
        &rules::read_at(v.state, v.now),
        workspace,
        role.unwrap_or(""),
    )
}

pub(super) fn next(v: &Reading<'_>, workspace: &str, role: Option<&str>) -> Option<Pick> {
    schedule::best(
        &rules::read_at(v.state, v.now),
        workspace,
        role.unwrap_or(""),
    )
}

/// The live claims whose ending may still make work ready for `role` ([`schedule::pending`]).
/// `(attempts, cap)` when the live node `id` has used every attempt its cap allows.
pub(super) fn out_of_attempts(v: &Reading<'_>, id: &Id) -> Option<(u32, u32)> {
    schedule::ready::out_of_attempts(&v.state.settings, v.state.get(id)?)
}

pub(super) fn pending(v: &Reading<'_>, workspace: &str, role: Option<&str>) -> Vec<Id> {
    schedule::pending(
        &rules::read_at(v.state, v.now),
        workspace,
        role.unwrap_or(""),
    )
}

/// The longest critical path of `workspace`'s unfinished nodes, first node first.
pub(super) fn critical_path(v: &Reading<'_>, workspace: &str) -> Vec<Id> {
    schedule::critical(&rules::read_at(v.state, v.now), workspace).longest()
}

/// `actor`'s live claims in `workspace`, oldest claim first.
pub(super) fn held_by(v: &Reading<'_>, workspace: &str, actor: Actor) -> Vec<NodeView> {
    let mut held: Vec<&Node> = v
        .state
        .claimed_ids()
        .iter()
        .filter_map(|id| v.state.get(id))
        .filter(|n| n.workspace == workspace && n.holder == Some(actor) && n.is_live_claim(v.now))
        .collect();
    held.sort_by_key(|n| (n.claimed_at, n.id));
    held.into_iter()
        .map(|n| NodeView::of(v.state, n, v.now))
        .collect()
}

/// A node argument, checked before the store is read.
pub(super) enum Prefix {
    Full(Id),
    Part(String),
}

pub(super) fn prefix(text: &str) -> Result<Prefix> {
    let t = text.trim().trim_end_matches("...").to_ascii_lowercase();
    if t.len() == 32 {
        return Ok(Prefix::Full(Id::parse(&t, "node id")?));
    }
    if t.len() < 8 || t.len() > 32 || !t.bytes().all(|c| c.is_ascii_hexdigit()) {
        return Err(Error::invalid(format!(
            "node must be a 32-hex id or a prefix of at least 8 hex characters, got {text:?}"
        )));
    }
    Ok(Prefix::Part(t))
}

/// The one live or archived node whose id starts with `prefix`.
pub(super) fn resolve(v: &Reading<'_>, prefix: &str) -> Result<Id> {
    let mut m: Vec<Id> = v.state.ids_with_prefix(prefix, 2);
    m.extend(
        v.state
            .archived()
            .keys()
            .copied()
            .filter(|id| id.starts_with_hex(prefix))
            .take(2),
    );
    the_one(m, prefix)
}

/// The one live or archived node of `workspace` the argument names: a node of another
/// workspace is not there, and answers as a node that does not exist.
pub(super) fn resolve_in(v: &Reading<'_>, arg: &Prefix, workspace: &str) -> Result<Id> {
    let here = |id: &Id| v.state.workspace_of(id) == Some(workspace);
    match arg {
        Prefix::Full(id) if here(id) => Ok(*id),
        Prefix::Full(id) => Err(Error::node_not_found(*id)),
        Prefix::Part(prefix) => {
            let archived = v.state.archived().keys().copied();
            let m: Vec<Id> = v
                .state
                .ids_with_prefix(prefix, usize::MAX)
                .into_iter()
                .chain(archived.filter(|id| id.starts_with_hex(prefix)))
                .filter(here)
                .take(2)
                .collect();
            the_one(m, prefix)
        }
    }
}

/// The one id of `m` (the nodes found for `prefix`, at most two needed).
fn the_one(mut m: Vec<Id>, prefix: &str) -> Result<Id> {
    m.truncate(2);
    m.dedup();
    match m.as_slice() {
        [one] => Ok(*one),
        [] => Err(Error::NotFound {
            what: format!("node {prefix}..."),
            node: None,
        }),
        _ => Err(Error::invalid(format!(
            "node prefix {prefix} is ambiguous: give more characters"
        ))),
    }
}
