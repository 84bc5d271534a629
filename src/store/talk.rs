//! A holder and the rest talk: claims that hand over the last checkpoint and the outputs of
//! the prerequisites, renewals that carry a checkpoint and answer a cancel request, cancel
//! requests, outputs, and several completions in one write.

use super::{unexpected, Store, Wait};
use crate::error::Result;
use crate::id::{Actor, Id};
use crate::model::{CancelRequest, Status};
use crate::rules::{Finish, Grant, Output, Request};

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

    /// Every form of `claim-next` in one call, answering the whole grant: with `resume`, the
    /// live claim `actor` already holds in `workspace` (`resumed` set) if any; with a
    /// non-zero `wait`, waiting as [`Store::claim_next_wait`] does. `None` when nothing is
    /// ready (by the end of the wait).
    ///
    /// ```
    /// # use claimdag::{Actor, Status, Store, Upsert};
    /// # use std::time::Duration;
    /// # let tmp = tempfile::tempdir().unwrap();
    /// # let store = Store::open(Some(&tmp.path().join("claims")))?;
    /// let me = Actor::from_name("w1")?;
    /// let fetch = store.upsert(Upsert { summary: "fetch".into(), ..Upsert::default() })?;
    /// let parse = store.upsert(Upsert { summary: "parse".into(), ..Upsert::default() })?;
    /// store.link(fetch, parse, false)?;
    /// let g = store.claim_next_grant("", me, None, None, false, Duration::ZERO)?.unwrap();
    /// store.complete_output(fetch, Status::Done, g.generation, Some(me), serde_json::json!({"rows": 3}))?;
    /// let g = store.claim_next_grant("", me, None, None, false, Duration::ZERO)?.unwrap();
    /// assert_eq!(g.inputs, vec![(fetch, Some(r#"{"rows":3}"#.to_string()))]);
    /// # Ok::<(), claimdag::Error>(())
    /// ```
    pub fn claim_next_grant<'w>(
        &self,
        workspace: &str,
        actor: Actor,
        role: Option<&str>,
        ttl_ms: Option<u64>,
        resume: bool,
        wait: impl Into<Wait<'w>>,
    ) -> Result<Option<Grant>> {
        let got = self.claim_next_batch(workspace, actor, role, ttl_ms, resume, 1, wait)?;
        Ok(got.into_iter().next())
    }

    /// Claims up to `count` ready nodes (1 to 1000) for `actor` in one write, in pick order,
    /// under the same rules as one at a time (`max_held` counts each; a node whose resource
    /// another claim holds is passed over); each claim has its own generation. With a
    /// non-zero `wait`, waits as [`Store::claim_next_wait`] does while nothing is ready.
    /// Empty when nothing is ready (by the end of the wait).
    ///
    /// ```
    /// # use claimdag::{Actor, Store, Upsert};
    /// # use std::time::Duration;
    /// # let tmp = tempfile::tempdir().unwrap();
    /// # let store = Store::open(Some(&tmp.path().join("claims")))?;
    /// store.set_setting("max_held", "0")?;
    /// for i in 0..3 {
    ///     store.upsert(Upsert { summary: format!("page {i}"), ..Upsert::default() })?;
    /// }
    /// let me = Actor::from_name("w1")?;
    /// let got = store.claim_next_many("", me, None, None, 10, Duration::ZERO)?;
    /// assert_eq!(got.len(), 3);
    /// assert!(got.iter().all(|g| g.generation == 2));
    /// # Ok::<(), claimdag::Error>(())
    /// ```
    pub fn claim_next_many<'w>(
        &self,
        workspace: &str,
        actor: Actor,
        role: Option<&str>,
        ttl_ms: Option<u64>,
        count: u32,
        wait: impl Into<Wait<'w>>,
    ) -> Result<Vec<Grant>> {
        self.claim_next_batch(workspace, actor, role, ttl_ms, false, count, wait)
    }

    /// [`Store::claim_next_many`], with `resume` (answering up to `count` live claims the
    /// actor holds, if it holds any).
    #[allow(clippy::too_many_arguments)]
    pub fn claim_next_batch<'w>(
        &self,
        workspace: &str,
        actor: Actor,
        role: Option<&str>,
        ttl_ms: Option<u64>,
        resume: bool,
        count: u32,
        wait: impl Into<Wait<'w>>,
    ) -> Result<Vec<Grant>> {
        let wait = wait.into();
        let once = || match self.execute(&Request::ClaimNext {
            workspace: workspace.to_string(),
            actor,
            role: role.map(str::to_string),
            ttl_ms,
            resume,
            count,
        })? {
            Output::Claimed(c) if c.is_empty() => Ok(None),
            Output::Claimed(c) => Ok(Some(c)),
            o => Err(unexpected(o)),
        };
        if wait.up_to.is_zero() && wait.stop.is_none() {
            return Ok(once()?.unwrap_or_default());
        }
        Ok(self.wait_for(wait, true, once)?.unwrap_or_default())
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
        match self.execute(&Request::Renew {
            node,
            actor,
            gen,
            ttl_ms,
            progress: progress.map(str::to_string),
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
