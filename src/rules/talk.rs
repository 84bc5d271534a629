//! A holder and the rest talk: what a claim hands its new holder (the last checkpoint, the
//! outputs of its prerequisites), cancel requests, and several completions in one write.

use super::claims::check_gen;
use super::validate::check_text;
use super::{Finish, Grant, Output, Tx};
use crate::error::{Error, Result};
use crate::id::{Actor, Id};
use crate::model::{CancelRequest, Node, Status};

/// The longest reason a cancel request keeps, in bytes.
pub const MAX_REASON_BYTES: usize = 4096;

impl Tx<'_> {
    /// The claim of `n` as its holder receives it: the generation, the last checkpoint,
    /// and the output of every prerequisite that is `done` (archived ones too).
    pub(super) fn grant(&self, n: &Node, resumed: bool) -> Grant {
        let inputs = n
            .prerequisites()
            .filter_map(|(dep, _)| self.done_output(&dep).map(|o| (dep, o)))
            .collect();
        Grant {
            id: n.id,
            generation: n.generation,
            resumed,
            progress: n.progress.clone(),
            progress_at: n.progress_at,
            inputs,
        }
    }

    /// For a `done` node (live or archived), its output (`None` when it gave none); `None`
    /// when the node is not `done`.
    fn done_output(&self, id: &Id) -> Option<Option<String>> {
        if let Some(n) = self.get(id) {
            return (n.status == Status::Done).then(|| n.output.clone());
        }
        let stub = self.state.archived().get(id)?;
        (stub.status == Status::Done).then(|| stub.output.clone())
    }

    /// `cancel`: a `todo` node becomes `cancelled` at its generation; a claimed one gets
    /// `cancel_requested` (generation unchanged); a finished one is `terminal`.
    pub(super) fn cancel(
        &mut self,
        id: Id,
        by: Option<Actor>,
        reason: Option<&str>,
        gen: Option<u64>,
    ) -> Result<Output> {
        if let Some(r) = reason {
            check_text("reason", r, MAX_REASON_BYTES)?;
        }
        let mut n = self.node(id)?;
        check_gen(&n, gen)?;
        self.not_a_container(&n, "cancel")?;
        match n.status {
            s if s.is_terminal() => Err(Error::Terminal {
                node: id,
                status: s.to_string(),
            }),
            Status::Todo => {
                n.status = Status::Cancelled;
                n.completed_by = by;
                n.updated_at = n.updated_at.max(self.now);
                self.event("cancel", Some(&n), by, reason.map(str::to_string));
                self.put(n);
                Ok(Output::Cancelled {
                    id,
                    requested: false,
                })
            }
            _ => {
                n.cancel_requested = Some(CancelRequest {
                    by,
                    reason: reason.map(str::to_string),
                    at: self.now,
                });
                n.updated_at = n.updated_at.max(self.now);
                self.event("cancel_request", Some(&n), by, reason.map(str::to_string));
                self.put(n);
                Ok(Output::Cancelled {
                    id,
                    requested: true,
                })
            }
        }
    }

    /// Every completion in one write, in order: the first refusal refuses them all.
    pub(super) fn complete_many(&mut self, all: &[Finish]) -> Result<Output> {
        if all.is_empty() {
            return Err(Error::invalid(
                "complete_many needs at least one completion",
            ));
        }
        let ids: Vec<Id> = all.iter().map(|f| f.node).collect();
        super::scope::one_workspace(self.state, &ids, "complete_many")?;
        let mut done = Vec::with_capacity(all.len());
        for f in all {
            self.complete(f)?;
            done.push((f.node, f.status));
        }
        Ok(Output::CompletedMany(done))
    }
}
