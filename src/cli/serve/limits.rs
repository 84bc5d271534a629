//! How many watch streams and waiting `claim_next` calls the server holds open at once, in
//! all and for one client address. Past either bound a new one is answered 503 at once
//! (with `Retry-After`), never queued: every other request is still answered.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// The bounds of `claimdag serve --max-streams N`: N in all, and a quarter of N (at least
/// one) for one client address.
pub struct Streams {
    total: usize,
    per_client: usize,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    all: usize,
    by: HashMap<IpAddr, usize>,
}

/// One stream or wait held open: its place is given back when this is dropped.
pub struct Slot {
    streams: Arc<Streams>,
    client: IpAddr,
}

impl Streams {
    pub fn new(total: usize) -> Arc<Streams> {
        Arc::new(Streams {
            total,
            per_client: (total / 4).max(1),
            open: Mutex::new(Open::default()),
        })
    }

    /// A place for one more stream of `client`, or why there is none.
    pub fn take(self: &Arc<Self>, client: IpAddr) -> Result<Slot, String> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if open.all >= self.total {
            return Err(format!(
                "the server holds {} streams and waits open, its most (claimdag serve \
                 --max-streams); try again later",
                open.all
            ));
        }
        let mine = open.by.entry(client).or_default();
        if *mine >= self.per_client {
            return Err(format!(
                "this client ({client}) holds {mine} streams and waits open, the most one \
                 address may (a quarter of claimdag serve --max-streams); close one or try \
                 again later"
            ));
        }
        *mine += 1;
        open.all += 1;
        Ok(Slot {
            streams: self.clone(),
            client,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.streams.open.lock().unwrap_or_else(|p| p.into_inner());
        open.all -= 1;
        if let Some(n) = open.by.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                open.by.remove(&self.client);
            }
        }
    }
}
