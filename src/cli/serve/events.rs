//! `GET /v1/watch`: the history as it is written, as server-sent events. Each event is one
//! history line (`event: history`, `data:` its JSON, as `claimdag watch --json` prints it);
//! the last event of each write carries `id:` its `seq`, so a client that reconnects with
//! `Last-Event-ID` (or `?since=SEQ`) gets what it missed. A comment every 15 s keeps idle
//! connections open through proxies.
//!
//! A stream is a task, not a thread: live writes come from the server's one history
//! follower (`hub.rs`); what a client asks to see of the past is read from the store a page
//! at a time, the next page only once the client has taken the last (backpressure), so a
//! client that never reads holds a few pages at most. A client that falls too far behind
//! the live writes reads them from the store the same way. The stream ends when the client
//! goes away or the server stops.

use super::http::{reply, Body, Shared};
use super::limits::Slot;
use crate::model::HistoryLine;
use crate::store::HistoryCursor;
use http_body_util::BodyExt;
use hyper::body::{Bytes, Frame};
use hyper::header::HeaderValue;
use hyper::Response;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};

/// How long a stream may be idle before a keep-alive comment.
const KEEPALIVE: Duration = Duration::from_secs(15);
/// History lines read from the store at a time.
const PAGE: usize = 512;
/// Pages waiting for a client that does not read.
const BUFFERED: usize = 2;

/// A page of the history: the cursor after it, its lines, the seq of the line after it.
type Page = (HistoryCursor, Vec<HistoryLine>, Option<u64>);

/// A response body fed by a channel.
struct Events(mpsc::Receiver<Bytes>);

impl hyper::body::Body for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

/// The stream of history from after `since` (`None`: from now on), holding `slot`.
pub fn stream(shared: Arc<Shared>, since: Option<u64>, slot: Slot) -> Response<Body> {
    let (tx, rx) = mpsc::channel::<Bytes>(BUFFERED);
    tokio::spawn(async move {
        let _slot = slot;
        Feed { shared, tx }.run(since).await;
    });
    reply(Events(rx).boxed(), "text/event-stream")
}

struct Feed {
    shared: Arc<Shared>,
    tx: mpsc::Sender<Bytes>,
}

impl Feed {
    async fn run(self, since: Option<u64>) {
        // Subscribed before the head is read: nothing published after it is missed.
        let mut live = self.shared.hub.lines();
        // From now on: after the store's head, not the follower's, which may not have
        // published a write committed before this request yet (it would then show here).
        let start = match since {
            Some(s) => s,
            None => self.head().await,
        };
        // After the last line sent.
        let mut at = HistoryCursor::after_write(start);
        let mut behind = since.is_some();
        if !self
            .put(Bytes::from_static(b": claimdag history\n\n"))
            .await
        {
            return;
        }
        loop {
            if behind {
                match self.page(at).await {
                    Some((cur, lines, next)) => {
                        at = cur;
                        behind = next.is_some();
                        if !lines.is_empty() && !self.put(Bytes::from(frames(&lines, next))).await {
                            return;
                        }
                    }
                    // The store could not be read: the client reconnects with
                    // Last-Event-ID and loses nothing.
                    None => return,
                }
                continue;
            }
            let got = tokio::select! {
                got = live.recv() => got,
                _ = self.tx.closed() => return,
                _ = self.shared.stopped() => return,
                _ = tokio::time::sleep(KEEPALIVE) => {
                    if !self.put(Bytes::from_static(b": keep-alive\n\n")).await {
                        return;
                    }
                    continue;
                }
            };
            match got {
                Ok(lines) => {
                    let new: Vec<HistoryLine> = lines
                        .iter()
                        .filter(|l| (l.seq, l.i) > at.position())
                        .cloned()
                        .collect();
                    if let Some(last) = new.last() {
                        at.passed(last);
                        // The follower publishes whole writes.
                        if !self.put(Bytes::from(frames(&new, None))).await {
                            return;
                        }
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => behind = true,
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    }

    /// The write the store's history stands at now (at least what the follower published).
    async fn head(&self) -> u64 {
        let published = self.shared.hub.head();
        let store = self.shared.store.clone();
        let now = tokio::task::spawn_blocking(move || store.history_head())
            .await
            .ok()
            .and_then(|r| r.ok())
            .unwrap_or(0);
        now.max(published)
    }

    /// Sends `bytes` once the client has room for them; false when the client went away or
    /// the server is stopping.
    async fn put(&self, bytes: Bytes) -> bool {
        tokio::select! {
            sent = self.tx.send(bytes) => sent.is_ok(),
            _ = self.shared.stopped() => false,
        }
    }

    /// The next page of history after `at`, read on the blocking pool by at most a few
    /// streams at once: the cursor after it, its lines, and the seq of the line after the
    /// page when there is one (it tells whether the page's last line ends its write).
    async fn page(&self, at: HistoryCursor) -> Option<Page> {
        let _turn = self.shared.readers.acquire().await.ok()?;
        let store = self.shared.store.clone();
        tokio::task::spawn_blocking(move || {
            let mut next = at;
            let mut lines = store.history_next(&mut next, PAGE + 1)?;
            if lines.len() <= PAGE {
                return Ok((next, lines, None));
            }
            // The line looked at beyond the page is read again with the next page.
            let peek = lines.pop().map(|l| l.seq);
            let mut kept = at;
            if let Some(last) = lines.last() {
                kept.passed(last);
            }
            Ok::<_, crate::Error>((kept, lines, peek))
        })
        .await
        .ok()?
        .ok()
    }
}

/// The events of `lines`: each line's JSON, the last of each write with its `seq` as id
/// (`next`: the seq of the line after the last, when one is known to follow), so that a
/// client that reconnects from an id never misses the rest of a write.
fn frames(lines: &[HistoryLine], next: Option<u64>) -> String {
    let mut out = String::new();
    for (k, l) in lines.iter().enumerate() {
        let follows = lines.get(k + 1).map(|n| n.seq).or(next);
        let last_of_write = follows.is_none_or(|seq| seq != l.seq);
        if last_of_write {
            out.push_str(&format!("id: {}\n", l.seq));
        }
        out.push_str("event: history\ndata: ");
        out.push_str(&serde_json::to_string(l).unwrap_or_default());
        out.push_str("\n\n");
    }
    out
}

/// Where a client asks the stream to start: `?since=SEQ`, else `Last-Event-ID`.
pub fn since(
    query: Option<&str>,
    last_event_id: Option<&HeaderValue>,
) -> Result<Option<u64>, String> {
    let given = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|kv| kv.strip_prefix("since="))
        .map(str::to_string)
        .or_else(|| {
            last_event_id
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        });
    match given {
        None => Ok(None),
        Some(s) => s.trim().parse::<u64>().map(Some).map_err(|_| {
            format!("since {s:?}: a write number (the id of an event), 0 for the whole history")
        }),
    }
}
