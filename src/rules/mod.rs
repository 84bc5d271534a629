//! The rules of SPEC sections 2 and 3, in one pure module: (state, request, now) in, a
//! [`Change`] and an [`Output`] or a typed [`Error`] out. No I/O, no clock. Every backend and
//! every front door goes through [`apply`]; the new state is `state.apply(&change)`.
//!
//! A request is evaluated against a transaction view ([`Tx`]) that first hands back every
//! expired claim, then runs the verb's checks, then its effect. All checks happen before any
//! field changes, and the input state is only borrowed, so a refused call changes nothing.

use crate::error::{Error, Result};
use crate::id::{Actor, Id};
use crate::model::{
    Change, Display, Event, Millis, Node, Settings, State, Status, MAX_SUMMARY_BYTES,
};
use crate::schedule;
use std::collections::HashMap;

mod archive;
mod plan;

pub use plan::{Plan, PlanNode};

/// A request to change the state. Each variant is one verb of SPEC section 3.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Upsert(Upsert),
    Link {
        parent: Id,
        child: Id,
        soft: bool,
    },
    Unlink {
        parent: Id,
        child: Id,
    },
    Claim {
        node: Id,
        actor: Actor,
        gen: Option<u64>,
        ttl_ms: Option<u64>,
    },
    ClaimNext {
        workspace: String,
        actor: Actor,
        role: Option<String>,
        ttl_ms: Option<u64>,
    },
    Renew {
        node: Id,
        actor: Actor,
        gen: Option<u64>,
        ttl_ms: Option<u64>,
    },
    Release {
        node: Id,
        actor: Actor,
        gen: u64,
    },
    Reclaim {
        workspace: String,
        lease_ms: Option<u64>,
    },
    Complete {
        node: Id,
        status: Status,
        gen: u64,
        actor: Option<Actor>,
        note: Option<String>,
    },
    Reopen {
        node: Id,
        gen: Option<u64>,
    },
    Configure(Settings),
    /// Creates or merges every node of a plan, with its links, as one write.
    Import {
        workspace: String,
        plan: Plan,
    },
    /// Moves finished nodes out of the live state: the given ones, else (or also) those
    /// finished at least `older_than_ms` ago, else every finished node of the workspace.
    Archive {
        workspace: String,
        nodes: Vec<Id>,
        older_than_ms: Option<u64>,
    },
    /// Brings an archived node (its last value, read from the archive) back.
    Unarchive {
        node: Node,
    },
}

/// The fields of an upsert. `None` means "not given": on an existing node it leaves the
/// field as it is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Upsert {
    pub workspace: String,
    pub kind: Option<String>,
    pub summary: String,
    pub parent: Option<Id>,
    pub role: Option<String>,
    pub priority: Option<i64>,
    pub estimate: Option<u64>,
    pub labels: Option<Vec<String>>,
    pub resources: Option<Vec<String>>,
    pub ref_: Option<String>,
    pub max_attempts: Option<u32>,
}

/// What a successful request returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Nothing to report.
    Unit,
    /// The id of the upserted node, and whether it was created.
    Upserted { id: Id, created: bool },
    /// The node's new generation (claim, release, reopen).
    Generation(u64),
    /// The claimed node and its generation, or nothing ready (claim-next).
    Claimed(Option<(Id, u64)>),
    /// Nodes handed back and their new generations (reclaim).
    HandedBack(Vec<(Id, u64)>),
    /// The node reached this status (complete), or is back with it (unarchive).
    Completed(Id, Status),
    /// The id of every plan node, in plan order, with its key.
    Imported(Vec<(Id, String)>),
    /// How many nodes were archived.
    Archived(usize),
}

/// The result of a request: what to commit and what to return.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    pub change: Change,
    pub output: Output,
}

/// Evaluates `req` against `state` at time `now`.
pub fn apply(state: &State, req: &Request, now: Millis) -> Result<Effect> {
    let mut tx = Tx::begin(state, now);
    let output = match req {
        Request::Upsert(u) => tx.upsert(u)?,
        Request::Link {
            parent,
            child,
            soft,
        } => tx.link(*parent, *child, *soft)?,
        Request::Unlink { parent, child } => tx.unlink(*parent, *child)?,
        Request::Claim {
            node,
            actor,
            gen,
            ttl_ms,
        } => Output::Generation(tx.claim(*node, *actor, *gen, *ttl_ms)?),
        Request::ClaimNext {
            workspace,
            actor,
            role,
            ttl_ms,
        } => tx.claim_next(workspace, *actor, role.as_deref(), *ttl_ms)?,
        Request::Renew {
            node,
            actor,
            gen,
            ttl_ms,
        } => tx.renew(*node, *actor, *gen, *ttl_ms)?,
        Request::Release { node, actor, gen } => tx.release(*node, *actor, *gen)?,
        Request::Reclaim {
            workspace,
            lease_ms,
        } => tx.reclaim(workspace, *lease_ms),
        Request::Complete {
            node,
            status,
            gen,
            actor,
            note,
        } => tx.complete(*node, *status, *gen, *actor, note.as_deref())?,
        Request::Reopen { node, gen } => tx.reopen(*node, *gen)?,
        Request::Configure(s) => tx.configure(s)?,
        Request::Import { workspace, plan } => tx.import(workspace, plan)?,
        Request::Archive {
            workspace,
            nodes,
            older_than_ms,
        } => tx.archive(workspace, nodes, *older_than_ms)?,
        Request::Unarchive { node } => tx.unarchive(node)?,
    };
    Ok(Effect {
        change: tx.finish(),
        output,
    })
}

/// A read-only view of the state at `now` with every expired claim handed back, as the next
/// write will see it. Used by `next` and `ready`.
pub fn view_at(state: &State, now: Millis) -> Tx<'_> {
    Tx::begin(state, now)
}

/// The derived display word of a node (SPEC section 2).
pub fn display(state: &State, node: &Node, now: Millis) -> Display {
    match node.status {
        Status::Claimed if node.is_expired(now) => Display::Expired,
        Status::Claimed => Display::Claimed,
        Status::Done => Display::Done,
        Status::Failed => Display::Failed,
        Status::Cancelled => Display::Cancelled,
        Status::Todo => match readiness(&|id| state.status_of(id), &state.settings, node) {
            Readiness::Ready => Display::Ready,
            Readiness::Blocked(_) => Display::Blocked,
            Readiness::Waiting(_) | Readiness::OutOfAttempts { .. } => Display::Todo,
        },
    }
}

/// Why a `todo` node is or is not ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    Ready,
    /// Hard prerequisites that ended `failed` or `cancelled`.
    Blocked(Vec<Id>),
    /// Prerequisites still open (or unknown).
    Waiting(Vec<Id>),
    OutOfAttempts {
        attempts: u32,
        max_attempts: u32,
    },
}

impl Readiness {
    /// A sentence for `show` and for `not_ready` errors.
    pub fn explain(&self) -> String {
        let ids = |v: &[Id]| v.iter().map(|i| i.hex()).collect::<Vec<_>>().join(", ");
        match self {
            Readiness::Ready => "ready".to_string(),
            Readiness::Blocked(v) => format!(
                "blocked: prerequisite(s) ended failed or cancelled: {}",
                ids(v)
            ),
            Readiness::Waiting(v) => format!("waiting on open prerequisite(s): {}", ids(v)),
            Readiness::OutOfAttempts {
                attempts,
                max_attempts,
            } => format!("out of attempts ({attempts} of {max_attempts})"),
        }
    }
}

/// The attempt cap of a node: its own, else the store's.
pub fn attempt_cap(settings: &Settings, node: &Node) -> Option<u32> {
    node.max_attempts.or(settings.max_attempts)
}

/// Readiness of a `todo` node, given how to look up a prerequisite's status.
pub fn readiness(
    status_of: &dyn Fn(&Id) -> Option<Status>,
    settings: &Settings,
    node: &Node,
) -> Readiness {
    let mut blocked = Vec::new();
    let mut waiting = Vec::new();
    for (dep, soft) in node.prerequisites() {
        match status_of(&dep) {
            Some(Status::Done) => {}
            Some(s) if soft && s.is_terminal() => {}
            Some(Status::Failed | Status::Cancelled) => blocked.push(dep),
            _ => waiting.push(dep),
        }
    }
    if !blocked.is_empty() {
        return Readiness::Blocked(blocked);
    }
    if !waiting.is_empty() {
        return Readiness::Waiting(waiting);
    }
    if let Some(cap) = attempt_cap(settings, node) {
        if node.attempts >= cap {
            return Readiness::OutOfAttempts {
                attempts: node.attempts,
                max_attempts: cap,
            };
        }
    }
    Readiness::Ready
}

/// Two resources overlap when equal, or when one ends in `/` and the other starts with it.
pub fn resources_overlap(a: &str, b: &str) -> bool {
    a == b || (a.ends_with('/') && b.starts_with(a)) || (b.ends_with('/') && a.starts_with(b))
}

/// Checks a kind or role word: `[a-z0-9_-]`, at most 32 characters (`min` 1 for kinds).
pub fn validate_word(what: &str, text: &str, min: usize) -> Result<()> {
    let ok = text.len() >= min
        && text.len() <= 32
        && text
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{what} must be {min}-32 characters of [a-z0-9_-], got {text:?}"
        )))
    }
}

/// Checks a workspace name: at most 64 characters of `[A-Za-z0-9_.-]`.
pub fn validate_workspace(text: &str) -> Result<()> {
    let ok = text.len() <= 64
        && text
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "workspace must be at most 64 characters of [A-Za-z0-9_.-], got {text:?}"
        )))
    }
}

/// Trims and checks a summary: non-empty, at most 4096 bytes, no NUL.
pub fn normalize_summary(text: &str) -> Result<String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(Error::invalid(
            "summary is empty (after trimming whitespace)",
        ));
    }
    if t.len() > MAX_SUMMARY_BYTES {
        return Err(Error::invalid(format!(
            "summary is {} bytes, longer than the limit of {MAX_SUMMARY_BYTES}",
            t.len()
        )));
    }
    check_text("summary", t, MAX_SUMMARY_BYTES)?;
    Ok(t.to_string())
}

/// Checks a free-text field: no NUL, at most `max` bytes.
pub fn check_text(what: &str, text: &str, max: usize) -> Result<()> {
    if text.contains('\0') {
        return Err(Error::invalid(format!("{what} contains a NUL character")));
    }
    if text.len() > max {
        return Err(Error::invalid(format!(
            "{what} is {} bytes, longer than the limit of {max}",
            text.len()
        )));
    }
    Ok(())
}

fn check_list(what: &str, items: &[String], max: usize) -> Result<()> {
    for item in items {
        if item.trim().is_empty() {
            return Err(Error::invalid(format!("{what} must not be empty")));
        }
        check_text(what, item, max)?;
    }
    Ok(())
}

fn check_ttl(now: Millis, ttl: u64, what: &str) -> Result<()> {
    if ttl == 0 {
        return Err(Error::invalid(format!("{what} must be longer than 0")));
    }
    if now.checked_add(ttl).is_none() {
        return Err(Error::invalid(format!(
            "{what} of {ttl} ms overflows the clock (now + ttl)"
        )));
    }
    Ok(())
}

/// A transaction over a borrowed state: reads see the state with this transaction's changes
/// on top; nothing is written until the caller commits [`Tx::finish`].
pub struct Tx<'a> {
    state: &'a State,
    now: Millis,
    changed: Vec<Node>,
    pos: HashMap<Id, usize>,
    archived: Vec<Node>,
    settings: Option<Settings>,
    events: Vec<Event>,
}

impl<'a> Tx<'a> {
    fn begin(state: &'a State, now: Millis) -> Tx<'a> {
        let mut tx = Tx {
            state,
            now,
            changed: Vec::new(),
            pos: HashMap::new(),
            archived: Vec::new(),
            settings: None,
            events: Vec::new(),
        };
        tx.expire_all();
        tx
    }

    pub fn now(&self) -> Millis {
        self.now
    }

    pub fn settings(&self) -> &Settings {
        self.settings.as_ref().unwrap_or(&self.state.settings)
    }

    pub fn get(&self, id: &Id) -> Option<&Node> {
        match self.pos.get(id) {
            Some(&i) => Some(&self.changed[i]),
            None => self.state.get(id),
        }
    }

    pub fn status_of(&self, id: &Id) -> Option<Status> {
        match self.pos.get(id) {
            Some(&i) => Some(self.changed[i].status),
            None => self.state.status_of(id),
        }
    }

    /// Every live node as this transaction sees it, in creation order.
    pub fn nodes(&self) -> impl Iterator<Item = &Node> + '_ {
        let base = self
            .state
            .nodes()
            .iter()
            .map(move |n| match self.pos.get(&n.id) {
                Some(&i) => &self.changed[i],
                None => n,
            });
        let fresh = self
            .changed
            .iter()
            .filter(move |n| self.state.get(&n.id).is_none());
        base.chain(fresh)
    }

    /// Nodes whose stored status is `claimed` in this view.
    fn claimed(&self) -> impl Iterator<Item = &Node> + '_ {
        let base = self
            .state
            .claimed_ids()
            .iter()
            .filter(move |id| !self.pos.contains_key(*id))
            .filter_map(move |id| self.state.get(id));
        let mine = self.changed.iter().filter(|n| n.status == Status::Claimed);
        base.chain(mine)
    }

    pub fn readiness(&self, node: &Node) -> Readiness {
        readiness(&|id| self.status_of(id), self.settings(), node)
    }

    fn put(&mut self, node: Node) {
        match self.pos.get(&node.id) {
            Some(&i) => self.changed[i] = node,
            None => {
                self.pos.insert(node.id, self.changed.len());
                self.changed.push(node);
            }
        }
    }

    fn event(
        &mut self,
        verb: &str,
        node: Option<&Node>,
        actor: Option<Actor>,
        detail: Option<String>,
    ) {
        self.events.push(Event {
            at: self.now,
            verb: verb.to_string(),
            node: node.map(|n| n.id),
            actor,
            generation: node.map(|n| n.generation),
            detail,
        });
    }

    fn node(&self, id: Id) -> Result<Node> {
        self.get(&id)
            .cloned()
            .ok_or_else(|| Error::node_not_found(id))
    }

    fn finish(self) -> Change {
        Change {
            nodes: self.changed,
            archived: self.archived,
            settings: self.settings,
            events: self.events,
        }
    }

    /// Hands back `node`: `todo`, holder cleared, generation + 1, attempts kept.
    fn hand_back(&mut self, mut node: Node, verb: &str) -> u64 {
        let holder = node.holder.take();
        node.status = Status::Todo;
        node.generation += 1;
        node.claimed_at = None;
        node.renewed_at = None;
        node.ttl_ms = None;
        node.updated_at = self.now;
        self.event(verb, Some(&node), holder, None);
        let g = node.generation;
        self.put(node);
        g
    }

    /// Every write first hands back every expired claim.
    fn expire_all(&mut self) {
        let now = self.now;
        let expired: Vec<Node> = self
            .claimed()
            .filter(|n| n.is_expired(now))
            .cloned()
            .collect();
        for n in expired {
            self.hand_back(n, "expire");
        }
    }

    fn upsert(&mut self, u: &Upsert) -> Result<Output> {
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
        if let Some(l) = &u.labels {
            check_list("label", l, 256)?;
        }
        if let Some(r) = &u.resources {
            check_list("resource", r, 1024)?;
        }
        if let Some(r) = &u.ref_ {
            check_text("ref", r, 1024)?;
        }
        if let Some(p) = u.parent {
            if self.status_of(&p).is_none() {
                return Err(Error::NotFound {
                    what: format!("parent node {p}"),
                    node: Some(p),
                });
            }
        }
        let id = Id::mint(&u.workspace, &kind, u.parent, &summary);
        if let Some(existing) = self.get(&id) {
            let mut n = existing.clone();
            if n.status.is_terminal() {
                return Ok(Output::Upserted { id, created: false });
            }
            merge(&mut n, u);
            if &n != existing {
                n.updated_at = self.now;
                self.event("update", Some(&n), None, None);
                self.put(n);
            }
            return Ok(Output::Upserted { id, created: false });
        }
        if self.state.archived().contains_key(&id) {
            // The same work was finished and archived: upserting it again is idempotent.
            return Ok(Output::Upserted { id, created: false });
        }
        let mut n = Node {
            id,
            workspace: u.workspace.clone(),
            kind,
            summary,
            parent: u.parent,
            deps: Vec::new(),
            soft_deps: Vec::new(),
            status: Status::Todo,
            generation: 1,
            holder: None,
            attempts: 0,
            max_attempts: None,
            claimed_at: None,
            renewed_at: None,
            ttl_ms: None,
            role: String::new(),
            priority: 0,
            estimate: 1,
            labels: Vec::new(),
            resources: Vec::new(),
            ref_: None,
            note: None,
            completed_by: None,
            created_at: self.now,
            updated_at: self.now,
            archived: false,
        };
        merge(&mut n, u);
        self.event("create", Some(&n), None, None);
        self.put(n);
        Ok(Output::Upserted { id, created: true })
    }

    fn link(&mut self, parent: Id, child: Id, soft: bool) -> Result<Output> {
        if parent == child {
            return Err(Error::cycle_link(parent, child));
        }
        let p_exists = self.status_of(&parent).is_some();
        let mut c = self.node(child)?;
        if !p_exists {
            return Err(Error::node_not_found(parent));
        }
        if let Some(p) = self.get(&parent) {
            if p.workspace != c.workspace {
                return Err(Error::invalid(format!(
                    "cannot link across workspaces ({:?} and {:?})",
                    p.workspace, c.workspace
                )));
            }
        }
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
        c.updated_at = self.now;
        let detail = format!("{} {}", if soft { "soft" } else { "hard" }, parent);
        self.event("link", Some(&c), None, Some(detail));
        self.put(c);
        Ok(Output::Unit)
    }

    /// True when `from` already waits, directly or not, on `target`.
    fn reaches(&self, from: Id, target: Id) -> bool {
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

    fn unlink(&mut self, parent: Id, child: Id) -> Result<Output> {
        let mut c = self.node(child)?;
        if !c.deps.contains(&parent) && !c.soft_deps.contains(&parent) {
            return Err(Error::NotFound {
                what: format!("link {parent} -> {child}"),
                node: Some(child),
            });
        }
        c.deps.retain(|d| *d != parent);
        c.soft_deps.retain(|d| *d != parent);
        c.updated_at = self.now;
        self.event("unlink", Some(&c), None, Some(parent.hex()));
        self.put(c);
        Ok(Output::Unit)
    }

    fn claim(&mut self, id: Id, actor: Actor, gen: Option<u64>, ttl: Option<u64>) -> Result<u64> {
        let ttl = ttl.unwrap_or(self.settings().default_ttl_ms);
        check_ttl(self.now, ttl, "ttl")?;
        let mut n = self.node(id)?;
        if n.status.is_terminal() {
            return Err(Error::Terminal {
                node: id,
                status: n.status.to_string(),
            });
        }
        if n.status == Status::Claimed {
            return Err(Error::AlreadyClaimed {
                node: id,
                holder: n.holder.unwrap_or_default(),
                generation: n.generation,
            });
        }
        if let Some(g) = gen {
            if g != n.generation {
                return Err(Error::StaleGeneration {
                    node: id,
                    given: g,
                    generation: n.generation,
                });
            }
        }
        match self.readiness(&n) {
            Readiness::Ready => {}
            Readiness::OutOfAttempts {
                attempts,
                max_attempts,
            } => {
                return Err(Error::AttemptsExhausted {
                    node: id,
                    attempts,
                    max_attempts,
                })
            }
            r => {
                return Err(Error::NotReady {
                    node: id,
                    why: r.explain(),
                })
            }
        }
        let max_held = self.settings().max_held;
        if max_held > 0 {
            let held = self
                .claimed()
                .filter(|c| c.workspace == n.workspace && c.holder == Some(actor))
                .count() as u64;
            if held >= max_held {
                return Err(Error::AssigneeBusy {
                    node: id,
                    actor,
                    held,
                    max_held,
                });
            }
        }
        for other in self.claimed().filter(|c| c.workspace == n.workspace) {
            for mine in &n.resources {
                if let Some(theirs) = other.resources.iter().find(|r| resources_overlap(mine, r)) {
                    return Err(Error::ResourceConflict {
                        node: id,
                        resource: mine.clone(),
                        held: theirs.clone(),
                        other: other.id,
                        holder: other.holder.unwrap_or_default(),
                        generation: other.generation,
                    });
                }
            }
        }
        n.status = Status::Claimed;
        n.holder = Some(actor);
        n.generation += 1;
        n.attempts = n.attempts.saturating_add(1);
        n.claimed_at = Some(self.now);
        n.renewed_at = Some(self.now);
        n.ttl_ms = Some(ttl);
        n.updated_at = self.now;
        self.event("claim", Some(&n), Some(actor), None);
        let g = n.generation;
        self.put(n);
        Ok(g)
    }

    fn claim_next(
        &mut self,
        workspace: &str,
        actor: Actor,
        role: Option<&str>,
        ttl: Option<u64>,
    ) -> Result<Output> {
        validate_workspace(workspace)?;
        if let Some(r) = role {
            validate_word("role", r, 0)?;
        }
        let order = schedule::order(self, workspace, role.unwrap_or(""));
        // The first candidate a claim accepts. A resource held by another claim moves on to
        // the next candidate; every other refusal (the actor is busy) holds for all of them.
        for pick in order {
            match self.claim(pick.id, actor, None, ttl) {
                Ok(g) => return Ok(Output::Claimed(Some((pick.id, g)))),
                Err(Error::ResourceConflict { .. }) => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(Output::Claimed(None))
    }

    /// The node claimed by `actor` at `gen` (if given), checked for renew and release.
    fn held_by(&self, id: Id, actor: Actor, gen: Option<u64>) -> Result<Node> {
        let n = self.node(id)?;
        if n.status.is_terminal() {
            return Err(Error::Terminal {
                node: id,
                status: n.status.to_string(),
            });
        }
        if n.status != Status::Claimed {
            // Handed back already: an old generation is stale, otherwise it is not claimed.
            let handed_back_now = self
                .events
                .iter()
                .any(|e| e.node == Some(id) && e.verb == "expire" && e.actor == Some(actor));
            return match gen {
                Some(g) if g < n.generation => Err(Error::StaleGeneration {
                    node: id,
                    given: g,
                    generation: n.generation,
                }),
                None if handed_back_now => Err(Error::StaleGeneration {
                    node: id,
                    given: n.generation - 1,
                    generation: n.generation,
                }),
                _ => Err(Error::NotClaimed {
                    node: id,
                    status: n.status.to_string(),
                }),
            };
        }
        if let Some(g) = gen {
            if g != n.generation {
                return Err(Error::StaleGeneration {
                    node: id,
                    given: g,
                    generation: n.generation,
                });
            }
        }
        if n.holder != Some(actor) {
            return Err(Error::NotHolder {
                node: id,
                actor,
                holder: n.holder.unwrap_or_default(),
                generation: n.generation,
            });
        }
        Ok(n)
    }

    fn renew(
        &mut self,
        id: Id,
        actor: Actor,
        gen: Option<u64>,
        ttl: Option<u64>,
    ) -> Result<Output> {
        if let Some(t) = ttl {
            check_ttl(self.now, t, "ttl")?;
        }
        let mut n = self.held_by(id, actor, gen)?;
        n.renewed_at = Some(self.now);
        if let Some(t) = ttl {
            n.ttl_ms = Some(t);
        }
        n.updated_at = self.now;
        self.event("renew", Some(&n), Some(actor), None);
        self.put(n);
        Ok(Output::Unit)
    }

    fn release(&mut self, id: Id, actor: Actor, gen: u64) -> Result<Output> {
        let n = self.held_by(id, actor, Some(gen))?;
        let g = self.hand_back(n, "release");
        Ok(Output::Generation(g))
    }

    fn reclaim(&mut self, workspace: &str, lease: Option<u64>) -> Output {
        let now = self.now;
        let mut handed: Vec<(Id, u64)> = self
            .events
            .iter()
            .filter(|e| e.verb == "expire")
            .filter_map(|e| Some((e.node?, e.generation?)))
            .filter(|(id, _)| self.get(id).is_some_and(|n| n.workspace == workspace))
            .collect();
        if let Some(lease) = lease {
            let quiet: Vec<Node> = self
                .claimed()
                .filter(|n| n.workspace == workspace)
                .filter(|n| now.saturating_sub(n.renewed_at.unwrap_or(0)) >= lease)
                .cloned()
                .collect();
            for n in quiet {
                let id = n.id;
                let g = self.hand_back(n, "reclaim");
                handed.push((id, g));
            }
        }
        Output::HandedBack(handed)
    }

    fn complete(
        &mut self,
        id: Id,
        status: Status,
        gen: u64,
        actor: Option<Actor>,
        note: Option<&str>,
    ) -> Result<Output> {
        if !status.is_terminal() {
            return Err(Error::invalid(format!(
                "complete needs a terminal status (done, failed or cancelled), got {status}"
            )));
        }
        if let Some(t) = note {
            check_text("note", t, 65536)?;
        }
        let mut n = self.node(id)?;
        if n.status.is_terminal() {
            return Err(Error::Terminal {
                node: id,
                status: n.status.to_string(),
            });
        }
        if n.status == Status::Todo {
            if gen != n.generation && (gen < n.generation || status == Status::Cancelled) {
                return Err(Error::StaleGeneration {
                    node: id,
                    given: gen,
                    generation: n.generation,
                });
            }
            if status != Status::Cancelled {
                return Err(Error::NotClaimed {
                    node: id,
                    status: n.status.to_string(),
                });
            }
        } else {
            if gen != n.generation {
                return Err(Error::StaleGeneration {
                    node: id,
                    given: gen,
                    generation: n.generation,
                });
            }
            if let Some(a) = actor {
                if n.holder != Some(a) {
                    return Err(Error::NotHolder {
                        node: id,
                        actor: a,
                        holder: n.holder.unwrap_or_default(),
                        generation: n.generation,
                    });
                }
            }
        }
        n.completed_by = n.holder.take().or(actor);
        n.status = status;
        n.claimed_at = None;
        n.renewed_at = None;
        n.ttl_ms = None;
        if let Some(t) = note {
            n.note = Some(t.to_string());
        }
        n.updated_at = self.now;
        self.event(
            "complete",
            Some(&n),
            n.completed_by,
            Some(status.to_string()),
        );
        self.put(n);
        Ok(Output::Completed(id, status))
    }

    fn reopen(&mut self, id: Id, gen: Option<u64>) -> Result<Output> {
        let mut n = self.node(id)?;
        if let Some(g) = gen {
            if g != n.generation {
                return Err(Error::StaleGeneration {
                    node: id,
                    given: g,
                    generation: n.generation,
                });
            }
        }
        if !n.status.is_terminal() {
            return Err(Error::invalid(format!(
                "node {id} is not terminal (status {}); only a finished node can be reopened",
                n.status
            )));
        }
        n.status = Status::Todo;
        n.generation += 1;
        n.completed_by = None;
        n.updated_at = self.now;
        self.event("reopen", Some(&n), None, None);
        let g = n.generation;
        self.put(n);
        Ok(Output::Generation(g))
    }

    fn configure(&mut self, s: &Settings) -> Result<Output> {
        if s.default_ttl_ms == 0 {
            return Err(Error::invalid("default_ttl must be longer than 0"));
        }
        check_ttl(self.now, s.default_ttl_ms, "default_ttl")?;
        if s.max_attempts == Some(0) {
            return Err(Error::invalid("max_attempts must be at least 1 (or none)"));
        }
        if s != self.settings() {
            self.settings = Some(s.clone());
            self.event("config", None, None, None);
        }
        Ok(Output::Unit)
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
}
