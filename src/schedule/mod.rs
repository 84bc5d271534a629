//! Picking work (docs/reference.md, "Verbs"), pure: the critical path of every unfinished node and the
//! order in which `next`, `ready` and `claim-next` offer ready nodes.
//!
//! [`best`] and [`order`] read the pick order the state keeps up to date ([`pick_order`]), so they
//! cost what they return, not the DAG's size; [`best_full`] and [`order_full`] recompute
//! everything from the nodes, and the property tests hold the two to the same answers.

pub mod pick_order;
pub mod ready;

use crate::id::{Id, IdMap};
use crate::model::{Millis, Node, Status};
use pick_order::PickOrder;
use ready::Readiness;
use std::cmp::Ordering;

/// What picking reads: the live nodes as a transaction sees them (the state under it with
/// its changes on top), and the pick order the state keeps up to date. The rules' `Tx`
/// is the one implementation.
pub trait PickView {
    fn get(&self, id: &Id) -> Option<&Node>;
    /// The time of the pick: a node whose `not_before` is later is not ready.
    fn now(&self) -> Millis;
    /// Every live node as this view sees it, in creation order.
    fn nodes(&self) -> impl Iterator<Item = &Node> + '_;
    fn readiness(&self, node: &Node) -> Readiness;
    /// The nodes this view changed over the state under it (new ones included).
    fn changed(&self) -> &[Node];
    fn is_changed(&self, id: &Id) -> bool;
    /// The state's kept pick order when it holds for every node this view did not change
    /// and is built (or worth building now); `None`: compute from the nodes.
    fn kept_order(&self) -> Option<&PickOrder>;
    /// The state's kept pick order, built if it is not yet.
    fn order_index(&self) -> &PickOrder;
}

/// A ready node as `next` would rank it.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Pick {
    pub id: Id,
    /// The largest sum of `estimate` along a chain of unfinished nodes waiting on this one,
    /// its own included.
    pub critical: u64,
    /// That chain, this node first.
    pub path: Vec<Id>,
    /// The node's summary.
    pub summary: String,
}

/// The critical paths of a workspace's unfinished nodes.
pub struct Critical<'a> {
    /// Unfinished nodes in creation order.
    pub nodes: Vec<&'a Node>,
    /// `critical[i]`: the critical path length of `nodes[i]`.
    pub critical: Vec<u64>,
    /// The next node on `nodes[i]`'s critical path.
    pub next: Vec<Option<u32>>,
}

impl Critical<'_> {
    /// The chain from `nodes[i]` along its critical path.
    pub fn path(&self, i: usize) -> Vec<Id> {
        let mut path = vec![self.nodes[i].id];
        let mut at = i;
        while let Some(c) = self.next[at] {
            at = c as usize;
            path.push(self.nodes[at].id);
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

    fn pick(&self, i: usize) -> Pick {
        Pick {
            id: self.nodes[i].id,
            critical: self.critical[i],
            path: self.path(i),
            summary: self.nodes[i].summary.clone(),
        }
    }
}

/// Computes critical paths over `workspace`'s unfinished nodes in `O(nodes + links)`, with
/// the links held in flat arrays (one allocation each, whatever the DAG's size).
pub fn critical<'a, V: PickView>(tx: &'a V, workspace: &str) -> Critical<'a> {
    let nodes: Vec<&Node> = tx
        .nodes()
        .filter(|n| n.workspace == workspace && !n.status.is_terminal())
        .collect();
    let n = nodes.len();
    let mut slot: IdMap<u32> = IdMap::with_capacity_and_hasher(n, Default::default());
    for (i, node) in nodes.iter().enumerate() {
        slot.insert(node.id, i as u32);
    }
    // Links between unfinished nodes, as (prerequisite, waiting node) pairs.
    let mut links: Vec<(u32, u32)> = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        for (dep, _) in node.prerequisites() {
            if let Some(&d) = slot.get(&dep) {
                links.push((d, i as u32));
            }
        }
    }
    // children of d: child[start[d]..start[d + 1]].
    let mut start = vec![0u32; n + 1];
    for &(d, _) in &links {
        start[d as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut child = vec![0u32; links.len()];
    let mut waiting_on = vec![0u32; n];
    for &(d, c) in &links {
        child[fill[d as usize] as usize] = c;
        fill[d as usize] += 1;
        waiting_on[c as usize] += 1;
    }
    let children = |i: usize| &child[start[i] as usize..start[i + 1] as usize];
    // Kahn's order from the roots; the critical path is then filled from the leaves back.
    let mut topo: Vec<u32> = (0..n as u32)
        .filter(|&i| waiting_on[i as usize] == 0)
        .collect();
    let mut k = 0;
    while k < topo.len() {
        let i = topo[k] as usize;
        k += 1;
        for &c in children(i) {
            waiting_on[c as usize] -= 1;
            if waiting_on[c as usize] == 0 {
                topo.push(c);
            }
        }
    }
    let mut critical: Vec<u64> = nodes.iter().map(|n| n.estimate).collect();
    let mut next: Vec<Option<u32>> = vec![None; n];
    for &i in topo.iter().rev() {
        let i = i as usize;
        if let Some(&c) = children(i).iter().max_by_key(|&&c| critical[c as usize]) {
            critical[i] = nodes[i].estimate.saturating_add(critical[c as usize]);
            next[i] = Some(c);
        }
    }
    Critical {
        nodes,
        critical,
        next,
    }
}

/// Ready candidates of `workspace` for `role` (nodes of that role or of none), unsorted.
fn candidates<V: PickView>(cp: &Critical<'_>, tx: &V, role: &str) -> Vec<usize> {
    (0..cp.nodes.len())
        .filter(|&i| {
            let n = cp.nodes[i];
            n.status == Status::Todo && (n.role == role || n.role.is_empty())
        })
        .filter(|&i| tx.readiness(cp.nodes[i]) == Readiness::Ready)
        .collect()
}

/// Section 7's order: longest critical path, then higher priority, then the exact role
/// match, then the older node.
fn rank(cp: &Critical<'_>, role: &str, i: usize, j: usize) -> Ordering {
    let (a, b) = (cp.nodes[i], cp.nodes[j]);
    cp.critical[j]
        .cmp(&cp.critical[i])
        .then(b.priority.cmp(&a.priority))
        .then((b.role == role).cmp(&(a.role == role)))
        .then(i.cmp(&j))
}

/// Ready nodes of `workspace` whose role is `role` or "", best first.
pub fn order<V: PickView>(tx: &V, workspace: &str, role: &str) -> Vec<Pick> {
    match indexed(tx, workspace, role, usize::MAX) {
        Some(c) => c.iter().map(|c| pick_of(tx, c)).collect(),
        None => order_full(tx, workspace, role),
    }
}

/// The first `n` ready nodes in pick order (fewer when fewer are ready).
pub fn first<V: PickView>(tx: &V, workspace: &str, role: &str, n: usize) -> Vec<Pick> {
    match indexed(tx, workspace, role, n) {
        Some(c) => c.iter().map(|c| pick_of(tx, c)).collect(),
        None if n == 1 => best_full(tx, workspace, role).into_iter().collect(),
        None => {
            let mut all = order_full(tx, workspace, role);
            all.truncate(n);
            all
        }
    }
}

/// The ready node `next` picks.
pub fn best<V: PickView>(tx: &V, workspace: &str, role: &str) -> Option<Pick> {
    match indexed(tx, workspace, role, 1) {
        Some(c) => c.first().map(|c| pick_of(tx, c)),
        None => best_full(tx, workspace, role),
    }
}

/// [`order`] computed from the nodes alone: every critical path, every candidate ranked.
pub fn order_full<V: PickView>(tx: &V, workspace: &str, role: &str) -> Vec<Pick> {
    let cp = critical(tx, workspace);
    let mut picks = candidates(&cp, tx, role);
    picks.sort_unstable_by(|&i, &j| rank(&cp, role, i, j));
    picks.into_iter().map(|i| cp.pick(i)).collect()
}

/// [`best`] computed from the nodes alone, without ranking the others.
pub fn best_full<V: PickView>(tx: &V, workspace: &str, role: &str) -> Option<Pick> {
    let cp = critical(tx, workspace);
    candidates(&cp, tx, role)
        .into_iter()
        .min_by(|&i, &j| rank(&cp, role, i, j))
        .map(|i| cp.pick(i))
}

/// A ready candidate as the pick order ranks it.
#[derive(Debug, Clone, Copy)]
struct Cand {
    id: Id,
    critical: u64,
    priority: i64,
    /// Its role is the asked one (not "").
    exact: bool,
    order: u64,
}

/// Section 7's order on candidates: longest critical path, higher priority, exact role,
/// older node.
fn cand_rank(a: &Cand, b: &Cand) -> Ordering {
    b.critical
        .cmp(&a.critical)
        .then(b.priority.cmp(&a.priority))
        .then(b.exact.cmp(&a.exact))
        .then(a.order.cmp(&b.order))
}

/// Up to `limit` ready candidates, best first, read from the pick order: `None` when the
/// transaction changed more than expired claims (then only a full computation is exact).
fn indexed<V: PickView>(tx: &V, workspace: &str, role: &str, limit: usize) -> Option<Vec<Cand>> {
    let ix = tx.kept_order()?;
    let cand = |id: Id, node: &Node| -> Option<Cand> {
        Some(Cand {
            id,
            critical: ix.critical(&id)?,
            priority: node.priority,
            exact: !role.is_empty() && node.role == role,
            order: ix.order(&id)?,
        })
    };
    // The claims this transaction handed back are ready again (the pick order has them claimed).
    let mut out: Vec<Cand> = tx
        .changed()
        .iter()
        .filter(|n| n.workspace == workspace && (n.role == role || n.role.is_empty()))
        .filter(|n| tx.readiness(n) == Readiness::Ready)
        .filter_map(|n| cand(n.id, n))
        .collect();
    // Nodes whose `not_before` has passed are ready; the pick order keeps them apart.
    let due = ix
        .scheduled()
        .take_while(|(t, _)| *t <= tx.now())
        .filter(|(_, id)| !tx.is_changed(id))
        .filter_map(|(_, id)| tx.get(id).map(|n| (*id, n)))
        .filter(|(_, n)| n.workspace == workspace && (n.role == role || n.role.is_empty()));
    let due: Vec<Cand> = due.filter_map(|(id, n)| cand(id, n)).collect();
    out.extend(due);
    let roles: &[&str] = if role.is_empty() { &[""] } else { &[role, ""] };
    for r in roles {
        let keys = ix.ready_of(workspace, r).filter(|k| !tx.is_changed(&k.id));
        for k in keys.take(limit) {
            out.push(Cand {
                id: k.id,
                critical: k.critical.0,
                priority: k.priority.0,
                exact: !r.is_empty(),
                order: k.order,
            });
        }
    }
    out.sort_unstable_by(cand_rank);
    out.truncate(limit);
    Some(out)
}

/// A candidate with its critical path (followed through the pick order) and summary.
fn pick_of<V: PickView>(tx: &V, c: &Cand) -> Pick {
    let ix = tx.order_index();
    let mut path = vec![c.id];
    let mut at = c.id;
    while let Some(next) = ix.next_on_path(&at) {
        path.push(next);
        at = next;
    }
    Pick {
        id: c.id,
        critical: c.critical,
        path,
        summary: tx.get(&c.id).map(|n| n.summary.clone()).unwrap_or_default(),
    }
}

/// The nodes of `workspace` that may still make a node ready for `role` without anyone
/// adding work: the live claims (a claimed node of that role or of none, which a release
/// puts back, and every claimed node that a waiting `todo` node of that role depends on,
/// directly or through other open nodes) and the scheduled nodes among them, whose time
/// will come. Empty when nothing can bring such work: a worker that finds nothing ready
/// may then stop instead of waiting. `tx` sees expired claims handed back already.
pub fn pending<V: PickView>(tx: &V, workspace: &str, role: &str) -> Vec<Id> {
    let mine = |n: &Node| n.workspace == workspace && (n.role == role || n.role.is_empty());
    let mut found: Vec<Id> = Vec::new();
    let mut seen: IdMap<()> = IdMap::default();
    let mut stack: Vec<Id> = Vec::new();
    for n in tx.nodes().filter(|n| mine(n)) {
        match n.status {
            Status::Claimed => {
                seen.insert(n.id, ());
                found.push(n.id);
            }
            Status::Todo => match tx.readiness(n) {
                Readiness::Waiting(_) => stack.extend(n.prerequisites().map(|(d, _)| d)),
                Readiness::Scheduled(_) => {
                    seen.insert(n.id, ());
                    found.push(n.id);
                }
                // Ready, yet passed over: a claim, a pool or a rate's window holds one of
                // its resources, and will let go of it.
                Readiness::Ready if !n.resources.is_empty() => {
                    seen.insert(n.id, ());
                    found.push(n.id);
                }
                _ => {}
            },
            _ => {}
        }
    }
    // Walk up through open prerequisites; a claimed one may finish and unblock the rest.
    while let Some(id) = stack.pop() {
        if seen.insert(id, ()).is_some() {
            continue;
        }
        let Some(n) = tx.get(&id) else { continue };
        match n.status {
            Status::Claimed => found.push(id),
            // A gate waiting for a person: the decision will come.
            // A container with open children finishes when they do (an empty one waits for
            // a planner, as a node waits for work to be added).
            Status::Todo
                if matches!(
                    tx.readiness(n),
                    Readiness::Scheduled(_) | Readiness::Gate | Readiness::Container { open: 1.., .. }
                ) =>
            {
                found.push(id)
            }
            Status::Todo => stack.extend(n.prerequisites().map(|(d, _)| d)),
            _ => {}
        }
    }
    found
}
