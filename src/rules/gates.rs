//! What people decide (SPEC 13): a node of kind `gate` is never offered or claimed; a
//! person resolves it with `approve` (done) or `reject` (failed), fenced by its generation
//! as a completion is, once its prerequisites are done. A node out of attempts is parked
//! until a person gives it fresh ones (`retry`).

use super::claims::check_gen;
use super::{check_text, Output, Readiness, Request, Tx};
use crate::error::{Error, Result};
use crate::id::{Actor, Id};
use crate::model::Status;
use crate::schedule::ready::GATE;

impl Tx<'_> {
    /// [`Request::Resolve`].
    pub(super) fn resolve_request(&mut self, r: &Request) -> Result<Output> {
        match r {
            Request::Resolve {
                node,
                gen,
                approve,
                actor,
                note,
            } => self.resolve(*node, *gen, *approve, *actor, note.as_deref()),
            _ => Err(Error::Internal("resolve_request: not a Resolve".into())),
        }
    }

    /// Fresh attempts for a parked node: its attempts start again from 0 and its generation
    /// moves on (a grant of an older time cannot finish it).
    pub(super) fn retry(&mut self, id: Id, gen: u64) -> Result<Output> {
        let mut n = self.node(id)?;
        check_gen(&n, Some(gen))?;
        let parked = n.status == Status::Todo
            && matches!(self.readiness(&n), Readiness::OutOfAttempts { .. });
        if !parked {
            let word = match n.status {
                Status::Todo => self.readiness(&n).explain(),
                s => s.to_string(),
            };
            return Err(Error::invalid(format!(
                "retry: node {id} is not parked ({word}): only a node out of attempts gets \
                 fresh ones"
            )));
        }
        n.attempts = 0;
        n.generation += 1;
        n.not_before = None;
        n.updated_at = n.updated_at.max(self.now);
        self.event("retry", Some(&n), None, None);
        let g = n.generation;
        self.put(n);
        Ok(Output::Generation(g))
    }

    fn resolve(
        &mut self,
        id: Id,
        gen: u64,
        approve: bool,
        actor: Option<Actor>,
        note: Option<&str>,
    ) -> Result<Output> {
        let verb = if approve { "approve" } else { "reject" };
        if let Some(t) = note {
            check_text("note", t, 65536)?;
        }
        let mut n = self.node(id)?;
        check_gen(&n, Some(gen))?;
        if n.kind != GATE {
            return Err(Error::invalid(format!(
                "{verb}: node {id} is of kind {:?}, not a gate: approve and reject resolve \
                 nodes of kind gate, which workers never claim",
                n.kind
            )));
        }
        if n.status.is_terminal() {
            return Err(Error::Terminal {
                node: id,
                status: n.status.to_string(),
            });
        }
        match self.readiness(&n) {
            Readiness::Gate => {}
            r => {
                return Err(Error::NotReady {
                    node: id,
                    why: r.explain(),
                })
            }
        }
        let status = if approve { Status::Done } else { Status::Failed };
        n.status = status;
        n.completed_by = actor;
        n.not_before = None;
        if let Some(t) = note {
            n.note = Some(t.to_string());
        }
        n.updated_at = n.updated_at.max(self.now);
        self.event(verb, Some(&n), actor, note.map(str::to_string));
        self.put(n);
        Ok(Output::Completed(id, status))
    }
}
