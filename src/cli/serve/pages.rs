//! The thread the dashboard's pages are read and rendered on, one page at a time. A page's
//! read walks every node of its workspace (the counts, the search, the critical path) and
//! allocates a few bytes a node while it does; on a thread of its own, that memory is one
//! page's, used again by the next, however many dashboards ask at once (spread over the
//! blocking pool, each of its threads would keep a copy of it). Reads of one store take
//! turns anyway, so nothing is lost by waiting here.
//!
//! After a write every dashboard showing the same rows asks for them again at once: one
//! read answers them all. A request shares a read only when the read shows what the
//! request needs: a read still to start, or one that started once the write the request
//! names (`seen`, the number of the last write its page was told of) was published.

use crate::error::Error;
use hyper::body::Bytes;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;

/// A rendered page, or why it could not be.
pub type Answer = Result<Bytes, Error>;

type Job = Box<dyn FnOnce() + Send>;
type Waiters = Vec<oneshot::Sender<Answer>>;

/// The requests of each page: those whose read is still to start, and those of the read
/// running, with the last write published when it started.
#[derive(Default)]
struct Table {
    waiting: HashMap<String, Waiters>,
    running: Option<(String, u64, Waiters)>,
}

pub struct Pages {
    jobs: mpsc::Sender<Job>,
    table: Arc<Mutex<Table>>,
    /// The number of the last write published.
    head: Arc<dyn Fn() -> u64 + Send + Sync>,
}

fn lock(t: &Mutex<Table>) -> MutexGuard<'_, Table> {
    t.lock().unwrap_or_else(|e| e.into_inner())
}

impl Pages {
    /// Starts the thread; it ends when the server drops its `Pages`. `head` tells the
    /// number of the last write published.
    pub fn start(head: Arc<dyn Fn() -> u64 + Send + Sync>) -> crate::error::Result<Pages> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("claimdag-pages".into())
            .spawn(move || {
                for job in queue {
                    job();
                }
            })
            .map_err(|e| Error::Internal(format!("cannot start the dashboard's thread: {e}")))?;
        Ok(Pages {
            jobs,
            table: Arc::default(),
            head,
        })
    }

    /// The page `key` names, made by `make` once the pages asked for before it are done,
    /// or by a read of the same page that shows the write `seen` (none: a read still to
    /// start).
    pub async fn page(
        &self,
        key: String,
        seen: Option<u64>,
        make: impl FnOnce() -> Answer + Send + 'static,
    ) -> Answer {
        let (tx, rx) = oneshot::channel();
        let first = {
            let mut t = lock(&self.table);
            match &mut t.running {
                Some((k, head, list)) if *k == key && seen.is_some_and(|s| s <= *head) => {
                    list.push(tx);
                    false
                }
                _ => {
                    let list = t.waiting.entry(key.clone()).or_default();
                    list.push(tx);
                    list.len() == 1
                }
            }
        };
        if first && self.jobs.send(self.job(key, make)).is_err() {
            return Err(Error::Internal("the dashboard's thread is gone".into()));
        }
        rx.await
            .unwrap_or_else(|_| Err(Error::Internal("the page was not made".into())))
    }

    /// The read of page `key`: it answers the requests waiting when it starts, and those
    /// that join it while it runs.
    fn job(&self, key: String, make: impl FnOnce() -> Answer + Send + 'static) -> Job {
        let (table, head) = (self.table.clone(), self.head.clone());
        Box::new(move || {
            {
                let mut t = lock(&table);
                let list = t.waiting.remove(&key).unwrap_or_default();
                t.running = Some((key, head(), list));
            }
            let answer = catch_unwind(AssertUnwindSafe(make))
                .unwrap_or_else(|_| Err(Error::Internal("the page panicked".into())));
            let list = lock(&table).running.take().map(|r| r.2).unwrap_or_default();
            for tx in list {
                let _ = tx.send(answer.clone());
            }
        })
    }
}
