//! Creating and editing nodes: upsert (create or merge), link and unlink.

use super::{check_line, check_list, normalize_summary, validate_word, validate_workspace};
use super::{Output, Tx, Upsert};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::model::{Node, Status};

impl Tx<'_> {
    pub(super) fn upsert(&mut self, u: &Upsert) -> Result<Output> {
        let (kind, summary) = self.check_upsert(u)?;
        let id = Id::mint(&u.workspace, &kind, u.parent, &summary);
        if let Some(existing) = self.get(&id) {
            let mut n = existing.clone();
            if n.status.is_terminal() {
                return Ok(Output::Upserted { id, created: false });
            }
            merge(&mut n, u);
            let before = existing.clone();
            self.after_edit(Some(&before), &mut n);
            if n.status == Status::Claimed && n.resources != before.resources {
                // A held claim may not grow into another live claim's resources.
                self.check_resources(&n, false)?;
            }
            if n != before {
                n.updated_at = n.updated_at.max(self.now);
                self.event("update", Some(&n), None, None);
                self.put(n);
            }
            return Ok(Output::Upserted { id, created: false });
        }
        if self.state.archived().contains_key(&id) {
            // The same work was finished and archived: upserting it again is idempotent.
            return Ok(Output::Upserted { id, created: false });
        }
        let mut n = new_node(id, u, kind, summary, self.now);
        merge(&mut n, u);
        self.event("create", Some(&n), None, None);
        self.after_edit(None, &mut n);
        self.put(n);
        Ok(Output::Upserted { id, created: true })
    }

    /// Checks an upsert's fields; returns its kind and trimmed summary.
    fn check_upsert(&self, u: &Upsert) -> Result<(String, String)> {
        validate_workspace(&u.workspace)?;
        let kind = u.kind.clone().unwrap_or_else(|| "task".to_string());
        validate_word("kind", &kind, 1)?;
        let summary = normalize_summary(&u.summary)?;
        if let Some(r) = &u.role {
            validate_word("role", r, 0)?;
        }
        if u.estimate == Some(0) {
            return Err(Error::invalid("estimate must be a positive integer"));
        }
        if u.max_attempts == Some(0) {
            return Err(Error::invalid("max_attempts must be at least 1"));
        }
        if u.not_before.is_some_and(|t| t > super::validate::LATEST_TIME) {
            return Err(Error::invalid(format!(
                "not_before {} is past the latest time the clock can reach",
                u.not_before.unwrap_or_default()
            )));
        }
        if let Some(t) = u.deadline.filter(|t| *t > super::validate::LATEST_TIME) {
            return Err(Error::invalid(format!(
                "deadline {t} is past the latest time the clock can reach ({})",
                crate::duration::format_time(super::validate::LATEST_TIME)
            )));
        }
        if let Some(l) = &u.labels {
            check_list("label", l, 256)?;
        }
        if let Some(r) = &u.resources {
            check_list("resource", r, 1024)?;
            for each in r {
                super::Resource::parse(each)?;
            }
        }
        if let Some(r) = &u.ref_ {
            check_line("ref", r, 1024)?;
        }
        if let Some(p) = u.parent {
            if self.status_of(&p).is_none() {
                return Err(Error::NotFound {
                    what: format!("parent node {p}"),
                    node: Some(p),
                });
            }
            if let Some(c) = self.get(&p).filter(|c| crate::model::is_container(&c.kind)) {
                if c.workspace != u.workspace {
                    return Err(Error::invalid(format!(
                        "parent {p} is a container ({}) in workspace {:?}: its children \
                         are in the same workspace, not {:?}",
                        c.kind, c.workspace, u.workspace
                    )));
                }
            }
        }
        Ok((kind, summary))
    }

    pub(super) fn link(&mut self, parent: Id, child: Id, soft: bool) -> Result<Output> {
        if parent == child {
            return Err(Error::cycle_link(parent, child));
        }
        let p_exists = self.status_of(&parent).is_some();
        let mut c = self.node(child)?;
        if !p_exists {
            return Err(Error::node_not_found(parent));
        }
        self.same_workspace(&parent, &c.workspace)?;
        let has_hard = c.deps.contains(&parent);
        let has_soft = c.soft_deps.contains(&parent);
        if (soft && has_soft) || (!soft && has_hard) {
            return Ok(Output::Unit);
        }
        if c.status.is_terminal() {
            return Err(Error::Terminal {
                node: child,
                status: c.status.to_string(),
            });
        }
        if c.status == Status::Claimed {
            return Err(Error::AlreadyClaimed {
                node: child,
                holder: c.holder.unwrap_or_default(),
                holder_name: None,
                generation: c.generation,
            });
        }
        if self.reaches(parent, child) {
            return Err(Error::cycle_link(parent, child));
        }
        c.deps.retain(|d| *d != parent);
        c.soft_deps.retain(|d| *d != parent);
        if soft {
            c.soft_deps.push(parent);
        } else {
            c.deps.push(parent);
        }
        c.updated_at = c.updated_at.max(self.now);
        let detail = format!("{} {}", if soft { "soft" } else { "hard" }, parent);
        self.event("link", Some(&c), None, Some(detail));
        self.put(c);
        Ok(Output::Unit)
    }

    /// True when `from` already waits, directly or not, on `target`.
    pub(super) fn reaches(&self, from: Id, target: Id) -> bool {
        let mut stack = vec![from];
        let mut seen = std::collections::HashSet::new();
        while let Some(id) = stack.pop() {
            if id == target {
                return true;
            }
            if !seen.insert(id) {
                continue;
            }
            if let Some(n) = self.get(&id) {
                stack.extend(n.prerequisites().map(|(d, _)| d));
            }
        }
        false
    }

    pub(super) fn unlink(&mut self, parent: Id, child: Id) -> Result<Output> {
        let mut c = self.node(child)?;
        if self.status_of(&parent).is_none() {
            return Err(Error::node_not_found(parent));
        }
        if !c.deps.contains(&parent) && !c.soft_deps.contains(&parent) {
            // Not linked: nothing to do, as linking twice is nothing to do.
            return Ok(Output::Unit);
        }
        c.deps.retain(|d| *d != parent);
        c.soft_deps.retain(|d| *d != parent);
        c.updated_at = c.updated_at.max(self.now);
        self.event("unlink", Some(&c), None, Some(parent.hex()));
        self.put(c);
        Ok(Output::Unit)
    }
}

/// A new node: `todo`, generation 1, no attempts, every mutable field at its default.
fn new_node(id: Id, u: &Upsert, kind: String, summary: String, now: crate::model::Millis) -> Node {
    Node {
        workspace: u.workspace.clone(),
        parent: u.parent,
        ..Node::todo(id, kind, summary, now)
    }
}

/// Merges the given mutable fields of an upsert into a node.
fn merge(n: &mut Node, u: &Upsert) {
    if let Some(v) = &u.role {
        n.role = v.clone();
    }
    if let Some(v) = u.priority {
        n.priority = v;
    }
    if let Some(v) = u.estimate {
        n.estimate = v;
    }
    if let Some(v) = &u.labels {
        n.labels = v.clone();
    }
    if let Some(v) = &u.resources {
        n.resources = v.clone();
    }
    if let Some(v) = &u.ref_ {
        n.ref_ = Some(v.clone());
    }
    if let Some(v) = u.max_attempts {
        n.max_attempts = Some(v);
    }
    if let Some(v) = u.not_before {
        n.not_before = Some(v);
    }
    if let Some(v) = u.deadline {
        n.deadline = Some(v);
    }
    if let Some(v) = u.budget {
        n.budget = Some(v);
    }
}
