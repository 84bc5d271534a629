//! A holder and the rest talk: claims that hand over the last checkpoint and the outputs of
//! the prerequisites, renewals that carry a checkpoint and answer a cancel request, cancel
//! requests, outputs, and several completions in one write.

use super::{unexpected, Store, Wait};
use crate::error::Result;
use crate::id::{Actor, Id};
use crate::model::{CancelRequest, Status};
use crate::rules::{Finish, Grant, Output, Request};

/// What a `claim-next` asks beyond its workspace and actor ([`Store::claim_next_with`]);
/// `ClaimNextOptions::default()` is one node of any role, with the store's `default_ttl`, at once.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaimNextOptions<'a> {
    /// Only nodes of this role or of none (`None`: only nodes of none).
    pub role: Option<&'a str>,
    /// The lease (default: the store's `default_ttl`).
    pub ttl_ms: Option<u64>,
    /// Answer the live claims the actor already holds in the workspace, if it holds any,
    /// instead of claiming more (or refusing `assignee_busy`).
    pub resume: bool,
    /// Claim up to this many ready nodes (1 to 1000) in one write (default 1).
    pub count: Option<u32>,
    /// How long to wait for work when none is ready, and what ends the wait sooner.
    pub wait: Wait<'a>,
}

impl Store {
    /// As [`Store::claim`], answering the whole grant: the generation, the last checkpoint
    /// an earlier holder left, and the outputs of the prerequisites that are `done`.
    pub fn claim_grant(
        &self,
        node: Id,
        actor: Actor,
        gen: Option<u64>,
        ttl_ms: Option<u64>,
    ) -> Result<Grant> {
        match self.execute(&Request::Claim {
            node,
            actor,
            gen,
            ttl_ms,
        })? {
            Output::Granted(g) => Ok(g),
            o => Err(unexpected(o)),
        }
    }

    /// Every form of `claim-next` in one call, answering the whole grants in pick order:
    /// up to `pick.count` of them (one by default); with `pick.resume`, the live claims
    /// `actor` already holds in `workspace` (`resumed` set) if any; with `pick.wait`,
    /// waiting while nothing is ready (a write of any process or host, a claim running out,
    /// a `not_before` passing; a waiting caller uses no CPU). Empty when nothing is ready (by
    /// the end of the wait).
    ///
    /// ```
    /// # use claimdag::{Actor, ClaimNextOptions, Status, Store, Upsert};
    /// # use std::time::Duration;
    /// # let tmp = tempfile::tempdir().unwrap();
    /// # let store = Store::open(Some(&tmp.path().join("claims")))?;
    /// let me = Actor::from_name("w1")?;
    /// let fetch = store.upsert(Upsert { summary: "fetch".into(), ..Upsert::default() })?;
    /// let parse = store.upsert(Upsert { summary: "parse".into(), ..Upsert::default() })?;
    /// store.link(fetch, parse, false)?;
    /// let g = store.claim_next_with("", me, ClaimNextOptions::default())?.remove(0);
    /// store.complete_output(fetch, Status::Done, g.generation, Some(me), serde_json::json!({"rows": 3}))?;
    /// let g = store.claim_next_with("", me, ClaimNextOptions::default())?.remove(0);
    /// assert_eq!(g.inputs, vec![(fetch, Some(r#"{"rows":3}"#.to_string()))]);
    /// // Nothing more is ready: a wait of 50 ms runs out and answers nothing.
    /// let wait = Duration::from_millis(50).into();
    /// assert!(store.claim_next_with("", me, ClaimNextOptions { wait, ..ClaimNextOptions::default() })?.is_empty());
    /// # Ok::<(), claimdag::Error>(())
    /// ```
    pub fn claim_next_with(
        &self,
        workspace: &str,
        actor: Actor,
        pick: ClaimNextOptions<'_>,
    ) -> Result<Vec<Grant>> {
        let once = || match self.execute(&Request::ClaimNext {
            workspace: workspace.to_string(),
            actor,
            role: pick.role.map(str::to_string),
            ttl_ms: pick.ttl_ms,
            resume: pick.resume,
            count: pick.count.unwrap_or(1),
        })? {
            Output::Claimed(c) if c.is_empty() => Ok(None),
            Output::Claimed(c) => Ok(Some(c)),
            o => Err(unexpected(o)),
        };
        Ok(self.wait_for(pick.wait, true, once)?.unwrap_or_default())
    }

    /// As [`Store::renew`], also keeping `progress` as the node's checkpoint (when given):
    /// the next holder receives it if this one stops. A checkpoint rides on the renewal; it
    /// is not a history event of its own.
    pub fn renew_with(
        &self,
        node: Id,
        actor: Actor,
        gen: Option<u64>,
        ttl_ms: Option<u64>,
        progress: Option<&str>,
    ) -> Result<Option<CancelRequest>> {
        self.renew_spending(node, actor, gen, ttl_ms, progress, None)
    }

    /// As [`Store::renew_with`], also reporting what the claim has spent so far (`usage`,
    /// its total: a repeated report counts once). The node sums its claims' spend; a report
    /// that takes it past its budget comes back with the request to stop.
    pub fn renew_spending(
        &self,
        node: Id,
        actor: Actor,
        gen: Option<u64>,
        ttl_ms: Option<u64>,
        progress: Option<&str>,
        usage: Option<crate::model::Usage>,
    ) -> Result<Option<CancelRequest>> {
        match self.execute(&Request::Renew {
            node,
            actor,
            gen,
            ttl_ms,
            progress: progress.map(str::to_string),
            usage,
        })? {
            Output::Renewed(asked) => Ok(asked),
            o => Err(unexpected(o)),
        }
    }

    /// As [`Store::complete`], storing `output` (any JSON value, at most 64 KiB serialised)
    /// for the dependents, which receive it as an input when they are claimed.
    pub fn complete_output(
        &self,
        node: Id,
        status: Status,
        gen: u64,
        actor: Option<Actor>,
        output: serde_json::Value,
    ) -> Result<()> {
        self.complete_with(Finish {
            node,
            status,
            gen,
            actor,
            note: None,
            output: Some(output),
            held: false,
        })
    }

    /// One completion with every field ([`Finish`]).
    pub fn complete_with(&self, finish: Finish) -> Result<()> {
        self.execute(&Request::Complete(finish)).map(|_| ())
    }

    /// Several completions in one write: all of them, or none when one is refused (the
    /// error is that one's). Answers each node and the status it reached, in order.
    pub fn complete_many(&self, all: Vec<Finish>) -> Result<Vec<(Id, Status)>> {
        match self.execute(&Request::CompleteMany(all))? {
            Output::CompletedMany(v) => Ok(v),
            o => Err(unexpected(o)),
        }
    }

    /// Cancels `node`, by anyone: a `todo` node becomes `cancelled` (answers `false`); a
    /// claimed node gets a cancel request its holder learns at its next renew (answers
    /// `true`; the generation does not move). With `gen`, only at that generation.
    pub fn cancel(
        &self,
        node: Id,
        by: Option<Actor>,
        reason: Option<&str>,
        gen: Option<u64>,
    ) -> Result<bool> {
        match self.execute(&Request::Cancel {
            node,
            actor: by,
            reason: reason.map(str::to_string),
            gen,
        })? {
            Output::Cancelled { requested, .. } => Ok(requested),
            o => Err(unexpected(o)),
        }
    }
}
