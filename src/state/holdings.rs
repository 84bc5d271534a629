//! The resources that claims hold, by what they name, so that a claim looks only at the
//! claims its resources may meet, not at every claim of its workspace (SPEC 13,
//! "Resources"); and the nodes with rate grants, by rate and last grant.
//!
//! A plain resource is kept under its name, a glob under its literal part (`src/` for
//! `src/**/*.rs`: every path it claims starts with it), a pool slot under the pool's name,
//! a rate grant under the rate's name. Two resources can meet only when one literal part
//! starts with the other's, so the claims a resource may meet are found by looking up the
//! literal parts its own starts with and those that start with it; the rules then decide
//! each exactly.

use crate::id::{Id, IdMap};
use crate::model::limits::{Kind, Spelled};
use crate::model::{Millis, Node, Status};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

/// Where an entry is kept: its workspace, its kind and its literal part (or name).
type Key = (Box<str>, Kind, Box<str>);

/// The index: for each key, the nodes under it (with, for a rate, their last grant).
#[derive(Debug, Clone, Default)]
pub struct Holdings {
    of: IdMap<Vec<(Key, Millis)>>,
    by: BTreeMap<Key, BTreeSet<(Millis, Id)>>,
}

impl Holdings {
    /// The keys `n` is under: each resource of a claimed node, and each rate of a node
    /// that was granted under one.
    fn keys(n: &Node) -> Vec<(Key, Millis)> {
        let claimed = n.status == Status::Claimed;
        let last = n.rate_grants.last().copied();
        let ws: &str = &n.workspace;
        let mut keys = Vec::new();
        for r in &n.resources {
            let s = Spelled::of(r);
            let at = match (s.kind, last) {
                (Kind::Rate, Some(t)) => t,
                (Kind::Rate, None) => continue,
                _ if claimed => 0,
                _ => continue,
            };
            keys.push(((ws.into(), s.kind, s.literal().into()), at));
        }
        keys
    }

    /// Puts `n` under its keys now, out of those it was under.
    pub fn update(&mut self, n: &Node) {
        self.remove(&n.id);
        let keys = Holdings::keys(n);
        if keys.is_empty() {
            return;
        }
        for (k, at) in &keys {
            self.by.entry(k.clone()).or_default().insert((*at, n.id));
        }
        self.of.insert(n.id, keys);
    }

    /// Takes `id` out of the index.
    pub fn remove(&mut self, id: &Id) {
        let Some(keys) = self.of.remove(id) else {
            return;
        };
        for (k, at) in keys {
            if let Some(set) = self.by.get_mut(&k) {
                set.remove(&(at, *id));
                if set.is_empty() {
                    self.by.remove(&k);
                }
            }
        }
    }

    /// The nodes of workspace `ws` holding a `kind` resource whose literal part starts with
    /// `literal`, or that `literal` starts with (at the start, at a `/` or before one, or
    /// whole): every claim a resource with that literal part may meet, and a few more.
    pub fn meeting(&self, ws: &str, kind: Kind, literal: &str) -> BTreeSet<Id> {
        let mut ids = BTreeSet::new();
        let mut cuts: Vec<usize> = vec![0, literal.len()];
        for (i, _) in literal.match_indices('/') {
            cuts.extend([i, i + 1]);
        }
        for cut in cuts {
            if let Some(set) = self.by.get(&(ws.into(), kind, literal[..cut].into())) {
                ids.extend(set.iter().map(|&(_, id)| id));
            }
        }
        let from: Key = (ws.into(), kind, literal.into());
        for ((w, k, lit), set) in self.by.range((Bound::Included(from), Bound::Unbounded)) {
            if &**w != ws || *k != kind || !lit.starts_with(literal) {
                break;
            }
            ids.extend(set.iter().map(|&(_, id)| id));
        }
        ids
    }

    /// The nodes of workspace `ws` under the pool or rate `name` (for a rate, those last
    /// granted at `since` or later).
    pub fn under(&self, ws: &str, kind: Kind, name: &str, since: Millis) -> Vec<Id> {
        match self.by.get(&(ws.into(), kind, name.into())) {
            Some(set) => set
                .range((since, Id::default())..)
                .map(|&(_, id)| id)
                .collect(),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claimed(n: u128, resources: &[&str]) -> Node {
        let mut node = Node::todo(Id(n.to_be_bytes()), "task".into(), "s".into(), 0);
        node.status = Status::Claimed;
        node.resources = resources.iter().map(|r| r.to_string()).collect();
        node
    }

    #[test]
    fn a_resource_finds_the_claims_it_may_meet() {
        let mut h = Holdings::default();
        h.update(&claimed(1, &["path:src/**/*.rs"]));
        h.update(&claimed(2, &["path:docs/a.md"]));
        h.update(&claimed(3, &["path:**/*.toml"]));
        h.update(&claimed(4, &["db"]));
        let ids = |h: &Holdings, ws, kind, lit| h.meeting(ws, kind, lit).into_iter().collect::<Vec<_>>();
        let id = |n: u128| Id(n.to_be_bytes());
        assert_eq!(ids(&h, "", Kind::Path, "src/a/"), vec![id(1), id(3)]);
        assert_eq!(ids(&h, "", Kind::Path, "docs/"), vec![id(2), id(3)]);
        assert_eq!(ids(&h, "", Kind::Path, ""), vec![id(1), id(2), id(3)]);
        assert_eq!(ids(&h, "", Kind::Plain, "db"), vec![id(4)]);
        assert!(ids(&h, "other", Kind::Path, "").is_empty());
        let mut done = claimed(1, &["path:src/**/*.rs"]);
        done.status = Status::Done;
        h.update(&done);
        assert_eq!(ids(&h, "", Kind::Path, "src/"), vec![id(3)]);
    }

    #[test]
    fn a_rate_keeps_its_nodes_by_last_grant() {
        let mut h = Holdings::default();
        let mut n = claimed(1, &["rate:llm"]);
        n.status = Status::Done;
        n.rate_grants = vec![10, 20];
        h.update(&n);
        assert_eq!(h.under("", Kind::Rate, "llm", 20), vec![Id(1u128.to_be_bytes())]);
        assert!(h.under("", Kind::Rate, "llm", 21).is_empty());
    }
}
