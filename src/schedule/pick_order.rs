//! The pick order kept up to date as the state changes, so that `claim-next`, `next` and
//! `ready` cost what they touch instead of a pass over the whole DAG: every unfinished
//! node's critical path length, the nodes waiting on each node, and the ready `todo` nodes
//! in `claim-next`'s order (longest critical path, then higher priority, then older),
//! grouped by workspace and role.
//!
//! A change to a node touches the node, the nodes waiting on it (their readiness), and the
//! chains of prerequisites above it whose critical path length it changes. The pick order is
//! derived data: [`PickOrder::build`] makes it from the nodes alone, and the property tests
//! check that the incremental one always equals a fresh build and that the picks it gives
//! equal the full recomputation of [`super::order_full`].

use super::ready::{readiness, Readiness};
use crate::id::{Id, IdMap};
use crate::model::{Millis, Node, Settings, Status};
use std::cmp::Reverse;
use std::collections::BTreeSet;

/// Where a ready node sits in the pick order of its workspace and role: longest critical
/// path, then higher priority, then older (its creation number), then its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ReadyKey {
    pub critical: Reverse<u64>,
    pub priority: Reverse<i64>,
    /// Creation order: the older node first.
    pub order: u64,
    pub id: Id,
}

/// How the pick order reads the rest of the state while it updates.
pub trait Lookup {
    fn node(&self, id: &Id) -> Option<&Node>;
    /// A prerequisite's status: live, archived, or `None` when unknown.
    fn status(&self, id: &Id) -> Option<Status>;
    fn settings(&self) -> &Settings;
}

/// The derived pick order of a state (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct PickOrder {
    p: Parts,
}

/// What an [`PickOrder`] holds, for a store that keeps it in its own format (a snapshot's
/// stored pick order): [`PickOrder::parts`] and [`PickOrder::from_parts`].
#[derive(Debug, Clone, Default)]
pub struct Parts {
    /// The next creation number.
    pub seq: u64,
    /// Each live node's creation number.
    pub order: IdMap<u64>,
    /// Live nodes waiting on each node (live, archived or unknown), each once.
    pub waiters: IdMap<Vec<Id>>,
    /// The critical path length of every unfinished live node.
    pub critical: IdMap<u64>,
    /// A number for each (workspace, role) that has had a ready node.
    pub groups: std::collections::HashMap<(String, String), usize>,
    /// Ready `todo` nodes of each group, in pick order (numbers compare faster than the
    /// workspace and role strings would, at every step of a tree search).
    pub ready: Vec<BTreeSet<ReadyKey>>,
    /// Each ready node's group and key.
    pub keyed: IdMap<(usize, ReadyKey)>,
    /// The nodes that would be ready but for their `not_before` (passed or to come), by
    /// that time: which of them is ready depends on the time of the pick, so they are kept
    /// apart from `ready`.
    pub scheduled: BTreeSet<(Millis, Id)>,
    /// Each such node's `not_before`.
    pub scheduled_at: IdMap<Millis>,
}

/// A pick order built the second time a pick asks for it: the first pick of a state is
/// computed from the nodes (as cheap as building the pick order once), so a process that picks
/// once (a `claimdag claim-next`) or never (a `claim`, a `show`) does not pay for it, and a
/// long-lived one pays once. Once built, every change keeps it up to date.
#[derive(Debug, Default)]
pub struct Lazy {
    cell: std::sync::OnceLock<PickOrder>,
    asked: std::sync::atomic::AtomicBool,
}

impl Clone for Lazy {
    fn clone(&self) -> Lazy {
        let asked = self.asked.load(std::sync::atomic::Ordering::Relaxed);
        Lazy {
            cell: self.cell.clone(),
            asked: asked.into(),
        }
    }
}

/// Derived data: two states with the same nodes are equal, built pick order or not.
impl PartialEq for Lazy {
    fn eq(&self, _: &Lazy) -> bool {
        true
    }
}

impl Eq for Lazy {}

impl Lazy {
    /// The pick order, built by `build` if it is not yet.
    pub fn get(&self, build: impl FnOnce() -> PickOrder) -> &PickOrder {
        self.cell.get_or_init(build)
    }

    /// The pick order if it is built; built now if this is the second time it is asked for.
    pub fn warm(&self, build: impl FnOnce() -> PickOrder) -> Option<&PickOrder> {
        if let Some(ix) = self.cell.get() {
            return Some(ix);
        }
        if self.asked.swap(true, std::sync::atomic::Ordering::Relaxed) {
            return Some(self.get(build));
        }
        None
    }

    /// The pick order, out of the cell, if it was built (to update it, then [`Lazy::put`]).
    pub fn take(&mut self) -> Option<PickOrder> {
        self.cell.take()
    }

    pub fn put(&mut self, ix: PickOrder) {
        let _ = self.cell.set(ix);
    }

    pub fn get_mut(&mut self) -> Option<&mut PickOrder> {
        self.cell.get_mut()
    }

    /// The pick order if it is built, without building it.
    pub fn peek(&self) -> Option<&PickOrder> {
        self.cell.get()
    }
}

/// Derived data: two states with the same nodes are equal whatever their indexes hold.
impl PartialEq for PickOrder {
    fn eq(&self, _: &PickOrder) -> bool {
        true
    }
}

impl Eq for PickOrder {}

/// A node's prerequisites (hard and soft), each once.
fn prereqs(n: &Node) -> Vec<Id> {
    let mut v: Vec<Id> = n.prerequisites().map(|(d, _)| d).collect();
    v.sort_unstable();
    v.dedup();
    v
}

impl PickOrder {
    /// Builds the pick order of `nodes` (in creation order).
    pub fn build(nodes: &[Node], st: &dyn Lookup) -> PickOrder {
        let mut ix = PickOrder::default();
        for n in nodes {
            ix.p.order.insert(n.id, ix.p.seq);
            ix.p.seq += 1;
            for p in prereqs(n) {
                ix.p.waiters.entry(p).or_default().push(n.id);
            }
        }
        // Critical paths from the leaves up (see `settle`).
        let open = |id: &Id| st.node(id).is_some_and(|n| !n.status.is_terminal());
        let mut left: IdMap<usize> = IdMap::default();
        for n in nodes.iter().filter(|n| !n.status.is_terminal()) {
            left.insert(
                n.id,
                ix.waiters_of(&n.id).iter().filter(|w| open(w)).count(),
            );
        }
        ix.settle(st, left);
        for n in nodes {
            ix.rekey(st, &n.id);
        }
        ix
    }

    /// Computes the critical paths of the nodes in `left` (each with the number of its open
    /// waiters still to compute) from the leaves up, in Kahn's order on the waiting direction:
    /// a node's value needs its unfinished waiters' values first.
    fn settle(&mut self, st: &dyn Lookup, mut left: IdMap<usize>) {
        let mut ready: Vec<Id> = left
            .iter()
            .filter(|(_, &c)| c == 0)
            .map(|(id, _)| *id)
            .collect();
        while let Some(id) = ready.pop() {
            let c = self.compute(st, &id);
            self.p.critical.insert(id, c);
            for p in st.node(&id).map(prereqs).unwrap_or_default() {
                if let Some(c) = left.get_mut(&p) {
                    *c -= 1;
                    if *c == 0 {
                        ready.push(p);
                    }
                }
            }
        }
    }

    fn waiters_of(&self, id: &Id) -> &[Id] {
        self.p.waiters.get(id).map_or(&[], |v| v.as_slice())
    }

    /// `id`'s critical path length from its waiters' current values.
    fn compute(&self, st: &dyn Lookup, id: &Id) -> u64 {
        let Some(n) = st.node(id) else { return 0 };
        let below = self
            .waiters_of(id)
            .iter()
            .filter_map(|w| self.p.critical.get(w))
            .max()
            .copied()
            .unwrap_or(0);
        n.estimate.saturating_add(below)
    }

    /// The critical path length of an unfinished live node.
    pub fn critical(&self, id: &Id) -> Option<u64> {
        self.p.critical.get(id).copied()
    }

    /// The creation number of a live node (older nodes have smaller ones).
    pub fn order(&self, id: &Id) -> Option<u64> {
        self.p.order.get(id).copied()
    }

    /// The ready nodes of `workspace` with role exactly `role`, best first.
    pub fn ready_of<'a>(
        &'a self,
        workspace: &str,
        role: &str,
    ) -> impl Iterator<Item = &'a ReadyKey> + 'a {
        let group = self
            .p
            .groups
            .get(&(workspace.to_string(), role.to_string()));
        group
            .and_then(|&g| self.p.ready.get(g))
            .into_iter()
            .flatten()
    }

    /// The next node on `id`'s critical path: the unfinished waiter with the longest one
    /// (of several, the newest, as the full computation picks).
    pub fn next_on_path(&self, id: &Id) -> Option<Id> {
        self.waiters_of(id)
            .iter()
            .filter_map(|w| Some((self.p.critical.get(w)?, self.p.order.get(w)?, *w)))
            .max_by_key(|&(c, o, _)| (*c, *o))
            .map(|(_, _, w)| w)
    }

    /// The nodes that would be ready but for a `not_before`, and that time, earliest first.
    pub fn scheduled(&self) -> impl Iterator<Item = &(Millis, Id)> + '_ {
        self.p.scheduled.iter()
    }

    /// Takes `id` out of the ready and scheduled sets.
    fn unkey(&mut self, id: &Id) {
        if let Some((g, k)) = self.p.keyed.remove(id) {
            self.p.ready[g].remove(&k);
        }
        if let Some(t) = self.p.scheduled_at.remove(id) {
            self.p.scheduled.remove(&(t, *id));
        }
    }

    /// Puts `id` in or out of the ready set (or the scheduled one), with its current key.
    fn rekey(&mut self, st: &dyn Lookup, id: &Id) {
        self.unkey(id);
        let Some(n) = st.node(id) else { return };
        if n.status != Status::Todo
            || readiness(&|d| st.status(d), st.settings(), n) != Readiness::Ready
        {
            return;
        }
        if let Some(t) = n.not_before {
            if self.p.critical.contains_key(id) && self.p.order.contains_key(id) {
                self.p.scheduled.insert((t, *id));
                self.p.scheduled_at.insert(*id, t);
            }
            return;
        }
        let (Some(&critical), Some(&order)) = (self.p.critical.get(id), self.p.order.get(id))
        else {
            return;
        };
        let k = ReadyKey {
            critical: Reverse(critical),
            priority: Reverse(n.priority),
            order,
            id: *id,
        };
        let g = match self.p.groups.get(&(n.workspace.clone(), n.role.clone())) {
            Some(&g) => g,
            None => {
                self.p.ready.push(BTreeSet::new());
                let g = self.p.ready.len() - 1;
                self.p
                    .groups
                    .insert((n.workspace.clone(), n.role.clone()), g);
                g
            }
        };
        self.p.ready[g].insert(k);
        self.p.keyed.insert(*id, (g, k));
    }

    /// Recomputes critical path lengths from `start` up through the prerequisites, as far
    /// as they change, and re-keys the ready nodes whose length changed.
    fn propagate(&mut self, st: &dyn Lookup, start: Vec<Id>) {
        let mut work = start;
        while let Some(id) = work.pop() {
            let open = st.node(&id).is_some_and(|n| !n.status.is_terminal());
            let new = open.then(|| self.compute(st, &id));
            let old = self.p.critical.get(&id).copied();
            if new == old {
                continue;
            }
            match new {
                Some(c) => self.p.critical.insert(id, c),
                None => self.p.critical.remove(&id),
            };
            self.rekey(st, &id);
            if let Some(n) = st.node(&id) {
                work.extend(prereqs(n));
            }
        }
    }

    /// `old` (the node before, `None` when it was not live: new, or back from the archive)
    /// became `new`, which the state `st` already holds.
    pub fn update(&mut self, st: &dyn Lookup, old: Option<&Node>, new: &Node) {
        let id = new.id;
        if old.is_none() {
            self.p.order.insert(id, self.p.seq);
            self.p.seq += 1;
        }
        let before = old.map(prereqs).unwrap_or_default();
        let after = prereqs(new);
        for p in before.iter().filter(|p| !after.contains(p)) {
            if let Some(v) = self.p.waiters.get_mut(p) {
                v.retain(|w| *w != id);
            }
        }
        for p in after.iter().filter(|p| !before.contains(p)) {
            self.p.waiters.entry(*p).or_default().push(id);
        }
        // Its own length (its estimate or status may have moved), and the prerequisites
        // that gained or lost it as a waiter; the chains above them as far as they change.
        let mut touched = vec![id];
        touched.extend(before.iter().filter(|p| !after.contains(p)));
        touched.extend(after.iter().filter(|p| !before.contains(p)));
        self.propagate(st, touched);
        self.rekey(st, &id);
        if old.is_none_or(|o| o.status != new.status) {
            for w in self.waiters_of(&id).to_vec() {
                self.rekey(st, &w);
            }
        }
    }

    /// Many nodes changed at once (an import): `changed` holds each one's value before
    /// (`None` when it was not live), in the order they were put. Instead of following the
    /// chains above each node one by one (quadratic for a long chain imported at once), the
    /// critical path lengths of the changed nodes and everything above them are computed
    /// again in one pass, waiters first.
    pub fn update_batch(&mut self, st: &dyn Lookup, changed: &[(Option<Node>, Id)]) {
        self.batch(st, changed, Vec::new(), Vec::new());
    }

    /// Brings the pick order of a snapshot's nodes up to date with what changed since it was
    /// written, in one pass as [`PickOrder::update_batch`] does: `gone` holds the snapshot's
    /// value of each of its nodes archived since, `changed` the snapshot's value (`None` for
    /// a node new since, or put back after its archiving) of every node put since, the new
    /// ones in the order they were put; `st` holds the state now.
    pub fn catch_up(&mut self, st: &dyn Lookup, gone: &[Node], changed: &[(Option<Node>, Id)]) {
        let mut seeds = Vec::new();
        let mut moved = Vec::new();
        for n in gone {
            // Its chains above lose it and its waiters see its archived status.
            self.remove(n);
            seeds.extend(prereqs(n));
            moved.push(n.id);
        }
        self.batch(st, changed, seeds, moved);
    }

    fn batch(
        &mut self,
        st: &dyn Lookup,
        changed: &[(Option<Node>, Id)],
        mut seeds: Vec<Id>,
        mut moved: Vec<Id>,
    ) {
        for (old, id) in changed {
            let Some(new) = st.node(id) else { continue };
            if old.is_none() {
                self.p.order.insert(*id, self.p.seq);
                self.p.seq += 1;
            }
            let before = old.as_ref().map(prereqs).unwrap_or_default();
            let after = prereqs(new);
            for p in before.iter().filter(|p| !after.contains(p)) {
                if let Some(v) = self.p.waiters.get_mut(p) {
                    v.retain(|w| w != id);
                }
            }
            for p in after.iter().filter(|p| !before.contains(p)) {
                self.p.waiters.entry(*p).or_default().push(*id);
            }
            seeds.push(*id);
            seeds.extend(before.iter().chain(after.iter()).copied());
            if old.as_ref().is_none_or(|o| o.status != new.status) {
                moved.push(*id);
            }
        }
        // The region: the changed nodes and every live node above them.
        let mut region: IdMap<()> = IdMap::default();
        while let Some(id) = seeds.pop() {
            if let Some(n) = st.node(&id) {
                if region.insert(id, ()).is_none() {
                    seeds.extend(prereqs(n));
                }
            }
        }
        let open = |id: &Id| st.node(id).is_some_and(|n| !n.status.is_terminal());
        let mut left: IdMap<usize> = IdMap::default();
        for id in region.keys() {
            self.p.critical.remove(id);
            if open(id) {
                let inside = self
                    .waiters_of(id)
                    .iter()
                    .filter(|w| region.contains_key(w) && open(w));
                left.insert(*id, inside.count());
            }
        }
        self.settle(st, left);
        let mut rekey: Vec<Id> = region.keys().copied().collect();
        for id in moved {
            rekey.extend_from_slice(self.waiters_of(&id));
        }
        for id in rekey {
            self.rekey(st, &id);
        }
    }

    /// `node` left the live state (archived): it is terminal, so only its bookkeeping goes.
    /// The nodes waiting on it keep it as a waiter key: it may come back.
    pub fn remove(&mut self, node: &Node) {
        self.p.order.remove(&node.id);
        self.p.critical.remove(&node.id);
        self.unkey(&node.id);
        for p in prereqs(node) {
            if let Some(v) = self.p.waiters.get_mut(&p) {
                v.retain(|w| *w != node.id);
                if v.is_empty() {
                    self.p.waiters.remove(&p);
                }
            }
        }
    }

    /// The settings changed: readiness may have moved for every `todo` node.
    pub fn settings_changed(&mut self, st: &dyn Lookup, nodes: &[Node]) {
        for n in nodes.iter().filter(|n| n.status == Status::Todo) {
            self.rekey(st, &n.id);
        }
    }

    /// What the pick order holds (to store it in another format).
    pub fn parts(&self) -> &Parts {
        &self.p
    }

    /// A pick order made of stored parts (see [`PickOrder::parts`]).
    pub fn from_parts(p: Parts) -> PickOrder {
        PickOrder { p }
    }

    /// Differences from a fresh build, for the tests: empty when the pick order is exact.
    pub fn differences(&self, nodes: &[Node], st: &dyn Lookup) -> Vec<String> {
        let fresh = PickOrder::build(nodes, st);
        let mut out = Vec::new();
        if self.p.critical != fresh.p.critical {
            out.push(format!(
                "critical: {:?} != fresh {:?}",
                self.p.critical, fresh.p.critical
            ));
        }
        // Each ready node with its key and its (workspace, role), whatever the group numbers.
        let keys = |ix: &PickOrder| {
            let name = |g: usize| {
                ix.p.groups
                    .iter()
                    .find(|(_, &v)| v == g)
                    .map(|(k, _)| k.clone())
            };
            let mut v: Vec<_> =
                ix.p.ready
                    .iter()
                    .enumerate()
                    .flat_map(|(g, set)| set.iter().map(move |k| (g, *k)))
                    .map(|(g, k)| (k.id, k.critical, k.priority, name(g)))
                    .collect();
            v.sort();
            v
        };
        if keys(self) != keys(&fresh) {
            out.push(format!(
                "ready: {:?} != fresh {:?}",
                keys(self),
                keys(&fresh)
            ));
        }
        if self.p.scheduled != fresh.p.scheduled {
            out.push(format!(
                "scheduled: {:?} != fresh {:?}",
                self.p.scheduled, fresh.p.scheduled
            ));
        }
        let waiters = |ix: &PickOrder| {
            let mut v: Vec<(Id, Vec<Id>)> =
                ix.p.waiters
                    .iter()
                    .filter(|(_, w)| !w.is_empty())
                    .map(|(p, w)| {
                        let mut w = w.clone();
                        w.sort();
                        (*p, w)
                    })
                    .collect();
            v.sort();
            v
        };
        if waiters(self) != waiters(&fresh) {
            out.push(format!(
                "waiters: {:?} != fresh {:?}",
                waiters(self),
                waiters(&fresh)
            ));
        }
        out
    }
}
