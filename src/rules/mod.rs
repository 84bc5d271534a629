//! The rules of docs/reference.md ("Nodes", "Verbs"), in one pure module: (state, request, now) in, a
//! [`Change`] and an [`Output`] or a typed [`Error`] out. No I/O, no clock. Every backend and
//! every front door goes through [`apply`]; the new state is `state.apply(&change)`.
//!
//! A request is evaluated against a transaction view ([`Tx`]) that first hands back every
//! expired claim of its workspace ([`Scope`]), then runs the verb's checks, then its effect. All checks happen before any
//! field changes, and the input state is only borrowed, so a refused call changes nothing.

use crate::error::{Error, Result};
use crate::id::{Actor, Id, IdMap};
use crate::model::{CancelRequest, Change, DisplayWord, Event, Millis, Node, Settings, Status};

use crate::state::State;
mod archive;
mod claims;
mod containers;
mod edit;
mod gates;
mod glob;
mod holding;
mod plan;
mod resource;
mod scope;
mod spend;
mod talk;
mod validate;

#[cfg(test)]
mod pick_tests;

pub use crate::schedule::ready::{readiness_at, Readiness};
pub use plan::{unknown_reference, Plan, PlanNode};
pub use glob::Glob;
pub use holding::{limits_in, next_grantable, pools_over};
pub use resource::{resource_covers, resources_conflict, Resource, Target};
pub use scope::{valid_until_in, Scope};
use validate::{check_line, check_list, check_ttl};
pub use validate::{
    check_progress, check_text, normalize_summary, validate_word,
    validate_workspace,
};

/// A request to change the state. Each variant is one verb (docs/reference.md, "Verbs").
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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
        /// When the actor already holds a live claim in the workspace, answer that claim
        /// (the oldest; up to `count` of them) instead of claiming another or refusing as
        /// `assignee_busy`.
        resume: bool,
        /// Claim up to this many ready nodes (1 to 1000, `MAX_BATCH`), in pick order, in this
        /// one write.
        count: u32,
    },
    Renew {
        node: Id,
        actor: Actor,
        gen: Option<u64>,
        ttl_ms: Option<u64>,
        /// A checkpoint to keep (replaces the node's `progress`).
        progress: Option<String>,
        /// What the claim has spent so far (its total: a repeated report counts once).
        #[serde(default)]
        usage: Option<crate::model::Usage>,
    },
    Release {
        node: Id,
        actor: Actor,
        gen: u64,
        /// Ready again only this long after the release, instead of the store's backoff.
        retry_in_ms: Option<u64>,
    },
    Reclaim {
        workspace: String,
        lease_ms: Option<u64>,
    },
    Complete(Finish),
    /// Several completions in one write: all of them, or (the first refusal) none.
    CompleteMany(Vec<Finish>),
    /// By anyone: a `todo` node becomes `cancelled`; a claimed one gets `cancel_requested`,
    /// which its holder learns at its next renew.
    Cancel {
        node: Id,
        /// Who asks (recorded as `cancel_requested.by` and in the history).
        actor: Option<Actor>,
        reason: Option<String>,
        /// Only if the node is at this generation.
        gen: Option<u64>,
    },
    Reopen {
        node: Id,
        gen: Option<u64>,
    },
    /// Fresh attempts for a parked node (out of attempts) at generation `gen`.
    Retry {
        node: Id,
        gen: u64,
    },
    /// `approve` (done) or `reject` (failed) a gate at generation `gen`.
    Resolve {
        node: Id,
        gen: u64,
        approve: bool,
        actor: Option<Actor>,
        note: Option<String>,
    },
    Configure(Settings),
    /// Changes settings from their text form (`config KEY VALUE`), in order, read and
    /// written in one step so concurrent changes of other settings are not lost; the
    /// settings are checked once, as they are after every change.
    SetSettings {
        changes: Vec<(String, String)>,
    },
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
    /// `request`, done by `by` on behalf of the actor it names (a lead releasing or
    /// completing a worker's claim from the dashboard): the rules are `request`'s, and its
    /// events record `by` beside their actor.
    Acting { by: Actor, request: Box<Request> },
    /// `request`, come through `door` (`cli`, `python`, `c`, `mcp`, `http`, `dashboard`):
    /// the rules are `request`'s, and its events record the door.
    Through { door: String, request: Box<Request> },
    /// Brings an archived node back, exactly as it was archived (its last value, which the
    /// backend reads from the archive inside the same locked step).
    Unarchive {
        node: Id,
    },
}

/// Where the rules read an archived node's last value. A backend answers from inside the
/// same locked step (transaction) the rules run in, so what it returns is the node that the
/// state's stub stands for.
pub trait Archive {
    fn archived_node(&self, id: &Id) -> Result<Option<Node>>;
}

/// An archive with nothing in it (a state without archived nodes, or a read-only view).
pub struct NoArchive;

impl Archive for NoArchive {
    fn archived_node(&self, _: &Id) -> Result<Option<Node>> {
        Ok(None)
    }
}

impl<S: std::hash::BuildHasher> Archive for std::collections::HashMap<Id, Node, S> {
    fn archived_node(&self, id: &Id) -> Result<Option<Node>> {
        Ok(self.get(id).cloned())
    }
}

/// One completion: a claim (or, for `cancelled`, a `todo` node) ended at generation `gen`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Finish {
    pub node: Id,
    pub status: Status,
    pub gen: u64,
    /// Refuse unless this actor is the holder.
    pub actor: Option<Actor>,
    pub note: Option<String>,
    /// What the node produced, handed to its dependents (at most 64 KiB serialised). A JSON
    /// `null` is an output too: it stays `Some` through serde.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub output: Option<serde_json::Value>,
    /// Only a live claim of `actor` may be ended: a `todo` node is `not_claimed` even
    /// for `cancelled` (a worker ends what it holds; cancelling is a planner's act).
    pub held: bool,
}

/// A value that is there, `null` included (for `Option<Value>` fields whose `None` is
/// "absent").
fn present<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<serde_json::Value>, D::Error> {
    <serde_json::Value as serde::Deserialize>::deserialize(d).map(Some)
}

/// A claim granted: the fencing token, and what the node carries for its new holder.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Grant {
    pub id: Id,
    pub generation: u64,
    /// True when this is the live claim the actor already held (claim-next with `resume`).
    pub resumed: bool,
    /// The last checkpoint an earlier holder left, and when.
    pub progress: Option<String>,
    pub progress_at: Option<Millis>,
    /// The output (compact JSON text, `None` for none) of every prerequisite that is
    /// `done`, hard ones first, in the order the node lists them.
    pub inputs: Vec<(Id, Option<String>)>,
}

/// The fields of an upsert. `None` means "not given": on an existing node it leaves the
/// field as it is.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
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
    /// Not granted before this time (ms since the epoch).
    pub not_before: Option<Millis>,
    /// Past this time (ms since the epoch) an unfinished node is overdue.
    #[serde(default)]
    pub deadline: Option<Millis>,
    /// The most the node may spend.
    #[serde(default)]
    pub budget: Option<crate::model::Budget>,
}

/// What a successful request returns.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Output {
    /// Nothing to report.
    Unit,
    /// The id of the upserted node, and whether it was created.
    Upserted { id: Id, created: bool },
    /// The node's new generation (release, reopen).
    Generation(u64),
    /// The claim granted (claim).
    Granted(Grant),
    /// The claims granted in pick order, or the ones the actor held (`resume`); empty when
    /// nothing was ready (claim-next).
    Claimed(Vec<Grant>),
    /// The cancel request the holder should act on, if one was made (renew).
    Renewed(Option<CancelRequest>),
    /// A cancel: the node was cancelled (`false`), or its holder was asked to stop (`true`).
    Cancelled { id: Id, requested: bool },
    /// Every node completed, in request order (complete_many).
    CompletedMany(Vec<(Id, Status)>),
    /// Nodes handed back and their new generations (reclaim).
    HandedBack(Vec<(Id, u64)>),
    /// The node reached this status (complete), or is back with it (unarchive).
    Completed(Id, Status),
    /// The id of every plan node, in plan order, with its key.
    Imported(Vec<(Id, String)>),
    /// How many nodes were archived.
    Archived(usize),
    /// The settings after the change.
    Settings(Settings),
}

/// The result of a request: what to commit and what to return.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    pub change: Change,
    pub output: Output,
}

/// The most claims one `claim-next` grants.
pub const MAX_BATCH: u32 = 1000;

/// Refuses a request that names generation 0, which no node ever has.
fn no_generation_zero(req: &Request) -> Result<()> {
    let given_gen = match req {
        Request::Claim { gen, .. } | Request::Renew { gen, .. } | Request::Reopen { gen, .. } => {
            *gen
        }
        Request::Cancel { gen, .. } => *gen,
        Request::Release { gen, .. }
        | Request::Complete(Finish { gen, .. })
        | Request::Resolve { gen, .. }
        | Request::Retry { gen, .. } => Some(*gen),
        Request::CompleteMany(all) => all.iter().map(|f| f.gen).find(|g| *g == 0),
        _ => None,
    };
    if given_gen == Some(0) {
        return Err(Error::invalid(
            "generation 0 does not exist: generations start at 1",
        ));
    }
    Ok(())
}

/// Evaluates `req` against `state` (whose archived nodes `archive` holds) at time `now`.
pub fn apply(state: &State, archive: &dyn Archive, req: &Request, now: Millis) -> Result<Effect> {
    match req {
        Request::Acting { by, request } => {
            return acting(*by, apply(state, archive, request, now)?)
        }
        Request::Through { door, request } => {
            let mut effect = apply(state, archive, request, now)?;
            for e in &mut effect.change.events {
                e.door = Some(door.clone());
            }
            return Ok(effect);
        }
        _ => {}
    }
    no_generation_zero(req)?;
    let scope = req.scope(state);
    let mut tx = Tx::begin(state, now, Some(&scope));
    let output = decide(&mut tx, archive, req)?;
    tx.settle_containers(archive)?;
    Ok(Effect {
        change: tx.finish(),
        output,
    })
}

/// What `req` does in `tx`: the verb's own rule.
fn decide(tx: &mut Tx<'_>, archive: &dyn Archive, req: &Request) -> Result<Output> {
    Ok(match req {
        // Answered above.
        Request::Acting { .. } | Request::Through { .. } => {
            return Err(Error::Internal(
                "an acting request is applied as the request it carries".into(),
            ))
        }
        Request::Unarchive { node } => tx.unarchive(*node, archive)?,
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
        } => {
            Output::Granted(tx.claim(*node, *actor, *gen, *ttl_ms)?)
        }
        Request::ClaimNext {
            workspace,
            actor,
            role,
            ttl_ms,
            resume,
            count,
        } => {
            let role = role.as_deref();
            tx.claim_next(workspace, *actor, role, *ttl_ms, *resume, *count)?
        }
        Request::Renew {
            node,
            actor,
            gen,
            ttl_ms,
            progress,
            usage,
        } => tx.renew(*node, *actor, *gen, *ttl_ms, progress.as_deref(), usage.as_ref())?,
        Request::Release {
            node,
            actor,
            gen,
            retry_in_ms,
        } => tx.release(*node, *actor, *gen, *retry_in_ms)?,
        Request::Reclaim {
            workspace,
            lease_ms,
        } => tx.reclaim(workspace, *lease_ms),
        Request::Complete(f) => {
            tx.complete(f)?;
            Output::Completed(f.node, f.status)
        }
        Request::CompleteMany(all) => tx.complete_many(all)?,
        Request::Cancel {
            node,
            actor,
            reason,
            gen,
        } => tx.cancel(*node, *actor, reason.as_deref(), *gen)?,
        Request::Reopen { node, gen } => tx.reopen(*node, *gen)?,
        r @ Request::Resolve { .. } => tx.resolve_request(r)?,
        Request::Retry { node, gen } => tx.retry(*node, *gen)?,
        Request::Configure(s) => tx.configure(s)?,
        Request::SetSettings { changes } => tx.set_settings(changes)?,
        Request::Import { workspace, plan } => tx.import(workspace, plan)?,
        Request::Archive {
            workspace,
            nodes,
            older_than_ms,
        } => tx.archive(workspace, nodes, *older_than_ms)?,
    })
}

/// `effect`, done by `by`: each event it made records `by` where its actor is another
/// (claims that ran out and were handed back on the way are the store's doing, not `by`'s).
fn acting(by: Actor, mut effect: Effect) -> Result<Effect> {
    for e in &mut effect.change.events {
        if e.verb != "expire" && e.actor != Some(by) {
            e.by = Some(by);
        }
    }
    Ok(effect)
}

/// `fence-check`: whether `gen` is the live claim of `n` (as [`display`] shows it: claimed,
/// its lease still running). Otherwise `stale_generation`: work done under `gen` is no
/// longer the holder's to finish (the claim was handed back, or its lease ran out and it
/// will be).
pub fn fence_check(n: &Node, shown: DisplayWord, gen: u64) -> Result<()> {
    if n.generation == gen && shown == DisplayWord::Claimed {
        return Ok(());
    }
    Err(Error::StaleGeneration {
        node: n.id,
        given: gen,
        generation: n.generation,
    })
}

/// The first time after `now` at which the rules would see `state` differently by time
/// alone (the next lease to run out, the next `not_before` to pass), if any. A decision
/// made at `now` holds until then: a store that commits it later (a slow link, a paused
/// process) must refuse it from that time on and have it decided again. A waiter for ready
/// work sleeps until then at most.
pub fn valid_until(state: &State, now: Millis) -> Option<Millis> {
    let leases = state
        .claimed_ids()
        .iter()
        .filter_map(|id| state.get(id)?.lease_end());
    let scheduled = state.scheduled().values().copied();
    let rates = holding::next_rate_room(state, now, &|_| true);
    leases.chain(scheduled).chain(rates).filter(|t| *t > now).min()
}

/// The state as of `now` with every expired claim handed back, as the next write will see
/// it, to read (`next`, `ready`, the critical path).
pub fn read_at(state: &State, now: Millis) -> Tx<'_> {
    Tx::begin(state, now, None)
}

/// The derived display word of a node (docs/reference.md, "Display words").
pub fn display(state: &State, node: &Node, now: Millis) -> DisplayWord {
    match node.status {
        Status::Claimed if node.is_expired(now) => DisplayWord::Expired,
        Status::Claimed => DisplayWord::Claimed,
        Status::Done => DisplayWord::Done,
        Status::Failed => DisplayWord::Failed,
        Status::Cancelled => DisplayWord::Cancelled,
        Status::Todo => match readiness_at(&|id| state.status_of(id), &state.settings, node, now) {
            Readiness::Ready => DisplayWord::Ready,
            Readiness::Scheduled(_) => DisplayWord::Scheduled,
            Readiness::Blocked(_) => DisplayWord::Blocked,
            Readiness::Waiting(_) => DisplayWord::Todo,
            Readiness::OutOfAttempts { .. } => DisplayWord::Parked,
            // Its prerequisites are done: ready for a person's decision.
            Readiness::Gate => DisplayWord::Ready,
            // Work remains under it.
            Readiness::Container { .. } => DisplayWord::Todo,
        },
    }
}

/// A transaction over a borrowed state: reads see the state with this transaction's changes
/// on top; nothing is written until the caller commits what `Tx::finish` returns.
pub struct Tx<'a> {
    state: &'a State,
    now: Millis,
    changed: Vec<Node>,
    pos: IdMap<usize>,
    archived: Vec<Node>,
    settings: Option<Settings>,
    events: Vec<Event>,
}

impl<'a> Tx<'a> {
    /// A transaction view at `now` with the expired claims of `scope` (of every workspace
    /// when `None`, for a read) handed back.
    fn begin(state: &'a State, now: Millis, scope: Option<&Scope>) -> Tx<'a> {
        let mut tx = Tx {
            state,
            now,
            changed: Vec::new(),
            pos: IdMap::default(),
            archived: Vec::new(),
            settings: None,
            events: Vec::new(),
        };
        tx.expire_all(scope);
        tx.note_deadlines(scope);
        tx
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

    /// The workspace of a live or archived node.
    pub fn workspace_of(&self, id: &Id) -> Option<&str> {
        match self.pos.get(id) {
            Some(&i) => Some(self.changed[i].workspace.as_str()),
            None => self.state.workspace_of(id),
        }
    }

    /// Refuses a prerequisite from another workspace: links never cross workspaces, so
    /// that a cycle can never close across them.
    fn same_workspace(&self, dep: &Id, workspace: &str) -> Result<()> {
        match self.workspace_of(dep) {
            Some(w) if w != workspace => Err(Error::invalid(format!(
                "cannot link across workspaces: {dep} is in workspace {w:?}, not {workspace:?}"
            ))),
            _ => Ok(()),
        }
    }

    /// True when `id` was changed by this transaction.
    pub fn is_changed(&self, id: &Id) -> bool {
        self.pos.contains_key(id)
    }

    /// The nodes this transaction changed (new ones included).
    pub fn changed(&self) -> &[Node] {
        &self.changed
    }

    /// True when all this transaction did is hand expired claims back: the pick order of
    /// the state it reads still holds for every other node, and those nodes keep their
    /// critical path lengths (a claimed node and a `todo` one are both unfinished).
    pub fn only_hand_backs(&self) -> bool {
        self.settings.is_none()
            && self.archived.is_empty()
            && self.changed.iter().all(|c| {
                self.state.get(&c.id).is_some_and(|b| {
                    b.status == Status::Claimed
                        && c.status == Status::Todo
                        && b.estimate == c.estimate
                        && b.deps == c.deps
                        && b.soft_deps == c.soft_deps
                        && b.role == c.role
                        && b.priority == c.priority
                        && b.workspace == c.workspace
                        && b.attempts == c.attempts
                        && b.max_attempts == c.max_attempts
                })
            })
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

    /// Whether `node` is ready at this transaction's time.
    pub fn readiness(&self, node: &Node) -> Readiness {
        readiness_at(&|id| self.status_of(id), self.settings(), node, self.now)
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
            output: None,
            by: None,
            door: None,
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

    /// Hands back `node`: `todo`, holder cleared, generation + 1, attempts kept; not
    /// granted again for `retry_in` ms when given (0: ready at once, whatever `not_before`
    /// was set while it was held), else for the store's backoff; never past the latest time
    /// the store keeps.
    fn hand_back(&mut self, mut node: Node, verb: &str, retry_in: Option<u64>) -> u64 {
        let delay = retry_in.unwrap_or_else(|| self.settings().backoff_ms(node.attempts));
        if delay > 0 {
            node.not_before = Some(self.now.saturating_add(delay).min(validate::LATEST_TIME));
        } else if retry_in.is_some() {
            node.not_before = None;
        }
        let holder = node.holder.take();
        node.last_holder = holder;
        node.cancel_requested = None;
        node.status = Status::Todo;
        node.generation += 1;
        node.claimed_at = None;
        node.renewed_at = None;
        node.ttl_ms = None;
        node.updated_at = node.updated_at.max(self.now);
        self.event(verb, Some(&node), holder, None);
        let g = node.generation;
        self.put(node);
        g
    }

    /// Every write first hands back every expired claim of its scope (a read, of all).
    fn expire_all(&mut self, scope: Option<&Scope>) {
        let now = self.now;
        let expired: Vec<Node> = self
            .claimed()
            .filter(|n| n.is_expired(now))
            .filter(|n| scope.is_none_or(|s| s.holds(&n.workspace)))
            .cloned()
            .collect();
        for n in expired {
            self.hand_back(n, "expire", None);
        }
    }
    /// Applies settings in their text form, in order, and checks the result once.
    fn set_settings(&mut self, changes: &[(String, String)]) -> Result<Output> {
        let mut s = self.settings().clone();
        for (key, value) in changes {
            s.set(key, value)?;
            let delay = match key.as_str() {
                "retry_delay" => s.retry_delay_ms,
                "retry_delay_max" => s.retry_delay_max_ms,
                _ => continue,
            };
            if validate::check_delay(self.now, delay, key).is_err() {
                return Err(Error::invalid(format!(
                    "{key} {value:?} is too long: from now it reaches past the latest time \
                     the clock can reach ({})",
                    crate::duration::format_time(validate::LATEST_TIME)
                )));
            }
        }
        self.configure(&s)?;
        Ok(Output::Settings(s))
    }

    fn configure(&mut self, s: &Settings) -> Result<Output> {
        s.limits.check()?;
        if s.default_ttl_ms == 0 {
            return Err(Error::invalid("default_ttl must be longer than 0"));
        }
        check_ttl(self.now, s.default_ttl_ms, "default_ttl")?;
        if s.max_attempts == Some(0) {
            return Err(Error::invalid("max_attempts must be at least 1 (or none)"));
        }
        if s.retry_delay_max_ms < s.retry_delay_ms {
            return Err(Error::invalid(format!(
                "retry_delay_max ({}) must not be below retry_delay ({})",
                crate::duration::format_ms(s.retry_delay_max_ms),
                crate::duration::format_ms(s.retry_delay_ms)
            )));
        }
        validate::check_delay(self.now, s.retry_delay_ms, "retry_delay")?;
        validate::check_delay(self.now, s.retry_delay_max_ms, "retry_delay_max")?;
        if s != self.settings() {
            self.settings = Some(s.clone());
            self.event("config", None, None, None);
        }
        Ok(Output::Unit)
    }
}

impl crate::schedule::PickView for Tx<'_> {
    fn get(&self, id: &Id) -> Option<&Node> {
        Tx::get(self, id)
    }
    fn now(&self) -> Millis {
        self.now
    }
    fn nodes(&self) -> impl Iterator<Item = &Node> + '_ {
        Tx::nodes(self)
    }
    fn readiness(&self, node: &Node) -> Readiness {
        Tx::readiness(self, node)
    }
    fn changed(&self) -> &[Node] {
        Tx::changed(self)
    }
    fn is_changed(&self, id: &Id) -> bool {
        Tx::is_changed(self, id)
    }
    fn kept_order(&self) -> Option<&crate::schedule::pick_order::PickOrder> {
        if !self.only_hand_backs() {
            return None;
        }
        self.state.pick_order_if_warm()
    }
    fn order_index(&self) -> &crate::schedule::pick_order::PickOrder {
        self.state.pick_order()
    }
}
