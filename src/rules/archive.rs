//! Archive and unarchive: finished nodes move out of the live state and back. A node waiting
//! on an archived node still sees how it ended, so archiving never makes a node unclaimable.

use super::{Archive, Output, Tx};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::model::Node;
use std::path::Path;

impl Tx<'_> {
    pub(super) fn archive(
        &mut self,
        workspace: &str,
        ids: &[Id],
        older_than: Option<u64>,
    ) -> Result<Output> {
        let named = super::scope::one_workspace(self.state, ids, "archive")?;
        if let Some(w) = named.filter(|w| *w != workspace && older_than.is_some()) {
            return Err(Error::invalid(format!(
                "archive works in one workspace: the nodes named are in workspace {w:?}, and --older-than sweeps {workspace:?}"
            )));
        }
        let mut picked: Vec<Node> = Vec::new();
        for id in ids {
            if self.state.archived().contains_key(id) && self.get(id).is_none() {
                continue; // already archived
            }
            let n = self.node(*id)?;
            if !n.status.is_terminal() {
                return Err(Error::invalid(format!(
                    "node {id} is not finished (status {}); only done, failed or cancelled nodes can be archived",
                    n.status
                )));
            }
            if !picked.iter().any(|p| p.id == n.id) {
                picked.push(n);
            }
        }
        if ids.is_empty() || older_than.is_some() {
            let cutoff = older_than.map(|d| self.now.saturating_sub(d));
            let more: Vec<Node> = self
                .nodes()
                .filter(|n| n.workspace == workspace && n.status.is_terminal())
                .filter(|n| cutoff.is_none_or(|c| n.updated_at <= c))
                .filter(|n| !picked.iter().any(|p| p.id == n.id))
                .cloned()
                .collect();
            picked.extend(more);
        }
        for n in &mut picked {
            n.archived = true;
            self.events.push(crate::model::Event {
                at: self.now,
                verb: "archive".into(),
                node: Some(n.id),
                actor: None,
                generation: Some(n.generation),
                detail: Some(n.status.to_string()),
                output: None,
                by: None,
                door: None,
            });
        }
        let count = picked.len();
        self.archived.extend(picked);
        Ok(Output::Archived(count))
    }

    pub(super) fn unarchive(&mut self, id: Id, archive: &dyn Archive) -> Result<Output> {
        if self.get(&id).is_some() {
            return Err(Error::invalid(format!("node {id} is not archived")));
        }
        let Some(stub) = self.state.archived().get(&id) else {
            return Err(Error::node_not_found(id));
        };
        let mut n = archive.archived_node(&id)?.ok_or_else(|| {
            Error::corrupt(
                Path::new("archive"),
                format!("archived node {id} is missing from the archive"),
            )
        })?;
        if n.id != id || (stub.generation != 0 && n.generation != stub.generation) {
            return Err(Error::corrupt(
                Path::new("archive"),
                format!(
                    "archived node {id} is at generation {} in the archive but {} in the state",
                    n.generation, stub.generation
                ),
            ));
        }
        // While it was archived, a node it waits on may have come to wait on it (links do
        // not look inside the archive): bringing it back must not close a cycle.
        if let Some((dep, _)) = n.prerequisites().find(|(d, _)| self.reaches(*d, id)) {
            return Err(Error::Cycle {
                node: id,
                detail: format!(
                    "unarchiving {id} would close a cycle: it waits on {dep}, which now waits on it"
                ),
            });
        }
        n.archived = false;
        n.updated_at = n.updated_at.max(self.now);
        self.event("unarchive", Some(&n), None, Some(n.status.to_string()));
        let out = Output::Completed(n.id, n.status);
        self.put(n);
        Ok(out)
    }
}
