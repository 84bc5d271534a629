//! Waiting instead of polling: [`Store::claim_next_with`] with a [`Wait`] sleeps until a node may have
//! become ready (another writer's commit, a lease running out, a `not_before` passing) and
//! looks again; [`Store::wait_change`] is the same wait for any write, which `watch` is
//! built on. A wake-up never grants anything by itself: every look is a whole write under
//! the store's lock, so a ready node is granted once however many waiters wake.

use super::{HistoryCursor, Need, Store};
use crate::error::{Error, Result};

use crate::model::HistoryLine;
use crate::rules;
use std::time::{Duration, Instant};

/// How often a wait that something may end sooner ([`Wait::stop`]) looks at it.
pub const STOP_EVERY: Duration = Duration::from_millis(250);

/// What ends a wait sooner than its time: a client that went away, a signal to handle.
#[derive(Clone, Copy)]
pub struct Stop<'a>(pub &'a (dyn Fn() -> bool + Sync));

impl std::fmt::Debug for Stop<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stop(..)")
    }
}

/// How long a call may wait for work (or for a write), and what may end the wait sooner.
/// Every wait of the library and of its doors is this one: the command line's, the MCP
/// server's (ended by the client's cancel), Python's (ended by a signal), a lease's. A
/// [`Duration`] is a wait that nothing ends sooner.
#[derive(Debug, Clone, Copy, Default)]
pub struct Wait<'a> {
    /// The longest the call waits (zero: it looks once).
    pub up_to: Duration,
    /// With a wait (`up_to` above zero), looked at before each look for work and at least
    /// every [`STOP_EVERY`] while waiting; once it says stop, the call answers what it has (nothing) and no look
    /// starts after.
    pub stop: Option<Stop<'a>>,
}

impl From<Duration> for Wait<'_> {
    fn from(up_to: Duration) -> Self {
        Wait { up_to, stop: None }
    }
}

impl Wait<'_> {
    fn stopped(&self) -> bool {
        self.stop.is_some_and(|s| (s.0)())
    }
}

/// The end of a wait of `wait` from now; a wait too long for the clock is refused.
pub(crate) fn deadline(wait: Duration) -> Result<Instant> {
    Instant::now().checked_add(wait).ok_or_else(|| {
        Error::invalid(format!(
            "wait of {} ms is too long for the clock",
            wait.as_millis()
        ))
    })
}

impl Store {
    /// Tries `attempt` until it answers something, `wait` runs out or its stop says so,
    /// sleeping between tries until the store changes or (`by_time`) the next change by
    /// time alone is due.
    pub(super) fn wait_for<T>(
        &self,
        wait: Wait<'_>,
        by_time: bool,
        mut attempt: impl FnMut() -> Result<Option<T>>,
    ) -> Result<Option<T>> {
        if wait.up_to.is_zero() {
            // No wait: one look, and nothing read for a wait that will not come.
            return attempt();
        }
        let end = deadline(wait.up_to)?;
        // Read before each attempt (first here, then by the wait's last look): a commit
        // after it shows as a new version, so the wait returns at once instead of missing it.
        let mut seen = self.version()?;
        loop {
            if wait.stopped() {
                return Ok(None);
            }
            if let Some(got) = attempt()? {
                return Ok(Some(got));
            }
            let now = Instant::now();
            if now >= end {
                return Ok(None);
            }
            let until = match by_time.then(|| self.next_change_in()).transpose()? {
                Some(Some(d)) => end.min(now + d),
                _ => end,
            };
            seen = self.sleep(seen, until, &wait)?;
        }
    }

    /// Sleeps until a write after version `seen`, `until`, or (looked at every
    /// [`STOP_EVERY`]) the wait's stop; returns the store's version then.
    fn sleep(&self, seen: u64, until: Instant, wait: &Wait<'_>) -> Result<u64> {
        if wait.stop.is_none() {
            return self.backend.wait_change(seen, until);
        }
        loop {
            let now = self
                .backend
                .wait_change(seen, until.min(Instant::now() + STOP_EVERY))?;
            if now != seen || Instant::now() >= until || wait.stopped() {
                return Ok(now);
            }
        }
    }

    /// Waits until a write after version `seen` is committed (by any process or host), or
    /// `wait` runs out; returns the store's version then (`seen` when nothing changed).
    pub fn wait_change(&self, seen: u64, wait: Duration) -> Result<u64> {
        let end = deadline(wait)?;
        self.backend.wait_change(seen, end)
    }

    /// How long until the store changes by time alone (the next lease to run out, the next
    /// `not_before` to pass), if anything will.
    pub fn next_change_in(&self) -> Result<Option<Duration>> {
        self.query(Need::default(), |v| {
            rules::valid_until(v.state, v.now).map(|t| Duration::from_millis(t - v.now))
        })
    }
}

impl Store {
    /// Follows the history as it is written: calls `f` with the lines of every write
    /// committed after `since` (the current version when `None`), as soon as it is
    /// committed, by any process or host; and at least every `tick` with no lines, so that
    /// a caller whose reader went away can tell. Ends when `f` answers `false` or fails.
    /// Each look reads only what was written since the last (a [`HistoryCursor`]).
    pub fn watch(
        &self,
        since: Option<u64>,
        tick: Duration,
        mut f: impl FnMut(&[HistoryLine]) -> Result<bool>,
    ) -> Result<()> {
        let at = match since {
            Some(s) => s,
            None => self.backend.history_head()?,
        };
        let mut cur = HistoryCursor::after_write(at);
        loop {
            let lines = self.history_wait(&mut cur, tick)?;
            if !f(&lines)? {
                return Ok(());
            }
        }
    }

    /// The history lines of the writes after `at` (as [`Store::history_since`]), waiting up
    /// to `wait` for one to be committed when there is none yet; empty when none came. A
    /// reader that calls again and again reads more cheaply with [`Store::history_wait`].
    pub fn history_after(&self, at: u64, wait: Duration) -> Result<Vec<HistoryLine>> {
        self.history_wait(&mut HistoryCursor::after_write(at), wait)
    }
}
