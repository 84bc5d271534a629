//! A claim held for you: [`Lease`] renews itself on a thread (about every third of its
//! ttl, with the generation it was granted), finishes with that generation, and hands the
//! node back when dropped unfinished. When the store refuses a renew (the claim was handed
//! back: the node is someone else's now), or no renew has succeeded for a whole ttl, the
//! lease is **lost**: [`Lease::is_lost`] says so, the callback runs, and the work done
//! under it must be dropped.
//!
//! ```
//! use claimdag::{Actor, Status, Store, Upsert};
//! # let tmp = tempfile::tempdir().unwrap();
//! let store = Store::open(Some(&tmp.path().join("claims")))?;
//! store.upsert(Upsert { summary: "parse the manifest header".into(), ..Upsert::default() })?;
//! let me = Actor::from_name("worker-1")?;
//! while let Some(lease) = store.lease_next("", me, None, 60_000)? {
//!     // ... the work; the lease renews itself meanwhile ...
//!     if lease.is_lost() {
//!         continue; // dropped: someone else has the node now
//!     }
//!     lease.complete(Status::Done, None)?;
//! }
//! # Ok::<(), claimdag::Error>(())
//! ```

use crate::error::{Code, Error, Result};
use crate::id::{Actor, Id};
use crate::model::Status;
use crate::store::Store;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What runs when a lease is lost.
type OnLost = Box<dyn FnOnce(&Error) + Send>;

/// What a renewal thread shares with its lease.
struct Shared {
    /// Set to stop the thread.
    stop: Mutex<bool>,
    wake: Condvar,
    lost: AtomicBool,
    /// Why the lease was lost.
    why: Mutex<Option<Error>>,
    on_lost: Mutex<Option<OnLost>>,
}

/// A live claim that renews itself until it is completed, released or dropped.
pub struct Lease {
    store: Store,
    id: Id,
    generation: u64,
    actor: Actor,
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
        Ok(self
            .claim_next(workspace, actor, role, Some(ttl_ms))?
            .map(|(id, g)| Lease::hold(self.clone(), id, g, actor, ttl_ms)))
    }

    /// As [`Store::lease_next`], but when nothing is ready waits up to `wait` for a node to
    /// become ready (as [`Store::claim_next_wait`]: another writer's commit, a claim running
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
    pub fn lease_next_wait(
        &self,
        workspace: &str,
        actor: Actor,
        role: Option<&str>,
        ttl_ms: u64,
        wait: Duration,
    ) -> Result<Option<Lease>> {
        Ok(self
            .claim_next_wait(workspace, actor, role, Some(ttl_ms), wait)?
            .map(|(id, g)| Lease::hold(self.clone(), id, g, actor, ttl_ms)))
    }

    /// Claims `node` for `actor` (as [`Store::claim`]) and holds it as a [`Lease`].
    pub fn lease(&self, node: Id, actor: Actor, ttl_ms: u64) -> Result<Lease> {
        let g = self.claim(node, actor, None, Some(ttl_ms))?;
        Ok(Lease::hold(self.clone(), node, g, actor, ttl_ms))
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
        let shared = Arc::new(Shared {
            stop: Mutex::new(false),
            wake: Condvar::new(),
            lost: AtomicBool::new(false),
            why: Mutex::new(None),
            on_lost: Mutex::new(None),
        });
        let (s2, st2) = (shared.clone(), store.clone());
        let thread = std::thread::Builder::new()
            .name(format!("claimdag-lease-{}", id.short()))
            .spawn(move || renew_loop(&st2, &s2, id, generation, actor, ttl_ms))
            .ok();
        Lease {
            store,
            id,
            generation,
            actor,
            shared,
            thread,
            finished: false,
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

    /// Runs `f` (on the renewal thread) when the lease is lost; at once if it already is.
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
    pub fn complete(mut self, status: Status, note: Option<&str>) -> Result<()> {
        self.stop();
        self.finished = true;
        self.store
            .complete(self.id, status, self.generation, Some(self.actor), note)
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
        let refused = match store.renew(id, actor, Some(gen), Some(ttl_ms)) {
            Ok(()) => {
                last_ok = Instant::now();
                None
            }
            Err(e) if gone(&e) => Some(e),
            // No renew got through for a whole lease: the claim may be handed back by now.
            Err(e) if last_ok.elapsed() >= ttl => Some(e),
            Err(_) => None, // a passing failure: try again at the next beat
        };
        if let Some(e) = refused {
            let callback = match shared.on_lost.lock() {
                Ok(mut slot) => {
                    if let Ok(mut why) = shared.why.lock() {
                        *why = Some(e.clone());
                    }
                    shared.lost.store(true, Ordering::SeqCst);
                    slot.take()
                }
                Err(_) => None,
            };
            if let Some(f) = callback {
                f(&e);
            }
            return;
        }
    }
}
