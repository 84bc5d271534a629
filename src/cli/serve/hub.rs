//! One follower of the history for the whole server. A thread of its own waits for writes
//! (of any process or host) and reads each one's history lines once; every watch stream,
//! every waiting `claim_next` and the metrics take them from here. An open dashboard or a
//! long poll then costs a task and a few buffers, never a thread or a read of the store of
//! its own.

use super::metrics::Metrics;
use crate::model::HistoryLine;
use crate::store::Store;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, watch};

/// How often the follower checks whether the server is stopping when nothing is written.
const TICK: Duration = Duration::from_millis(500);
/// Writes a live stream may fall behind before it reads the rest from the store instead.
const BACKLOG: usize = 1024;

/// The lines of one or more writes, oldest first.
pub type Lines = Arc<Vec<HistoryLine>>;

pub struct Hub {
    /// The number of the last write whose lines were published.
    head: watch::Sender<u64>,
    lines: broadcast::Sender<Lines>,
    stop: AtomicBool,
}

impl Hub {
    /// Starts following `store` from its current end; the writes' lines are also counted in
    /// `metrics`.
    pub fn start(store: Store, metrics: Arc<Metrics>) -> Arc<Hub> {
        let start = store.history_head().unwrap_or(0);
        metrics.start(start);
        metrics.activity.start(store.now().unwrap_or(0));
        let hub = Arc::new(Hub {
            head: watch::channel(start).0,
            lines: broadcast::channel(BACKLOG).0,
            stop: AtomicBool::new(false),
        });
        let me = hub.clone();
        std::thread::Builder::new()
            .name("claimdag-history".into())
            .spawn(move || me.follow(&store, start, &metrics))
            .expect("a thread for the history follower");
        hub
    }

    fn follow(&self, store: &Store, mut at: u64, metrics: &Metrics) {
        while !self.stopping() {
            let followed = store.watch(Some(at), TICK, |lines| {
                if let Some(last) = lines.last() {
                    let from = at;
                    at = at.max(last.seq);
                    metrics.count(lines);
                    // The head first: a stream that subscribes and then reads the head
                    // either gets these lines or starts after them, never misses them.
                    self.head.send_replace(at);
                    // No stream listening is no error: the lines are in the store.
                    let _ = self.lines.send(Arc::new(lines.to_vec()));
                    // After the streams are told: the charts' read delays no event.
                    chart(store, metrics, lines, from);
                }
                Ok(!self.stopping())
            });
            if followed.is_err() {
                // The store could not be read (a database connection lost): look again
                // soon, from where the last look ended, losing nothing.
                std::thread::sleep(TICK);
            }
        }
    }

    /// The number of the last write published.
    pub fn head(&self) -> u64 {
        *self.head.borrow()
    }

    /// Tells of every write published from now on.
    pub fn writes(&self) -> watch::Receiver<u64> {
        self.head.subscribe()
    }

    /// The lines of every write published from now on.
    pub fn lines(&self) -> broadcast::Receiver<Lines> {
        self.lines.subscribe()
    }

    /// The server is stopping: the follower ends at its next tick.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// Counts the lines after write `from` that move a claim into the charts, with their
/// nodes' workspaces and creation times (one read of the nodes they touch). A read that
/// fails leaves those lines out of the charts; nothing else depends on them.
fn chart(store: &Store, metrics: &Metrics, lines: &[HistoryLine], from: u64) {
    let moved: Vec<&HistoryLine> = lines
        .iter()
        .filter(|l| l.seq > from && super::activity::counted(l))
        .collect();
    if moved.is_empty() {
        return;
    }
    let ids: Vec<crate::id::Id> = moved.iter().filter_map(|l| l.event.node).collect();
    if let (Ok(origins), Ok(now)) = (store.origins(&ids), store.now()) {
        metrics.activity.count(&moved, &origins, now);
    }
}
