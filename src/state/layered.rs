//! The live nodes of a state loaded from a frozen set (a snapshot) that has not needed all
//! of its nodes at once yet: the frozen nodes, read one at a time when asked for, with the
//! changes since on top.

use super::frozen::{Damage, Frozen};
use crate::id::{Id, IdMap};
use crate::model::Node;
use crate::schedule::pick_order::{Lookup, PickOrder};
use std::sync::Arc;

/// A frozen set of nodes and what changed since it was read.
#[derive(Debug, Clone)]
pub struct Layered {
    frozen: Arc<dyn Frozen>,
    /// Later values of frozen nodes that are still live.
    over: IdMap<Node>,
    /// Frozen nodes archived since (one put again after that is in `added`).
    gone: IdMap<()>,
    /// Nodes put since that are not live frozen nodes, in the order they were put: after the
    /// frozen nodes in creation order, as in a state holding every node.
    added: Vec<Node>,
    added_at: IdMap<usize>,
}

impl Layered {
    pub fn new(frozen: Arc<dyn Frozen>) -> Layered {
        Layered {
            frozen,
            over: IdMap::default(),
            gone: IdMap::default(),
            added: Vec::new(),
            added_at: IdMap::default(),
        }
    }

    /// The frozen set entry of a live frozen node.
    fn live_entry(&self, id: &Id) -> Option<usize> {
        if self.gone.contains_key(id) {
            return None;
        }
        self.frozen.find(id)
    }

    pub fn get(&self, id: &Id) -> Option<&Node> {
        if let Some(&i) = self.added_at.get(id) {
            return Some(&self.added[i]);
        }
        if let Some(n) = self.over.get(id) {
            return Some(n);
        }
        self.live_entry(id).and_then(|e| self.frozen.node(e))
    }

    /// Why the frozen set could not give something it was asked for, if it could not.
    pub fn damage(&self) -> Option<&Damage> {
        self.frozen.damage()
    }

    /// See [`Frozen::verify`].
    pub fn verify(&self) {
        self.frozen.verify()
    }

    pub fn len(&self) -> usize {
        self.frozen.len() - self.gone.len() + self.added.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Puts `node` in place of its live value (or after the others); returns the value it
    /// replaced. A value only the snapshot holds is decoded for that only when `old` (the
    /// pick order needs it); either way the pages it sits in are checked: a change replayed
    /// from the journal onto a page that fails its checksum damages the state.
    pub fn replace(&mut self, node: Node, old: bool) -> Option<Node> {
        let id = node.id;
        if let Some(&i) = self.added_at.get(&id) {
            return Some(std::mem::replace(&mut self.added[i], node));
        }
        match self.live_entry(&id) {
            Some(e) => match self.over.insert(id, node) {
                Some(prev) => Some(prev),
                None if old => self.frozen.node(e).cloned(),
                None => {
                    self.frozen.check_entry(e);
                    None
                }
            },
            None => {
                self.added_at.insert(id, self.added.len());
                self.added.push(node);
                None
            }
        }
    }

    /// Takes nodes out of the live nodes.
    pub fn remove<'a>(&mut self, ids: impl Iterator<Item = &'a Id>) {
        let mut out = IdMap::default();
        for id in ids {
            if self.added_at.contains_key(id) {
                out.insert(*id, ());
            } else if self.live_entry(id).is_some() {
                self.over.remove(id);
                self.gone.insert(*id, ());
            }
        }
        if !out.is_empty() {
            self.added.retain(|n| !out.contains_key(&n.id));
            self.added_at = self
                .added
                .iter()
                .enumerate()
                .map(|(i, n)| (n.id, i))
                .collect();
        }
    }

    /// Whether the snapshot stores its pick order.
    pub fn has_stored_order(&self) -> bool {
        self.frozen.has_stored_order()
    }

    /// The snapshot's stored pick order brought up to date with the changes since
    /// ([`PickOrder::catch_up`]): `None` when it has none, or when it was decided under another
    /// `max_attempts` than `st`'s (build it from the nodes then). A stored order that does
    /// not read damages the frozen set.
    pub fn stored_order(&self, st: &dyn Lookup) -> Option<PickOrder> {
        let mut ix = self.frozen.stored_order(st.settings().max_attempts)?;
        let was = |id: &Id| {
            self.frozen
                .find(id)
                .and_then(|e| self.frozen.node(e))
                .cloned()
        };
        let mut gone = Vec::with_capacity(self.gone.len());
        for id in self.gone.keys() {
            gone.push(was(id)?);
        }
        let mut changed = Vec::with_capacity(self.over.len() + self.added.len());
        for id in self.over.keys() {
            changed.push((Some(was(id)?), *id));
        }
        changed.extend(self.added.iter().map(|n| (None, n.id)));
        ix.catch_up(st, &gone, &changed);
        Some(ix)
    }

    /// Where a live node stands in creation order.
    pub fn position(&self, id: &Id) -> Option<(u8, u64)> {
        if let Some(&i) = self.added_at.get(id) {
            return Some((1, i as u64));
        }
        self.live_entry(id)
            .and_then(|e| self.frozen.position(e))
            .map(|at| (0, at))
    }

    /// The frozen nodes under the changes.
    pub fn frozen(&self) -> &dyn Frozen {
        &*self.frozen
    }

    /// What changed a frozen node since it was read: `None`, nothing; `Some(None)`, it was
    /// archived; `Some(Some(later))`, its later value.
    pub fn change_of(&self, id: &Id) -> Option<Option<&Node>> {
        if self.gone.contains_key(id) {
            return Some(None);
        }
        self.over.get(id).map(Some)
    }

    /// The nodes put since that the frozen set does not hold, in the order they were put.
    pub fn added(&self) -> &[Node] {
        &self.added
    }

    /// Every live node in creation order.
    pub fn all(&self) -> Vec<Node> {
        let mut nodes = self.frozen.all();
        if !self.gone.is_empty() || !self.over.is_empty() {
            nodes.retain(|n| !self.gone.contains_key(&n.id));
            for n in nodes.iter_mut() {
                if let Some(later) = self.over.get(&n.id) {
                    *n = later.clone();
                }
            }
        }
        nodes.extend(self.added.iter().cloned());
        nodes
    }

    /// The ids of live nodes that start with `prefix` (hex), at most `most` of them.
    pub fn with_prefix(&self, prefix: &str, most: usize) -> Vec<Id> {
        let mut out: Vec<Id> = self
            .added
            .iter()
            .map(|n| n.id)
            .filter(|id| id.starts_with_hex(prefix))
            .collect();
        let first = self.frozen.first_at_or_after(prefix);
        for e in first..self.frozen.len() {
            if out.len() >= most || !self.frozen.entry_starts_with(e, prefix) {
                break;
            }
            match self.frozen.id(e) {
                Some(id) if !self.gone.contains_key(&id) => out.push(id),
                _ => {}
            }
        }
        out.truncate(most);
        out
    }
}
