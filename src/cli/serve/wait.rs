//! A `claim_next` that waits for work (`"wait"` in its request) over HTTP. The wait is a
//! task, not a thread: each look is one ordinary `claim_next` that does not wait, run on the
//! blocking pool; between looks the task sleeps until the history follower (`hub.rs`) sees
//! a write, the next change by time alone is due (a lease running out, a `not_before`
//! passing), or the wait runs out. When the client's connection ends, hyper drops the task,
//! and no look starts after that; when the server stops, the wait answers at once. Either
//! way nothing is granted to a client that is no longer there to take it.

use super::auth::Caller;
use super::http::Shared;
use crate::error::Error;
use crate::store::Store;
use crate::verbs::{self, Answer, ClaimNext, Dur, Verb};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How a wait ended without an answer.
pub enum Ended {
    Refused(Error),
    /// The server is stopping; nothing was granted.
    Stopping,
}

/// The wait a `claim_next` request asks for (at most the server's bound), when it asks for
/// one and is well formed; a malformed request goes the ordinary way, to be refused there.
pub fn asks_to_wait(verb: &str, args: &Value, most_ms: u64) -> Option<u64> {
    if verb != ClaimNext::NAME {
        return None;
    }
    let req: ClaimNext = verbs::parse(args.clone()).ok()?;
    let wait = Dur::opt_ms(&req.wait).ok()??;
    Some(wait.min(most_ms)).filter(|w| *w > 0)
}

/// Set when the task waiting is dropped (its client went away): no look starts after.
struct Gone(Arc<AtomicBool>);

impl Drop for Gone {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Looks for work until some is granted, `wait_ms` runs out (the reply says none), or the
/// server stops.
pub async fn claim_next(
    shared: Arc<Shared>,
    store: Store,
    caller: Caller,
    args: Value,
    wait_ms: u64,
) -> Result<Answer, Ended> {
    let end = tokio::time::Instant::now() + Duration::from_millis(wait_ms);
    let gone = Gone(Arc::new(AtomicBool::new(false)));
    let mut writes = shared.hub.writes();
    loop {
        // Marked seen before the look: a write committed after the look began wakes the
        // wait below, so none is missed.
        writes.borrow_and_update();
        let (answer, granted, next) = look(
            shared.clone(),
            store.clone(),
            caller.clone(),
            args.clone(),
            gone.0.clone(),
        )
        .await?;
        let now = tokio::time::Instant::now();
        if granted || now >= end {
            return Ok(answer);
        }
        let until = next.map_or(end, |d| end.min(now + d));
        tokio::select! {
            _ = writes.changed() => {}
            _ = tokio::time::sleep_until(until) => {}
            _ = shared.stopped() => return Err(Ended::Stopping),
        }
    }
}

/// One `claim_next` that does not wait: its answer, whether it granted anything, and when it
/// found nothing, how long until the store changes by time alone.
async fn look(
    shared: Arc<Shared>,
    store: Store,
    caller: Caller,
    args: Value,
    gone: Arc<AtomicBool>,
) -> Result<(Answer, bool, Option<Duration>), Ended> {
    let ran = tokio::task::spawn_blocking(move || {
        // Checked on the blocking thread, just before the write: a client that left or a
        // server that stopped while this look was queued gets nothing.
        if gone.load(Ordering::SeqCst) || shared.stopping() {
            return Ok(None);
        }
        let cx = caller.context(&store, &shared, 0)?;
        let req: ClaimNext = verbs::parse(args)?;
        let got = verbs::reply(&cx, &req)?;
        let granted = got.first().is_some();
        let next = match granted {
            true => None,
            false => store.next_change_in()?,
        };
        Ok(Some((Answer::of(&got), granted, next)))
    })
    .await;
    match ran {
        Ok(Ok(Some(done))) => Ok(done),
        Ok(Ok(None)) => Err(Ended::Stopping),
        Ok(Err(e)) => Err(Ended::Refused(e)),
        Err(_) => Err(Ended::Refused(Error::Internal(
            "the call panicked; the store is unchanged".into(),
        ))),
    }
}
