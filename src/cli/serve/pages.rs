//! The thread the dashboard's pages are read and rendered on, one page at a time. A page's
//! read walks every node of its workspace (the counts, the search, the critical path) and
//! allocates a few bytes a node while it does; on a thread of its own, that memory is one
//! page's, used again by the next, however many dashboards ask at once (spread over the
//! blocking pool, each of its threads would keep a copy of it). Reads of one store take
//! turns anyway, so nothing is lost by waiting here.
//!
//! Requests for the same page that wait for the thread together are answered by one read:
//! after a write, every dashboard showing the same rows asks for them again at once. A
//! request never shares a read that started before it arrived, so it always sees the
//! writes committed before it.

use crate::error::Error;
use hyper::body::Bytes;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc, Mutex};
use tokio::sync::oneshot;

/// A rendered page, or why it could not be.
pub type Answer = Result<Bytes, Error>;

type Job = Box<dyn FnOnce() + Send>;
type Waiting = Arc<Mutex<HashMap<String, Vec<oneshot::Sender<Answer>>>>>;

pub struct Pages {
    jobs: mpsc::Sender<Job>,
    /// The requests of each page whose read has not started yet.
    waiting: Waiting,
}

impl Pages {
    /// Starts the thread; it ends when the server drops its `Pages`.
    pub fn start() -> crate::error::Result<Pages> {
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
            waiting: Waiting::default(),
        })
    }

    /// The page `key` names, made by `make` once the pages asked for before it are done,
    /// or by the read of the same page that is still to start.
    pub async fn page(
        &self,
        key: String,
        make: impl FnOnce() -> Answer + Send + 'static,
    ) -> Answer {
        let (tx, rx) = oneshot::channel();
        let first = {
            let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
            let list = waiting.entry(key.clone()).or_default();
            list.push(tx);
            list.len() == 1
        };
        if first {
            let waiting = self.waiting.clone();
            let job: Job = Box::new(move || {
                // Taken as the read starts: a request from now on waits for the next one.
                let list = waiting
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&key)
                    .unwrap_or_default();
                let answer = catch_unwind(AssertUnwindSafe(make))
                    .unwrap_or_else(|_| Err(Error::Internal("the page panicked".into())));
                for tx in list {
                    let _ = tx.send(answer.clone());
                }
            });
            if self.jobs.send(job).is_err() {
                return Err(Error::Internal("the dashboard's thread is gone".into()));
            }
        }
        rx.await
            .unwrap_or_else(|_| Err(Error::Internal("the page was not made".into())))
    }
}
