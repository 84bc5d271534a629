//! What wakes `claimdag work` between claims: a thread that waits for the store to change
//! ([`Store::wait_change`]: inotify on the embedded store's directory, no CPU while nothing
//! changes) or for the next change by time alone (a lease running out, a `not_before`
//! passing), and then sends a wake-up. The worker loop tries to claim only on a wake-up
//! or when one of its own commands ended: it never polls the store.

use crate::id::Id;
use crate::model::Status;
use crate::store::Store;
use std::sync::mpsc::{sync_channel, Receiver, TrySendError};
use std::time::Duration;

/// The longest the thread waits before it looks again at when the next change by time is
/// due (a lease renewed by its holder moves it without a write of anyone else's).
const LONGEST: Duration = Duration::from_secs(60);

/// A little past a change by time, so that the store's clock (whole milliseconds) has
/// passed it when the worker looks.
const SLACK: Duration = Duration::from_millis(3);

/// Starts the thread: a wake-up comes after every write committed after version `seen`
/// (read before the worker's first claim, so none is missed) and whenever a change by
/// time comes due. The thread ends at its next wake-up once the receiver is dropped.
pub(super) fn watch(store: Store, seen: u64) -> Receiver<()> {
    let (tx, rx) = sync_channel(1);
    std::thread::spawn(move || {
        let mut seen = seen;
        loop {
            let until = match store.next_change_in() {
                Ok(Some(d)) => d.min(LONGEST) + SLACK,
                Ok(None) => LONGEST,
                Err(_) => Duration::from_secs(1),
            };
            match store.wait_change(seen, until) {
                Ok(now) => seen = now,
                // The worker finds the error itself at its next claim.
                Err(_) => std::thread::sleep(Duration::from_secs(1)),
            }
            match tx.try_send(()) {
                Ok(()) | Err(TrySendError::Full(())) => {}
                Err(TrySendError::Disconnected(())) => return,
            }
        }
    });
    rx
}

/// What a worker that found nothing ready waits on, in words: the live claims that may
/// unlock work and the scheduled nodes whose time will come (`pending`, first first).
pub(super) fn waiting_on(store: &Store, pending: &[Id]) -> String {
    let mut claims = Vec::new();
    let mut scheduled = Vec::new();
    for id in pending {
        match store.get(*id) {
            Ok(v) if v.node.status == Status::Todo => {
                scheduled.push((v.node.not_before.unwrap_or(0), *id))
            }
            _ => claims.push(*id),
        }
    }
    let mut parts = Vec::new();
    if let Some(first) = claims.first() {
        parts.push(format!(
            "on {} claim(s) that may unlock work ({} first)",
            claims.len(),
            first.short()
        ));
    }
    if let Some((at, id)) = scheduled.iter().min() {
        parts.push(format!(
            "for {} scheduled node(s) (the first, {}, ready at {})",
            scheduled.len(),
            id.short(),
            crate::duration::format_time(*at)
        ));
    }
    format!("nothing ready; waiting {}", parts.join(" and "))
}
