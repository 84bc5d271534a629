//! Claims and their ends: claim, claim-next, renew, release, reclaim, complete, reopen.
//! Generations move here and only here (and in expiry, `Tx::hand_back`).

use super::{check_progress, check_text, check_ttl, validate_word, validate_workspace};
use super::validate::{check_delay, output_text};
use super::{Finish, Grant, Output, Readiness, Tx, MAX_BATCH};
use crate::error::{Error, Result};
use crate::id::{Actor, Id};
use crate::model::{Node, Status};
use crate::schedule;

/// The claims of one `claim-next` so far.
struct Batch {
    want: usize,
    got: Vec<Grant>,
    /// Candidates passed over: a resource of theirs is held by another claim.
    skipped: Vec<Id>,
}

impl Tx<'_> {
    pub(super) fn claim(
        &mut self,
        id: Id,
        actor: Actor,
        gen: Option<u64>,
        ttl: Option<u64>,
    ) -> Result<Grant> {
        let ttl = ttl.unwrap_or(self.settings().default_ttl_ms);
        check_ttl(self.now, ttl, "ttl")?;
        let mut n = self.node(id)?;
        if !self.expired_here_at(&n, gen) {
            check_gen(&n, gen)?;
        }
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
                holder_name: None,
                generation: n.generation,
            });
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
        self.check_max_held(&n, actor)?;
        self.check_resources(&n, true)?;
        self.note_rate_grant(&mut n);
        n.status = Status::Claimed;
        n.holder = Some(actor);
        n.generation += 1;
        n.attempts = n.attempts.saturating_add(1);
        n.claimed_at = Some(self.now);
        n.renewed_at = Some(self.now);
        n.ttl_ms = Some(ttl);
        n.not_before = None;
        n.claim_spent = Default::default();
        n.updated_at = n.updated_at.max(self.now);
        self.event("claim", Some(&n), Some(actor), None);
        let grant = self.grant(&n, false);
        self.put(n);
        Ok(grant)
    }

    /// Refuses a claim past `max_held` live claims of `actor` in `n`'s workspace.
    fn check_max_held(&self, n: &Node, actor: Actor) -> Result<()> {
        let max_held = self.settings().max_held;
        if max_held > 0 {
            let mut held: Vec<(u64, Id)> = self
                .claimed()
                .filter(|c| c.workspace == n.workspace && c.holder == Some(actor))
                .map(|c| (c.claimed_at.unwrap_or(0), c.id))
                .collect();
            if held.len() as u64 >= max_held {
                held.sort();
                return Err(Error::AssigneeBusy {
                    node: n.id,
                    actor,
                    actor_name: None,
                    held: held.into_iter().map(|(_, id)| id).collect(),
                    max_held,
                });
            }
        }
        Ok(())
    }

    pub(super) fn claim_next(
        &mut self,
        workspace: &str,
        actor: Actor,
        role: Option<&str>,
        ttl: Option<u64>,
        resume: bool,
        count: u32,
    ) -> Result<Output> {
        validate_workspace(workspace)?;
        if let Some(r) = role {
            validate_word("role", r, 0)?;
        }
        if let Some(t) = ttl {
            check_ttl(self.now, t, "ttl")?;
        }
        if !(1..=MAX_BATCH).contains(&count) {
            return Err(Error::invalid(format!(
                "count must be 1 to {MAX_BATCH}, got {count}"
            )));
        }
        if resume {
            // Every claim left in this view is live: expired ones were handed back.
            let mut held: Vec<(Option<u64>, Id, Grant)> = self
                .claimed()
                .filter(|c| c.workspace == workspace && c.holder == Some(actor))
                .map(|c| (c.claimed_at, c.id, self.grant(c, true)))
                .collect();
            if !held.is_empty() {
                held.sort_by_key(|(at, id, _)| (*at, *id));
                held.truncate(count as usize);
                let grants = held.into_iter().map(|(_, _, g)| g).collect();
                return Ok(Output::Claimed(grants));
            }
        }
        // The best candidates, found without ranking the rest. Only when a resource held by
        // another claim refuses one are the rest ranked and tried in order. Claiming one
        // node changes no other's readiness or rank, so the list holds for the whole batch.
        let role = role.unwrap_or("");
        let mut batch = Batch {
            want: count as usize,
            got: Vec::new(),
            skipped: Vec::new(),
        };
        for pick in schedule::first(self, workspace, role, batch.want) {
            if !self.grant_into(&mut batch, pick.id, actor, ttl)? {
                return Ok(Output::Claimed(batch.got));
            }
        }
        if batch.got.len() < batch.want && !batch.skipped.is_empty() {
            for pick in schedule::order(self, workspace, role) {
                if batch.got.len() == batch.want {
                    break;
                }
                if batch.skipped.contains(&pick.id) {
                    continue;
                }
                if !self.grant_into(&mut batch, pick.id, actor, ttl)? {
                    break;
                }
            }
        }
        Ok(Output::Claimed(batch.got))
    }

    /// Claims `id` into `batch`: `false` when the actor may hold no more (after at least
    /// one grant of this batch); a node whose resource another claim holds is skipped;
    /// any other refusal refuses the whole call.
    fn grant_into(
        &mut self,
        batch: &mut Batch,
        id: Id,
        actor: Actor,
        ttl: Option<u64>,
    ) -> Result<bool> {
        match self.claim(id, actor, None, ttl) {
            Ok(g) => {
                batch.got.push(g);
                Ok(true)
            }
            Err(Error::ResourceConflict { .. } | Error::ResourceBusy { .. }) => {
                batch.skipped.push(id);
                Ok(true)
            }
            Err(Error::AssigneeBusy { .. }) if !batch.got.is_empty() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// True when the expected generation `gen` is that of `n`'s claim which ran out and
    /// which this very write handed back (`expire`, to `gen` + 1): the reader saw the node
    /// `expired` at `gen`, and nothing but that hand-back happened since. A claim then
    /// expects the node as the reader saw it. Once some earlier write handed the claim
    /// back, the node is at `gen` + 1 for every reader, and `gen` is stale.
    fn expired_here_at(&self, n: &Node, gen: Option<u64>) -> bool {
        let Some(g) = gen else { return false };
        n.generation == g.saturating_add(1)
            && self.events.iter().any(|e| {
                e.verb == "expire" && e.node == Some(n.id) && e.generation == Some(n.generation)
            })
    }

    /// The node claimed by `actor` at `gen` (if given), checked for renew and release. A
    /// generation that is not the node's current one is stale before anything else; so is
    /// an actor whose claim was handed back (and that gives no generation), whatever the
    /// node did since.
    fn held_by(&self, id: Id, actor: Actor, gen: Option<u64>) -> Result<Node> {
        let n = self.node(id)?;
        check_gen(&n, gen)?;
        let holds = n.status == Status::Claimed && n.holder == Some(actor);
        if !holds && gen.is_none() && n.last_holder == Some(actor) {
            return Err(Error::StaleGeneration {
                node: id,
                given: 0,
                generation: n.generation,
            });
        }
        if n.status.is_terminal() {
            return Err(Error::Terminal {
                node: id,
                status: n.status.to_string(),
            });
        }
        if n.status != Status::Claimed {
            return Err(Error::NotClaimed {
                node: id,
                status: n.status.to_string(),
            });
        }
        if !holds {
            return Err(Error::NotHolder {
                node: id,
                actor,
                holder: n.holder.unwrap_or_default(),
                holder_name: None,
                generation: n.generation,
            });
        }
        Ok(n)
    }

    pub(super) fn renew(
        &mut self,
        id: Id,
        actor: Actor,
        gen: Option<u64>,
        ttl: Option<u64>,
        progress: Option<&str>,
        usage: Option<&crate::model::Usage>,
    ) -> Result<Output> {
        if let Some(t) = ttl {
            check_ttl(self.now, t, "ttl")?;
        }
        if let Some(p) = progress {
            check_progress(p)?;
        }
        let mut n = self.held_by(id, actor, gen)?;
        if let Some(u) = usage {
            self.report_usage(&mut n, u)?;
        }
        n.renewed_at = Some(self.now);
        if let Some(t) = ttl {
            n.ttl_ms = Some(t);
        }
        if let Some(p) = progress {
            n.progress = Some(p.to_string());
            n.progress_at = Some(self.now);
        }
        n.updated_at = n.updated_at.max(self.now);
        // A checkpoint rides on the renewal's event: it is not an event of its own.
        self.event("renew", Some(&n), Some(actor), None);
        let asked = n.cancel_requested.clone();
        self.put(n);
        Ok(Output::Renewed(asked))
    }

    pub(super) fn release(
        &mut self,
        id: Id,
        actor: Actor,
        gen: u64,
        retry_in: Option<u64>,
    ) -> Result<Output> {
        if let Some(t) = retry_in {
            check_delay(self.now, t, "retry_in")?;
        }
        let n = self.held_by(id, actor, Some(gen))?;
        let g = self.hand_back(n, "release", retry_in);
        Ok(Output::Generation(g))
    }

    pub(super) fn reclaim(&mut self, workspace: &str, lease: Option<u64>) -> Output {
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
                let g = self.hand_back(n, "reclaim", None);
                handed.push((id, g));
            }
        }
        Output::HandedBack(handed)
    }

    /// Ends a claim (or cancels a `todo` node) as `f` asks.
    pub(super) fn complete(&mut self, f: &Finish) -> Result<()> {
        let (id, status) = (f.node, f.status);
        if !status.is_terminal() {
            return Err(Error::invalid(format!(
                "complete needs a terminal status (done, failed or cancelled), got {status}"
            )));
        }
        if let Some(t) = &f.note {
            check_text("note", t, 65536)?;
        }
        let output = f.output.as_ref().map(output_text).transpose()?;
        let mut n = self.node(id)?;
        check_gen(&n, Some(f.gen))?;
        self.not_a_container(&n, "complete")?;
        if n.status.is_terminal() {
            return Err(Error::Terminal {
                node: id,
                status: n.status.to_string(),
            });
        }
        if n.status == Status::Todo {
            if status != Status::Cancelled || f.held {
                return Err(Error::NotClaimed {
                    node: id,
                    status: n.status.to_string(),
                });
            }
        } else if let Some(a) = f.actor {
            if n.holder != Some(a) {
                return Err(Error::NotHolder {
                    node: id,
                    actor: a,
                    holder: n.holder.unwrap_or_default(),
                    holder_name: None,
                    generation: n.generation,
                });
            }
        }
        n.completed_by = n.holder.take().or(f.actor);
        n.status = status;
        n.claimed_at = None;
        n.renewed_at = None;
        n.ttl_ms = None;
        n.cancel_requested = None;
        if let Some(t) = &f.note {
            n.note = Some(t.clone());
        }
        if output.is_some() {
            n.output = output.clone();
        }
        n.updated_at = n.updated_at.max(self.now);
        self.event(
            "complete",
            Some(&n),
            n.completed_by,
            Some(status.to_string()),
        );
        if let Some(e) = self.events.last_mut() {
            e.output = output;
        }
        self.put(n);
        Ok(())
    }

    pub(super) fn reopen(&mut self, id: Id, gen: Option<u64>) -> Result<Output> {
        let mut n = self.node(id)?;
        check_gen(&n, gen)?;
        self.not_a_container(&n, "reopen")?;
        if !n.status.is_terminal() {
            return Err(Error::invalid(format!(
                "node {id} is not terminal (status {}); only a finished node can be reopened",
                n.status
            )));
        }
        n.status = Status::Todo;
        n.generation += 1;
        n.completed_by = None;
        n.not_before = None;
        // A reopened node starts afresh: no checkpoint, no request, no output.
        n.progress = None;
        n.progress_at = None;
        n.cancel_requested = None;
        n.output = None;
        n.updated_at = n.updated_at.max(self.now);
        self.event("reopen", Some(&n), None, None);
        let g = n.generation;
        self.put(n);
        Ok(Output::Generation(g))
    }
}

/// A given generation that is not the node's current one is `stale_generation`, before any
/// other refusal: the caller's claim (or view) is from another time.
pub(super) fn check_gen(n: &Node, gen: Option<u64>) -> Result<()> {
    match gen {
        Some(g) if g != n.generation => Err(Error::StaleGeneration {
            node: n.id,
            given: g,
            generation: n.generation,
        }),
        _ => Ok(()),
    }
}
