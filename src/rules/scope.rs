//! What a request reads and writes. The rules never cross workspaces: links, resources,
//! `max_held` and the pick are per workspace, and a write hands back the expired claims of
//! its own workspace only. So a request concerns one workspace (or, for a settings change,
//! the store's settings and no node), which a backend may serialise on alone.

use super::Request;
use crate::error::{Error, Result};
use crate::id::Id;
use crate::model::Millis;
use crate::state::State;

/// The part of a store one request reads and writes, besides the settings every request
/// reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// One workspace's nodes.
    Workspace(String),
    /// The settings alone (`config`).
    Settings,
    /// A node `state` does not know: the request names nothing in this state, and is
    /// refused on it (a backend with a partial view looks at the whole store first).
    Unknown,
}

impl Request {
    /// The scope of this request as `state` places its nodes.
    pub fn scope(&self, state: &State) -> Scope {
        let of = |id: &Id| match state.workspace_of(id) {
            Some(w) => Scope::Workspace(w.to_string()),
            None => Scope::Unknown,
        };
        match self {
            Request::Upsert(u) => Scope::Workspace(u.workspace.clone()),
            Request::ClaimNext { workspace, .. }
            | Request::Reclaim { workspace, .. }
            | Request::Import { workspace, .. } => Scope::Workspace(workspace.clone()),
            // Named nodes are archived in their own workspace.
            Request::Archive {
                workspace, nodes, ..
            } => match nodes.first() {
                Some(id) => of(id),
                None => Scope::Workspace(workspace.clone()),
            },
            Request::Link { child: node, .. }
            | Request::Unlink { child: node, .. }
            | Request::Claim { node, .. }
            | Request::Renew { node, .. }
            | Request::Release { node, .. }
            | Request::Cancel { node, .. }
            | Request::Reopen { node, .. }
            | Request::Resolve { node, .. }
            | Request::Retry { node, .. }
            | Request::Unarchive { node } => of(node),
            Request::Complete(f) => of(&f.node),
            Request::CompleteMany(all) => match all.first() {
                Some(f) => of(&f.node),
                None => Scope::Unknown,
            },
            Request::Configure(_) | Request::SetSettings { .. } => Scope::Settings,
            Request::Acting { request, .. } | Request::Through { request, .. } => {
                request.scope(state)
            }
        }
    }
}

impl Scope {
    /// Whether a node of `workspace` is in this scope.
    pub fn holds(&self, workspace: &str) -> bool {
        matches!(self, Scope::Workspace(w) if w == workspace)
    }

    /// The workspace, when the scope is one.
    pub fn workspace(&self) -> Option<&str> {
        match self {
            Scope::Workspace(w) => Some(w),
            _ => None,
        }
    }
}

/// Refuses a request on nodes of more than one workspace (`what` names it): one write, one
/// workspace. Answers the workspace, when a node is known.
pub(super) fn one_workspace<'s>(
    state: &'s State,
    nodes: &[Id],
    what: &str,
) -> Result<Option<&'s str>> {
    let mut first: Option<&str> = None;
    for id in nodes {
        let Some(w) = state.workspace_of(id) else {
            continue; // refused as not_found by the completion itself
        };
        match first {
            None => first = Some(w),
            Some(f) if f != w => {
                return Err(Error::invalid(format!(
                    "{what} works in one workspace: {} is in workspace {w:?}, not {f:?}",
                    id.hex()
                )))
            }
            Some(_) => {}
        }
    }
    Ok(first)
}

/// [`super::valid_until`] for the nodes of `scope` alone: a decision in one workspace holds
/// until something in that workspace changes by time alone.
pub fn valid_until_in(state: &State, scope: &Scope, now: Millis) -> Option<Millis> {
    let Scope::Workspace(w) = scope else {
        return None;
    };
    let inside = |id: &Id| state.workspace_of(id) == Some(w.as_str());
    let leases = state
        .claimed_ids()
        .iter()
        .filter(|id| inside(id))
        .filter_map(|id| state.get(id)?.lease_end());
    let scheduled = state
        .scheduled()
        .iter()
        .filter(|(id, _)| inside(id))
        .map(|(_, t)| *t);
    let rates = super::holding::next_rate_room(state, now, &inside);
    leases.chain(scheduled).chain(rates).filter(|t| *t > now).min()
}
