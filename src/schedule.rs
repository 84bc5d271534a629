//! Picking work (SPEC section 7), pure: the critical path of every unfinished node and the
//! order in which `next`, `ready` and `claim-next` offer ready nodes.

use crate::id::Id;
use crate::model::{Node, Status};
use crate::rules::{Readiness, Tx};
use std::collections::HashMap;

/// A ready node as `next` would rank it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pick {
    pub id: Id,
    /// The largest sum of `estimate` along a chain of unfinished nodes waiting on this one,
    /// its own included.
    pub critical: u64,
    /// That chain, this node first.
    pub path: Vec<Id>,
}

/// The critical paths of a workspace's unfinished nodes.
pub struct Critical<'a> {
    /// Unfinished nodes in creation order.
    pub nodes: Vec<&'a Node>,
    pub index: HashMap<Id, usize>,
    /// `critical[i]`: the critical path length of `nodes[i]`.
    pub critical: Vec<u64>,
    /// The next node on `nodes[i]`'s critical path.
    pub next: Vec<Option<usize>>,
}

impl Critical<'_> {
    /// The chain from `nodes[i]` along its critical path.
    pub fn path(&self, i: usize) -> Vec<Id> {
        let mut path = vec![self.nodes[i].id];
        let mut at = i;
        while let Some(c) = self.next[at] {
            path.push(self.nodes[c].id);
            at = c;
        }
        path
    }

    /// The longest chain of all, if any node is unfinished.
    pub fn longest(&self) -> Vec<Id> {
        (0..self.nodes.len())
            .max_by_key(|&i| (self.critical[i], std::cmp::Reverse(i)))
            .map(|i| self.path(i))
            .unwrap_or_default()
    }
}

/// Computes critical paths over `workspace`'s unfinished nodes in `O(nodes + links)`.
pub fn critical<'a>(tx: &'a Tx<'_>, workspace: &str) -> Critical<'a> {
    let nodes: Vec<&Node> = tx
        .nodes()
        .filter(|n| n.workspace == workspace && !n.status.is_terminal())
        .collect();
    let index: HashMap<Id, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    // children[i]: unfinished nodes waiting on node i.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut waiting_on = vec![0usize; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for (dep, _) in n.prerequisites() {
            if let Some(&d) = index.get(&dep) {
                children[d].push(i);
                waiting_on[i] += 1;
            }
        }
    }
    // Kahn's order from the roots; the critical path is then filled from the leaves back.
    let mut topo: Vec<usize> = (0..nodes.len()).filter(|&i| waiting_on[i] == 0).collect();
    let mut k = 0;
    while k < topo.len() {
        let i = topo[k];
        k += 1;
        for &c in &children[i] {
            waiting_on[c] -= 1;
            if waiting_on[c] == 0 {
                topo.push(c);
            }
        }
    }
    let mut critical: Vec<u64> = nodes.iter().map(|n| n.estimate).collect();
    let mut next: Vec<Option<usize>> = vec![None; nodes.len()];
    for &i in topo.iter().rev() {
        let best = children[i].iter().copied().max_by_key(|&c| critical[c]);
        if let Some(c) = best {
            critical[i] = nodes[i].estimate.saturating_add(critical[c]);
            next[i] = Some(c);
        }
    }
    Critical {
        nodes,
        index,
        critical,
        next,
    }
}

/// Ready nodes of `workspace` whose role is `role` or "", best first: longest critical path,
/// then higher priority, then the exact role match, then the older node.
pub fn order(tx: &Tx<'_>, workspace: &str, role: &str) -> Vec<Pick> {
    let cp = critical(tx, workspace);
    let mut picks: Vec<usize> = (0..cp.nodes.len())
        .filter(|&i| {
            let n = cp.nodes[i];
            n.status == Status::Todo && (n.role == role || n.role.is_empty())
        })
        .filter(|&i| tx.readiness(cp.nodes[i]) == Readiness::Ready)
        .collect();
    picks.sort_by(|&i, &j| {
        let (a, b) = (cp.nodes[i], cp.nodes[j]);
        cp.critical[j]
            .cmp(&cp.critical[i])
            .then(b.priority.cmp(&a.priority))
            .then((b.role == role).cmp(&(a.role == role)))
            .then(i.cmp(&j))
    });
    picks
        .into_iter()
        .map(|i| Pick {
            id: cp.nodes[i].id,
            critical: cp.critical[i],
            path: cp.path(i),
        })
        .collect()
}
