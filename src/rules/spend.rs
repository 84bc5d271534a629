//! Deadlines and budgets (SPEC 13). Past its deadline an unfinished node is overdue: the
//! first write of its workspace from then on records it once (`overdue`) and, with
//! `deadline_action cancel`, asks its holder to stop. A claim reports what it has spent so
//! far (`renew --usage`); the node sums its claims' reports, and the write that takes it
//! past its budget records it (`over_budget`) and asks the holder to stop.

use super::{Scope, Tx};
use crate::error::{Error, Result};
use crate::id::Id;
use crate::model::{CancelRequest, Node, Spend, Status, Usage};

impl Tx<'_> {
    /// Records every node of `scope` (all, for a read) whose deadline has passed since it
    /// was last looked at.
    pub(super) fn note_deadlines(&mut self, scope: Option<&Scope>) {
        let due: Vec<Id> = self
            .state
            .due_by(self.now)
            .filter(|id| !self.pos.contains_key(id))
            .collect();
        for id in due {
            let Some(n) = self.get(&id) else { continue };
            if scope.is_some_and(|s| !s.holds(&n.workspace)) {
                continue;
            }
            let mut n = n.clone();
            if self.mark_overdue(&mut n) {
                self.put(n);
            }
        }
    }

    /// Marks `n` overdue when its deadline has passed and it was not yet: the event, and
    /// the request to stop that `deadline_action cancel` asks for. True when `n` changed.
    pub(super) fn mark_overdue(&mut self, n: &mut Node) -> bool {
        if n.overdue_at.is_some() || !n.is_overdue(self.now) {
            return false;
        }
        n.overdue_at = Some(self.now);
        let deadline = crate::duration::format_time(n.deadline.unwrap_or_default());
        self.event("overdue", Some(n), None, Some(format!("deadline {deadline}")));
        if self.settings().deadline_cancel {
            self.ask_to_stop(n, format!("deadline passed ({deadline})"));
        }
        true
    }

    /// After an edit of `n`'s deadline or budget: a deadline moved to the future may be
    /// met again; one already past is recorded now; a budget already spent asks the holder
    /// to stop. `before` is the node as it was.
    pub(super) fn after_edit(&mut self, before: Option<&Node>, n: &mut Node) {
        if n.deadline.is_some_and(|d| d > self.now) {
            n.overdue_at = None;
        }
        self.mark_overdue(n);
        let was_over = before.is_some_and(Node::is_over_budget);
        self.check_budget(was_over, n);
    }

    /// Takes a claim's report of what it has spent so far: the node's total grows by what
    /// is new since its last report. A report below the last one is refused (reports are
    /// totals, so a repeated one counts once).
    pub(super) fn report_usage(&mut self, n: &mut Node, report: &Usage) -> Result<()> {
        let usage = report.over(&n.claim_spent);
        if let Some(field) = usage.below(&n.claim_spent) {
            return Err(Error::invalid(format!(
                "usage: {field} went down ({usage} after {}): a claim reports its total \
                 so far, which never goes down",
                n.claim_spent
            )));
        }
        let was_over = n.is_over_budget();
        let new = Spend {
            tokens: usage.tokens - n.claim_spent.tokens,
            cost_micros: usage.cost_micros - n.claim_spent.cost_micros,
        };
        n.spent = n.spent.plus(&new);
        n.claim_spent = usage;
        self.check_budget(was_over, n);
        Ok(())
    }

    /// When `n` has just gone past its budget: the event, and its holder asked to stop.
    fn check_budget(&mut self, was_over: bool, n: &mut Node) {
        let Some(how) = n.budget.and_then(|b| b.exceeded_by(&n.spent)) else {
            return;
        };
        if was_over || n.status.is_terminal() {
            return;
        }
        self.event("over_budget", Some(n), None, Some(how.clone()));
        self.ask_to_stop(n, format!("over budget: {how}"));
    }

    /// A request that the holder of `n` stop, unless one was made.
    fn ask_to_stop(&self, n: &mut Node, reason: String) {
        if n.status == Status::Claimed && n.cancel_requested.is_none() {
            n.cancel_requested = Some(CancelRequest {
                by: None,
                reason: Some(reason),
                at: self.now,
            });
        }
    }
}
