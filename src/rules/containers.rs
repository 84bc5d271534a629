//! Containers (SPEC 13): a node of kind `epic` is never offered or claimed; it counts its
//! children (the nodes whose `parent` it is) and follows them: `done` when every child has
//! finished (`failed` if one failed, `cancelled` if every one was cancelled), `todo` again,
//! at a new generation, when a child is reopened or a new one is added.
//!
//! The counts live on the container and move with each change of a child, in the same
//! write, so a write costs what it touches. A container written by an older claimdag has no
//! counts: the first change of one of its children counts them once from the live nodes.

use super::{Archive, Tx};
use crate::error::{Error, Result};
use crate::id::{Id, IdMap};
use crate::model::{is_container, Children, Node, Status};

/// Where a node is counted: its container and its status there.
type Counted = Option<(Id, Status)>;

impl Tx<'_> {
    /// Brings the counts of every container whose children this write changed up to date,
    /// then settles each (and, in turn, the containers of those that moved). Every child's
    /// move is counted before any container settles, so a write that changes several
    /// children settles each container once, on where they all ended.
    pub(super) fn settle_containers(&mut self, _archive: &dyn Archive) -> Result<()> {
        let mut counted: IdMap<Counted> = IdMap::default();
        let mut round: Vec<Id> = self.changed.iter().map(|n| n.id).collect();
        while !round.is_empty() {
            let mut moves: Vec<(Id, Status, bool)> = Vec::new();
            for id in round.drain(..) {
                let Some(n) = self.get(&id) else { continue };
                let now = self.counted_as(n);
                let before = match counted.get(&id) {
                    Some(c) => *c,
                    None => self.counted_before(id, now),
                };
                if before == now {
                    continue;
                }
                counted.insert(id, now);
                moves.extend(before.map(|(p, s)| (p, s, false)));
                moves.extend(now.map(|(p, s)| (p, s, true)));
            }
            let mut parents: Vec<Id> = Vec::new();
            for (p, status, add) in moves {
                self.count(p, status, add)?;
                if !parents.contains(&p) {
                    parents.push(p);
                }
            }
            for p in parents {
                if self.settle(p)? {
                    round.push(p);
                }
            }
        }
        Ok(())
    }

    /// How `n` counts in its container as this write leaves it.
    fn counted_as(&self, n: &Node) -> Counted {
        let p = n.parent?;
        self.get(&p)
            .filter(|c| is_container(&c.kind) && c.workspace == n.workspace)
            .map(|_| (p, n.status))
    }

    /// How `id` counted before this write: as its stored value did; as it is now when it
    /// comes back from the archive (its container kept counting it); not at all when new.
    fn counted_before(&self, id: Id, now: Counted) -> Counted {
        match self.state.get(&id) {
            Some(old) => {
                let p = old.parent?;
                self.get(&p)
                    .filter(|c| is_container(&c.kind) && c.workspace == old.workspace)
                    .map(|_| (p, old.status))
            }
            None if self.state.archived().contains_key(&id) => now,
            None => None,
        }
    }

    /// Counts one child of `parent` in `status` in (`add`) or out.
    fn count(&mut self, parent: Id, status: Status, add: bool) -> Result<()> {
        let mut c = self.node(parent)?;
        let mut counts = match c.children {
            Some(k) => k,
            None => self.count_children(parent),
        };
        counts.count(status, add);
        c.children = Some(counts);
        self.put(c);
        Ok(())
    }

    /// Moves a container to the status its children give it; true when it moved, so that
    /// its own container counts it again.
    fn settle(&mut self, id: Id) -> Result<bool> {
        let mut c = self.node(id)?;
        let target = c.children.unwrap_or_default().settled().unwrap_or(Status::Todo);
        if target == c.status {
            return Ok(false);
        }
        if c.status.is_terminal() && target == Status::Todo {
            c.generation += 1;
        }
        c.status = target;
        c.updated_at = c.updated_at.max(self.now);
        self.event("settle", Some(&c), None, Some(target.to_string()));
        self.put(c);
        Ok(true)
    }

    /// The children of a container written without counts, as the state before this write
    /// holds them (this write's own changes are counted after, one by one).
    fn count_children(&self, parent: Id) -> Children {
        let mut k = Children::default();
        for n in self.state.nodes().iter().filter(|n| n.parent == Some(parent)) {
            k.count(n.status, true);
        }
        k
    }

    /// Refuses to end or reopen a container by hand: its status follows its children.
    pub(super) fn not_a_container(&self, n: &Node, verb: &str) -> Result<()> {
        if !is_container(&n.kind) {
            return Ok(());
        }
        Err(Error::invalid(format!(
            "{verb}: node {} is of kind {:?}, a container: it finishes when all its \
             children have ({} of {} open), and opens again when one does; {verb} its \
             children instead",
            n.id,
            n.kind,
            n.children.map_or(0, |c| c.open()),
            n.children.map_or(0, |c| c.total),
        )))
    }
}

#[cfg(test)]
mod tests {
    use crate::id::Id;
    use crate::model::{Children, Node, Settings, Status};
    use crate::rules::{apply, NoArchive, Request};
    use crate::state::State;

    fn node(n: u8, kind: &str, parent: Option<Id>, status: Status) -> Node {
        let mut b = [0u8; 16];
        b[15] = n;
        Node {
            parent,
            status,
            ..Node::todo(Id(b), kind.into(), format!("n{n}"), 1)
        }
    }

    /// An epic written by an older claimdag has no counts: the first change of one of its
    /// children counts them from the live nodes, and it settles on all of them.
    #[test]
    fn an_epic_from_an_older_store_is_counted_at_its_first_change() {
        let mut epic = node(1, "epic", None, Status::Todo);
        epic.children = None;
        let (e, done, open) = (
            epic.id,
            node(2, "task", Some(epic.id), Status::Done),
            node(3, "task", Some(epic.id), Status::Todo),
        );
        let state = State::from_parts(
            Settings::default(),
            vec![epic, done, open.clone()],
            Default::default(),
        );
        let cancel = Request::Cancel {
            node: open.id,
            actor: None,
            reason: None,
            gen: None,
        };
        let effect = apply(&state, &NoArchive, &cancel, 10).unwrap();
        let settled = effect.change.nodes.iter().find(|n| n.id == e).unwrap();
        let want = Children {
            total: 2,
            done: 1,
            failed: 0,
            cancelled: 1,
        };
        assert_eq!((settled.status, settled.children), (Status::Done, Some(want)));
    }
}
