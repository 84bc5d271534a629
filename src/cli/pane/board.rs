//! What the pane shows, read from the store: one board of a workspace (its nodes with
//! their derived words, the longest critical path, the lease clock) and the rows of the
//! forest the filters leave, in parent order.

use crate::error::Result;
use crate::id::{Actor, Id, IdMap};
use crate::{DisplayWord, ListFilter, NodeView, Store};
use std::time::{SystemTime, UNIX_EPOCH};

/// Which nodes the pane shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filters {
    pub workspace: String,
    /// Only nodes of this role.
    pub role: Option<String>,
    /// Only nodes this actor holds.
    pub holder: Option<Actor>,
    /// Show finished nodes too.
    pub finished: bool,
    /// Show archived nodes too (read from the archive: reloads).
    pub archived: bool,
    /// Only nodes whose summary contains this (any case), or whose id starts with it.
    pub search: String,
}

/// One consistent read of a workspace.
#[derive(Debug, Clone, Default)]
pub struct Board {
    /// The store, as `location` names it (no password).
    pub location: String,
    /// The store's version before the read: a later write shows as a newer version.
    pub version: u64,
    /// Every live node of the workspace (finished ones included) and, when asked for, the
    /// archived ones, in creation order.
    pub nodes: Vec<NodeView>,
    /// Where each node is in `nodes`.
    pub index: IdMap<usize>,
    /// The longest critical path, first node first.
    pub critical: Vec<Id>,
    /// The lease clock's time minus the local clock's, at the read (ms).
    pub clock_offset: i64,
    /// The names the store keeps for actors.
    pub names: crate::view::Names,
}

/// The local clock in Unix milliseconds.
pub fn local_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Board {
    /// Reads the workspace of `filters` (the archive too when `filters.archived`).
    pub fn load(store: &Store, filters: &Filters) -> Result<Board> {
        // The version first: a write between it and the reads shows as a change next time.
        let version = store.version()?;
        let mut nodes = store.list(&ListFilter {
            workspace: Some(filters.workspace.clone()),
            terminal: true,
            archived: filters.archived,
            ..ListFilter::default()
        })?;
        let names = store.names()?;
        nodes.iter_mut().for_each(|v| names.name_view(v));
        let critical = store.critical_path(&filters.workspace)?;
        let clock_offset = store.now()? as i64 - local_ms();
        let index = nodes
            .iter()
            .enumerate()
            .map(|(i, v)| (v.node.id, i))
            .collect();
        Ok(Board {
            location: store.location(),
            version,
            names,
            nodes,
            index,
            critical,
            clock_offset,
        })
    }

    pub fn get(&self, id: &Id) -> Option<&NodeView> {
        self.index.get(id).map(|&i| &self.nodes[i])
    }

    /// The lease clock now, as the store would see it.
    pub fn now(&self) -> i64 {
        local_ms() + self.clock_offset
    }

    /// How many live nodes show each display word, in the order the header lists them.
    pub fn counts(&self) -> Vec<(DisplayWord, usize)> {
        const ORDER: [DisplayWord; 10] = [
            DisplayWord::Ready,
            DisplayWord::Scheduled,
            DisplayWord::Claimed,
            DisplayWord::Expired,
            DisplayWord::Blocked,
            DisplayWord::Parked,
            DisplayWord::Todo,
            DisplayWord::Done,
            DisplayWord::Failed,
            DisplayWord::Cancelled,
        ];
        ORDER
            .iter()
            .map(|&d| {
                let n = self
                    .nodes
                    .iter()
                    .filter(|v| !v.node.archived && self.display(v) == d);
                (d, n.count())
            })
            .collect()
    }

    /// A node's display word now: a claim whose lease ran out since the read is expired, a
    /// scheduled node whose time came since the read is ready.
    pub fn display(&self, v: &NodeView) -> DisplayWord {
        match (v.display, v.node.lease_end()) {
            (DisplayWord::Claimed, Some(end)) if (end as i64) <= self.now() => DisplayWord::Expired,
            (DisplayWord::Scheduled, _) if self.scheduled_left(v).is_none() => DisplayWord::Ready,
            (d, _) => d,
        }
    }

    /// Milliseconds until a scheduled node becomes ready (its `not_before`); `None` for a
    /// node that is not scheduled, or whose time came.
    pub fn scheduled_left(&self, v: &NodeView) -> Option<i64> {
        match (v.display, v.node.not_before) {
            (DisplayWord::Scheduled, Some(at)) => Some(at as i64 - self.now()).filter(|&l| l > 0),
            _ => None,
        }
    }

    /// Milliseconds left on a claim's lease (negative once it ran out).
    pub fn lease_left(&self, v: &NodeView) -> Option<i64> {
        match v.display {
            DisplayWord::Claimed | DisplayWord::Expired => {
                v.node.lease_end().map(|end| end as i64 - self.now())
            }
            _ => None,
        }
    }

    /// True when a node read as scheduled is ready by now: the read is out of date.
    pub fn time_came(&self) -> bool {
        self.nodes
            .iter()
            .any(|v| v.display == DisplayWord::Scheduled && self.scheduled_left(v).is_none())
    }

    pub fn on_critical_path(&self, id: &Id) -> bool {
        self.critical.contains(id)
    }
}

/// A line of the forest: a node and how deep it sits under its parents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// PickOrder into [`Board::nodes`].
    pub node: usize,
    pub depth: u16,
}

/// True when `v` passes the filters (the workspace is the board's already).
fn shown(v: &NodeView, f: &Filters) -> bool {
    let n = &v.node;
    if n.status.is_terminal() && !n.archived && !f.finished {
        return false;
    }
    if f.role.as_ref().is_some_and(|r| &n.role != r)
        || f.holder.is_some_and(|h| n.holder != Some(h))
    {
        return false;
    }
    if f.search.is_empty() {
        return true;
    }
    let q = f.search.to_lowercase();
    // A display word finds the nodes showing it (`scheduled`, `expired`, ...).
    n.summary.to_lowercase().contains(&q) || n.id.hex().starts_with(&q) || v.display.as_str() == q
}

/// The nodes the filters leave, as a forest: each under its parent (when that is shown
/// too), children in creation order.
pub fn rows(snap: &Board, filters: &Filters) -> Vec<Row> {
    let visible: Vec<bool> = snap.nodes.iter().map(|v| shown(v, filters)).collect();
    let mut children: IdMap<Vec<usize>> = IdMap::default();
    let mut roots = Vec::new();
    for (i, v) in snap.nodes.iter().enumerate().filter(|(i, _)| visible[*i]) {
        match v
            .node
            .parent
            .and_then(|p| snap.index.get(&p).map(|&j| (p, j)))
        {
            Some((p, j)) if visible[j] => children.entry(p).or_default().push(i),
            _ => roots.push(i),
        }
    }
    // Gates waiting for a person come first: the lead's decisions are the top of the pane.
    roots.sort_by_key(|&i| !snap.nodes[i].awaits_decision());
    let mut out = Vec::with_capacity(roots.len());
    let mut stack: Vec<(usize, u16)> = roots.into_iter().rev().map(|i| (i, 0)).collect();
    while let Some((i, depth)) = stack.pop() {
        out.push(Row { node: i, depth });
        if let Some(kids) = children.get(&snap.nodes[i].node.id) {
            stack.extend(kids.iter().rev().map(|&k| (k, depth.saturating_add(1))));
        }
    }
    out
}
