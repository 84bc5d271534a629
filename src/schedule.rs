//! Picking work (SPEC section 7), pure: the critical path of every unfinished node and the
//! order in which `next`, `ready` and `claim-next` offer ready nodes.

use crate::id::Id;
use crate::model::Status;
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

/// Ready nodes of `workspace` whose role is `role` or "", best first: longest critical path,
/// then higher priority, then the exact role match, then the older node.
pub fn order(tx: &Tx<'_>, workspace: &str, role: &str) -> Vec<Pick> {
    let nodes: Vec<_> = tx
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
    let mut next_on_path: Vec<Option<usize>> = vec![None; nodes.len()];
    for &i in topo.iter().rev() {
        let best = children[i].iter().copied().max_by_key(|&c| critical[c]);
        if let Some(c) = best {
            critical[i] = nodes[i].estimate.saturating_add(critical[c]);
            next_on_path[i] = Some(c);
        }
    }
    let mut picks: Vec<(usize, Pick)> = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.status == Status::Todo && (n.role == role || n.role.is_empty()))
        .filter(|(_, n)| tx.readiness(n) == Readiness::Ready)
        .map(|(i, n)| {
            let mut path = vec![n.id];
            let mut at = i;
            while let Some(c) = next_on_path[at] {
                path.push(nodes[c].id);
                at = c;
            }
            (
                i,
                Pick {
                    id: n.id,
                    critical: critical[i],
                    path,
                },
            )
        })
        .collect();
    picks.sort_by(|(i, a), (j, b)| {
        let (na, nb) = (nodes[*i], nodes[*j]);
        b.critical
            .cmp(&a.critical)
            .then(nb.priority.cmp(&na.priority))
            .then((nb.role == role).cmp(&(na.role == role)))
            .then(i.cmp(j))
    });
    picks.into_iter().map(|(_, p)| p).collect()
}
