//! A claim held for you: [`Lease`] renews itself on a thread (about every third of its
//! ttl, with the generation it was granted), finishes with that generation, and hands the
//! node back when dropped unfinished. When the store refuses a renew (the claim was handed
//! back: the node is someone else's now), or no renew has succeeded for a whole ttl, the
//! lease is **lost**: [`Lease::is_lost`] says so, the callback runs, and the work done
//! under it must be dropped. A lease also carries the holder's side of the conversation:
//! checkpoints sent with its renewals ([`Lease::progress`]), the cancel request a renewal
//! learns ([`Lease::cancel_requested`], [`Lease::on_cancel`]), what the claim handed over
//! ([`Lease::given_progress`], [`Lease::inputs`]) and an output to finish with
//! ([`Lease::complete_with`]).
//!
//! ```
//! use claimdag::{Actor, Status, Store, Upsert};
//! # let tmp = tempfile::tempdir().unwrap();
//! let store = Store::open(Some(&tmp.path().join("claims")))?;
//! store.upsert(Upsert { summary: "parse the manifest header".into(), ..Upsert::default() })?;
//! let me = Actor::from_name("worker-1")?;
//! while let Some(lease) = store.lease_next("", me, None, 60_000)? {
//!     // What an earlier holder left, and what the prerequisites produced.
//!     let _resume_from = lease.given_progress();
//!     let _inputs = lease.inputs();
//!     // ... the work; the lease renews itself meanwhile, and carries checkpoints ...
//!     lease.progress("parsed the header")?;
//!     if lease.is_lost() {
//!         continue; // dropped: someone else has the node now
//!     }
//!     if lease.cancel_requested().is_some() {
//!         lease.complete(Status::Cancelled, Some("asked to stop"))?;
//!         continue;
//!     }
//!     lease.complete_with(Status::Done, None, Some(serde_json::json!({"fields": 12})))?;
//! }
//! # Ok::<(), claimdag::Error>(())
//! ```

use crate::error::{Code, Error, Result};
use crate::id::{Actor, Id};
use crate::model::{CancelRequest, Status};
use crate::rules::{check_progress, Finish, Grant};
use crate::store::Store;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What runs when a lease is lost.
type OnLost = Box<dyn FnOnce(&Error) + Send>;
/// What runs when the holder is asked to stop.
type OnCancel = Box<dyn FnOnce(&CancelRequest) + Send>;

/// What a renewal thread shares with its lease.
struct Shared {
    /// Set to stop the thread.
    stop: Mutex<bool>,
    wake: Condvar,
    lost: AtomicBool,
    /// Why the lease was lost.
    why: Mutex<Option<Error>>,
    on_lost: Mutex<Option<OnLost>>,
    /// The checkpoint and spend to send with the next renewal. Held while a renewal is
    /// sent, so that they reach the store in the order they were left.
    pending: Mutex<Pending>,
    /// The cancel request a renewal answered, once one did.
    cancel: Mutex<Option<CancelRequest>>,
    on_cancel: Mutex<Option<OnCancel>>,
}

/// What the next renewal carries.
#[derive(Default)]
struct Pending {
    progress: Option<String>,
    usage: Option<crate::model::Usage>,
}

/// A live claim that renews itself until it is completed, released or dropped.
pub struct Lease {
    store: Store,
    id: Id,
    generation: u64,
    actor: Actor,
    ttl_ms: u64,
    /// What the claim handed over: the last checkpoint and the prerequisites' outputs.
    grant: Grant,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// Completed or released: nothing to do on drop.
    finished: bool,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field("id", &self.id)
            .field("generation", &self.generation)
            .field("actor", &self.actor)
            .field("lost", &self.is_lost())
            .finish()
    }
}

impl Store {
    /// Claims the next ready node for `actor` (as [`Store::claim_next`]) and holds it as a
    /// [`Lease`] of `ttl_ms`; `None` when nothing is ready.
    pub fn lease_next(
        &self,
        workspace: &str,
        actor: Actor,
        role: Option<&str>,
        ttl_ms: u64,
    ) -> Result<Option<Lease>> {
        self.lease_next_wait(workspace, actor, role, ttl_ms, Duration::ZERO)
    }

    /// As [`Store::lease_next`], but when nothing is ready waits up to `wait` for a node to
    /// become ready (as [`Store::claim_next_with`] does: another writer's commit, a claim running
    /// out, a `not_before` passing). `None` when `wait` ran out with nothing ready.
    ///
    /// ```
    /// use claimdag::{Actor, Status, Store, Upsert};
    /// use std::time::Duration;
    /// # let tmp = tempfile::tempdir().unwrap();
    /// let store = Store::open(Some(&tmp.path().join("claims")))?;
    /// let me = Actor::from_name("worker-1")?;
    /// // Nothing to do: the wait runs out and answers None.
    /// assert!(store.lease_next_wait("", me, None, 60_000, Duration::from_millis(20))?.is_none());
    /// store.upsert(Upsert { summary: "compress the logs".into(), ..Upsert::default() })?;
    /// let lease = store
    ///     .lease_next_wait("", me, None, 60_000, Duration::from_secs(10))?
    ///     .expect("a node is ready");
    /// lease.complete(Status::Done, None)?;
    /// # Ok::<(), claimdag::Error>(())
    /// ```
    pub fn lease_next_wait<'w>(
        &self,
        workspace: &str,
        actor: Actor,
        role: Option<&str>,
        ttl_ms: u64,
        wait: impl Into<super::Wait<'w>>,
    ) -> Result<Option<Lease>> {
        let pick = super::ClaimNextOptions {
            role,
            ttl_ms: Some(ttl_ms),
            wait: wait.into(),
            ..super::ClaimNextOptions::default()
        };
        let got = self.claim_next_with(workspace, actor, pick)?;
        Ok(got
            .into_iter()
            .next()
            .map(|g| Lease::hold_grant(self.clone(), g, actor, ttl_ms)))
    }

    /// Claims `node` for `actor` (as [`Store::claim`]) and holds it as a [`Lease`].
    pub fn lease(&self, node: Id, actor: Actor, ttl_ms: u64) -> Result<Lease> {
        let g = self.claim_grant(node, actor, None, Some(ttl_ms))?;
        Ok(Lease::hold_grant(self.clone(), g, actor, ttl_ms))
    }
}

/// True when a refused renew means the claim is gone for good (it was handed back or
/// finished), rather than a passing failure (an I/O error) worth retrying.
fn gone(e: &Error) -> bool {
    matches!(
        e.code(),
        Code::StaleGeneration
            | Code::NotHolder
            | Code::NotClaimed
            | Code::Terminal
            | Code::NotFound
    )
}

impl Lease {
    /// Holds a claim already granted (`generation` is the one its claim returned) and
    /// starts renewing it about every third of `ttl_ms`.
    pub fn hold(store: Store, id: Id, generation: u64, actor: Actor, ttl_ms: u64) -> Lease {
        let grant = Grant {
            id,
            generation,
            resumed: false,
            progress: None,
            progress_at: None,
            inputs: Vec::new(),
        };
        Lease::hold_grant(store, grant, actor, ttl_ms)
    }

    /// Holds a claim granted with what it handed over (its checkpoint and inputs), as
    /// [`Lease::hold`] does.
    pub fn hold_grant(store: Store, grant: Grant, actor: Actor, ttl_ms: u64) -> Lease {
        let shared = Arc::new(Shared {
            stop: Mutex::new(false),
            wake: Condvar::new(),
            lost: AtomicBool::new(false),
            why: Mutex::new(None),
            on_lost: Mutex::new(None),
            pending: Mutex::new(Pending::default()),
            cancel: Mutex::new(None),
            on_cancel: Mutex::new(None),
        });
        let (s2, st2) = (shared.clone(), store.clone());
        let (id, generation) = (grant.id, grant.generation);
        let thread = std::thread::Builder::new()
            .name(format!("claimdag-lease-{}", id.short()))
            .spawn(move || renew_loop(&st2, &s2, id, generation, actor, ttl_ms))
            .ok();
        Lease {
            store,
            id,
            generation,
            actor,
            ttl_ms,
            grant,
            shared,
            thread,
            finished: false,
        }
    }

    /// The last checkpoint an earlier holder left, as the claim handed it over.
    pub fn given_progress(&self) -> Option<&str> {
        self.grant.progress.as_deref()
    }

    /// The output (compact JSON text; `None` when it gave none) of every prerequisite that
    /// was `done` when the claim was granted, in the order the node lists them.
    pub fn inputs(&self) -> &[(Id, Option<String>)] {
        &self.grant.inputs
    }

    /// Leaves a checkpoint, sent with the next renewal (a later one replaces it if none was
    /// sent meanwhile). If this holder stops, the next one receives it with its claim. A
    /// text the store would refuse (over 64 KiB, or with a NUL) is `invalid_input` here, at
    /// once, and is not queued: the renewals go on with the last checkpoint that fits.
    pub fn progress(&self, text: &str) -> Result<()> {
        check_progress(text)?;
        if let Ok(mut p) = self.shared.pending.lock() {
            p.progress = Some(text.to_string());
        }
        Ok(())
    }

    /// Reports what the claim has spent so far (its total: a field left out keeps the last
    /// one reported), sent with the next renewal. Past the node's budget, that renewal
    /// learns the request to stop ([`Lease::cancel_requested`]).
    pub fn usage(&self, report: crate::model::Usage) {
        if let Ok(mut p) = self.shared.pending.lock() {
            let last = p.usage.unwrap_or_default();
            p.usage = Some(crate::model::Usage {
                tokens: report.tokens.or(last.tokens),
                cost_micros: report.cost_micros.or(last.cost_micros),
            });
        }
    }

    /// Reports spend now ([`Lease::usage`]), renewing at once; answers the cancel request
    /// made of the holder, if any.
    pub fn usage_now(&self, report: crate::model::Usage) -> Result<Option<CancelRequest>> {
        self.usage(report);
        self.renew_now()
    }

    /// Leaves a checkpoint now: renews the claim with it at once. Answers the cancel
    /// request made of the holder, if any. A text the store would refuse is `invalid_input`
    /// and changes nothing; any other refusal (a claim lost) is returned, and the lease is
    /// lost.
    pub fn progress_now(&self, text: &str) -> Result<Option<CancelRequest>> {
        self.progress(text)?;
        self.renew_now()
    }

    /// Renews at once with what is pending (a checkpoint, a report of spend).
    fn renew_now(&self) -> Result<Option<CancelRequest>> {
        renew_once(
            &self.store,
            &self.shared,
            self.id,
            self.generation,
            self.actor,
            self.ttl_ms,
        )
    }

    /// The request that this holder stop, once a renewal learned of one: stop, and complete
    /// the node `cancelled` (or finish it).
    pub fn cancel_requested(&self) -> Option<CancelRequest> {
        self.shared.cancel.lock().ok().and_then(|c| c.clone())
    }

    /// Runs `f` (on the renewal thread) when a renewal learns of a cancel request; at once
    /// if one already did.
    pub fn on_cancel(&self, f: impl FnOnce(&CancelRequest) + Send + 'static) {
        let Ok(mut slot) = self.shared.on_cancel.lock() else {
            return;
        };
        match self.cancel_requested() {
            Some(c) => f(&c),
            None => *slot = Some(Box::new(f)),
        }
    }

    pub fn id(&self) -> Id {
        self.id
    }

    /// The generation the claim was granted: the fencing token this lease finishes with.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn actor(&self) -> Actor {
        self.actor
    }

    /// True once the lease was lost: the work done under it must be dropped.
    pub fn is_lost(&self) -> bool {
        self.shared.lost.load(Ordering::SeqCst)
    }

    /// True when `e`, a refusal of a lease's renew, complete or release, means that the
    /// claim is gone (handed back, or finished by someone else): the lease is lost.
    pub fn lost_by(e: &Error) -> bool {
        gone(e)
    }

    /// Why the lease was lost, if it was.
    pub fn lost_because(&self) -> Option<Error> {
        self.shared.why.lock().ok().and_then(|w| w.clone())
    }

    /// Runs `f` when the lease is lost (on the renewal thread, or in [`Lease::progress_now`]
    /// when that finds the claim gone); at once if it already is.
    pub fn on_lost(&self, f: impl FnOnce(&Error) + Send + 'static) {
        // The renewal thread marks the lease lost under this same lock, so `f` is either
        // stored before it looks or sees the lease lost here.
        let Ok(mut slot) = self.shared.on_lost.lock() else {
            return;
        };
        match self.lost_because() {
            Some(e) => f(&e),
            None => *slot = Some(Box::new(f)),
        }
    }

    /// Stops renewing; returns once the renewal thread is gone.
    fn stop(&mut self) {
        if let Ok(mut stop) = self.shared.stop.lock() {
            *stop = true;
        }
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Finishes the node with `status` at the granted generation. A lease lost meanwhile
    /// is refused by the store (`stale_generation`), and nothing changes.
    pub fn complete(self, status: Status, note: Option<&str>) -> Result<()> {
        self.complete_with(status, note, None)
    }

    /// As [`Lease::complete`], storing `output` (any JSON value, at most 64 KiB serialised)
    /// for the dependents, which receive it as an input. A completion refused while the
    /// claim is still held (an output too large) hands the claim back as the lease is
    /// dropped; [`Lease::try_complete`] keeps it instead.
    pub fn complete_with(
        mut self,
        status: Status,
        note: Option<&str>,
        output: Option<serde_json::Value>,
    ) -> Result<()> {
        self.try_complete(status, note, output)
    }

    /// Finishes the node as [`Lease::complete_with`] does, without giving the lease up when
    /// the store refuses the completion but the claim is still held (an `invalid_input`
    /// such as an output over 64 KiB, or a failure to write): the lease then renews on and
    /// may be completed again. After a completion, or a refusal that means the claim is gone
    /// (the lease is then lost), the lease is finished: [`Lease::is_finished`].
    ///
    /// ```
    /// use claimdag::{Actor, Code, Status, Store, Upsert};
    /// # let tmp = tempfile::tempdir().unwrap();
    /// let store = Store::open(Some(&tmp.path().join("claims")))?;
    /// let id = store.upsert(Upsert { summary: "summarise the logs".into(), ..Upsert::default() })?;
    /// let mut lease = store.lease(id, Actor::from_name("w1")?, 60_000)?;
    /// let huge = serde_json::json!("x".repeat(70_000));
    /// let e = lease.try_complete(Status::Done, None, Some(huge)).unwrap_err();
    /// assert_eq!(e.code(), Code::InvalidInput);
    /// assert!(!lease.is_finished()); // still held, still renewing
    /// lease.try_complete(Status::Done, None, Some(serde_json::json!({"lines": 12})))?;
    /// assert!(lease.is_finished());
    /// # Ok::<(), claimdag::Error>(())
    /// ```
    pub fn try_complete(
        &mut self,
        status: Status,
        note: Option<&str>,
        output: Option<serde_json::Value>,
    ) -> Result<()> {
        if self.finished {
            return Err(Error::invalid(
                "this lease was completed or released already",
            ));
        }
        // No renewal may run after the completion (it would find the node finished and
        // call the lease lost), so the renewals stop first, and start again on a refusal.
        self.stop();
        let done = self.store.complete_with(Finish {
            node: self.id,
            status,
            gen: self.generation,
            actor: Some(self.actor),
            note: note.map(str::to_string),
            output,
            held: false,
        });
        match &done {
            Ok(()) => self.finished = true,
            Err(e) if gone(e) => {
                self.finished = true;
                mark_lost(&self.shared, e.clone());
            }
            Err(_) => self.renew_again(),
        }
        done
    }

    /// True once the lease was completed or released (by this handle): nothing is left to
    /// renew or hand back.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Starts the renewals again after [`Lease::stop`].
    fn renew_again(&mut self) {
        if let Ok(mut stop) = self.shared.stop.lock() {
            *stop = false;
        }
        let (shared, store) = (self.shared.clone(), self.store.clone());
        let (id, gen, actor, ttl) = (self.id, self.generation, self.actor, self.ttl_ms);
        self.thread = std::thread::Builder::new()
            .name(format!("claimdag-lease-{}", id.short()))
            .spawn(move || renew_loop(&store, &shared, id, gen, actor, ttl))
            .ok();
    }

    /// Hands the claim back at the granted generation; returns the node's new generation.
    pub fn release(mut self) -> Result<u64> {
        self.stop();
        self.finished = true;
        self.store.release(self.id, self.actor, self.generation)
    }

    /// Hands the claim back as [`Lease::release`] does, with the node not ready again for
    /// `retry_in_ms` (its `not_before` is now + `retry_in_ms`, in place of the store's
    /// `retry_delay` backoff); returns the node's new generation.
    ///
    /// ```
    /// use claimdag::{Actor, DisplayWord, Store, Upsert};
    /// # let tmp = tempfile::tempdir().unwrap();
    /// let store = Store::open(Some(&tmp.path().join("claims")))?;
    /// let id = store.upsert(Upsert { summary: "call the flaky service".into(), ..Upsert::default() })?;
    /// let me = Actor::from_name("worker-1")?;
    /// let lease = store.lease(id, me, 60_000)?;
    /// // The service is down: try again in a minute.
    /// assert_eq!(lease.release_retry_in(60_000)?, 3);
    /// let v = store.get(id)?;
    /// assert_eq!(v.display, DisplayWord::Scheduled);
    /// assert!(v.node.not_before.is_some());
    /// # Ok::<(), claimdag::Error>(())
    /// ```
    pub fn release_retry_in(mut self, retry_in_ms: u64) -> Result<u64> {
        self.stop();
        self.finished = true;
        self.store
            .release_retry_in(self.id, self.actor, self.generation, retry_in_ms)
    }
}

impl Drop for Lease {
    /// Dropped without complete or release: the claim is handed back for another worker
    /// (a lost lease has nothing to hand back; a refusal is ignored).
    fn drop(&mut self) {
        self.stop();
        if !self.finished && !self.is_lost() {
            let _ = self.store.release(self.id, self.actor, self.generation);
        }
    }
}

fn renew_loop(store: &Store, shared: &Shared, id: Id, gen: u64, actor: Actor, ttl_ms: u64) {
    let every = Duration::from_millis((ttl_ms / 3).max(1));
    let ttl = Duration::from_millis(ttl_ms);
    let mut last_ok = Instant::now();
    loop {
        let Ok(stop) = shared.stop.lock() else { return };
        let (stop, _) = match shared.wake.wait_timeout_while(stop, every, |s| !*s) {
            Ok(r) => r,
            Err(_) => return,
        };
        if *stop {
            return;
        }
        drop(stop);
        match renew_once(store, shared, id, gen, actor, ttl_ms) {
            Ok(_) => last_ok = Instant::now(),
            Err(_) if shared.lost.load(Ordering::SeqCst) => return,
            // No renew got through for a whole lease: the claim may be handed back by now.
            Err(e) if last_ok.elapsed() >= ttl => {
                mark_lost(shared, e);
                return;
            }
            Err(_) => {} // a passing failure: try again at the next beat
        }
    }
}

/// One renewal, with the pending checkpoint: records a cancel request it answers (and runs
/// the callback), and marks the lease lost when the claim is gone. A checkpoint that did
/// not get through is kept for the next renewal, unless a newer one replaced it.
fn renew_once(
    store: &Store,
    shared: &Shared,
    id: Id,
    gen: u64,
    actor: Actor,
    ttl_ms: u64,
) -> Result<Option<CancelRequest>> {
    let mut pending = shared
        .pending
        .lock()
        .map_err(|_| Error::Internal("a lease's checkpoint lock was poisoned".into()))?;
    let text = pending.progress.take();
    let usage = pending.usage.take();
    match store.renew_spending(id, actor, Some(gen), Some(ttl_ms), text.as_deref(), usage) {
        Ok(asked) => {
            drop(pending);
            if let Some(c) = &asked {
                learn_cancel(shared, c);
            }
            Ok(asked)
        }
        Err(e) => {
            if pending.progress.is_none() {
                pending.progress = text;
            }
            if pending.usage.is_none() {
                pending.usage = usage;
            }
            drop(pending);
            if gone(&e) {
                mark_lost(shared, e.clone());
            }
            Err(e)
        }
    }
}

/// Records the first cancel request a renewal answered, and runs the callback once.
fn learn_cancel(shared: &Shared, c: &CancelRequest) {
    let callback = match shared.on_cancel.lock() {
        Ok(mut slot) => {
            if let Ok(mut seen) = shared.cancel.lock() {
                if seen.is_some() {
                    return;
                }
                *seen = Some(c.clone());
            }
            slot.take()
        }
        Err(_) => None,
    };
    if let Some(f) = callback {
        f(c);
    }
}

/// Marks the lease lost (once) and runs the callback.
fn mark_lost(shared: &Shared, e: Error) {
    let callback = match shared.on_lost.lock() {
        Ok(mut slot) => {
            if shared.lost.swap(true, Ordering::SeqCst) {
                return;
            }
            if let Ok(mut why) = shared.why.lock() {
                *why = Some(e.clone());
            }
            slot.take()
        }
        Err(_) => None,
    };
    if let Some(f) = callback {
        f(&e);
    }
}
