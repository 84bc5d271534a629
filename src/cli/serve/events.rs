//! `GET /v1/watch`: the history as it is written, as server-sent events. Each event is one
//! history line (`event: history`, `data:` its JSON, as `claimdag watch --json` prints it);
//! the last event of each write carries `id:` its `seq`, so a client that reconnects with
//! `Last-Event-ID` (or `?since=SEQ`) gets what it missed. A comment every 15 s keeps idle
//! connections open through proxies. The store's watch runs on the blocking pool and ends
//! when the client goes away.

use super::http::{reply, Body};
use crate::model::HistoryLine;
use crate::store::Store;
use http_body_util::BodyExt;
use hyper::body::{Bytes, Frame};
use hyper::header::HeaderValue;
use hyper::Response;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::mpsc;

/// How often the watch looks for new writes when nothing came, and checks its client.
const TICK: Duration = Duration::from_secs(1);
/// Ticks between keep-alive comments.
const KEEPALIVE_TICKS: u32 = 15;

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

/// The stream of history from after `since` (`None`: from now on).
pub fn stream(store: Store, since: Option<u64>) -> Response<Body> {
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    tokio::task::spawn_blocking(move || {
        let _ = tx.blocking_send(Bytes::from_static(b": claimdag history\n\n"));
        let mut idle = 0u32;
        // An error of the store (a lost connection) ends the stream: the client reconnects
        // with Last-Event-ID and loses nothing.
        let _ = store.watch(since, TICK, |lines: &[HistoryLine]| {
            if lines.is_empty() {
                idle += 1;
                if idle.is_multiple_of(KEEPALIVE_TICKS) {
                    return Ok(tx
                        .blocking_send(Bytes::from_static(b": keep-alive\n\n"))
                        .is_ok());
                }
                return Ok(!tx.is_closed());
            }
            idle = 0;
            Ok(tx.blocking_send(Bytes::from(frames(lines))).is_ok())
        });
    });
    reply(Events(rx).boxed(), "text/event-stream")
}

/// The events of `lines`: each line's JSON, the last of each write with its `seq` as id.
fn frames(lines: &[HistoryLine]) -> String {
    let mut out = String::new();
    for (k, l) in lines.iter().enumerate() {
        let last_of_write = lines.get(k + 1).is_none_or(|next| next.seq != l.seq);
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
