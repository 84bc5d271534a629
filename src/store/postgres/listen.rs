//! Waiting for a write of any host: one connection per handle `LISTEN`s on the store's
//! channel (schema/notify.sql announces every write on it, delivered only once the write has
//! committed). One waiter at a time reads it and wakes the others of the same handle; they
//! all look again (a look is a read, and a claim is decided under the store's lock, so a
//! wake-up never grants anything by itself). A connection lost or refused falls back to
//! looking again every [`TICK`], and the next wait connects and listens anew.

use super::{sql, PgStore};
use crate::error::Result;
use postgres::fallible_iterator::FallibleIterator;
use postgres::Client;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// The longest a waiter sleeps without looking at the store's version: a notification lost
/// with its connection costs at most this.
const TICK: Duration = Duration::from_secs(5);
/// How often a waiter looks when there is no listening connection.
const FALLBACK: Duration = Duration::from_millis(50);

/// A handle's listening connection, and how its waiters tell each other of a write.
#[derive(Default)]
pub struct Listener {
    /// The connection, held by the one waiter reading it.
    conn: Mutex<Option<Client>>,
    /// Notifications read so far: a waiter that is not reading waits for this to move.
    heard: Mutex<u64>,
    moved: Condvar,
    /// A listening connection could not be made: not tried again before this.
    retry_at: Mutex<Option<Instant>>,
}

impl Listener {
    /// Waits until `changed` says yes (asked after the wait for a notification is in
    /// place, and after every wake-up) or `until` passes; returns whether it changed.
    pub fn wait(
        &self,
        store: &PgStore,
        until: Instant,
        changed: &mut dyn FnMut() -> Result<bool>,
    ) -> Result<bool> {
        loop {
            let heard = *self.heard.lock().unwrap_or_else(|p| p.into_inner());
            let Ok(mut conn) = self.conn.try_lock() else {
                // Another waiter reads the connection and tells of what it hears.
                if changed()? {
                    return Ok(true);
                }
                if Instant::now() >= until {
                    return Ok(false);
                }
                self.await_reader(heard, until);
                continue;
            };
            let done = self.read_once(store, &mut conn, until, changed);
            drop(conn);
            if !matches!(done, Ok(None)) {
                // Leaving the connection unread: wake the others, one of them reads it next.
                self.tell();
                return done.map(|d| d.unwrap_or(false));
            }
        }
    }

    /// One turn of the waiter reading the connection: `Some` when the wait is over (whether
    /// the store changed), `None` to go on.
    fn read_once(
        &self,
        store: &PgStore,
        conn: &mut Option<Client>,
        until: Instant,
        changed: &mut dyn FnMut() -> Result<bool>,
    ) -> Result<Option<bool>> {
        if conn.as_ref().is_none_or(|c| c.is_closed()) {
            let mut retry_at = self.retry_at.lock().unwrap_or_else(|p| p.into_inner());
            if retry_at.is_none_or(|t| Instant::now() >= t) {
                *conn = self.connect(store).ok();
                *retry_at = conn.is_none().then(|| Instant::now() + TICK);
            }
        }
        // Listening before the look: a write after it is heard below.
        if changed()? {
            return Ok(Some(true));
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Some(false));
        }
        let Some(client) = conn.as_mut() else {
            std::thread::sleep(left.min(FALLBACK));
            return Ok(None);
        };
        let heard = client
            .notifications()
            .timeout_iter(left.min(TICK))
            .next()
            .map(|n| n.is_some());
        match heard {
            Ok(true) => {
                // Everything queued counts as one wake-up.
                while let Ok(Some(_)) = client.notifications().iter().next() {}
                self.tell();
            }
            Ok(false) => {}
            Err(_) => *conn = None,
        }
        Ok(None)
    }

    /// A new listening connection.
    fn connect(&self, store: &PgStore) -> Result<Client> {
        let tls = super::tls::connector(&store.target.tls)?;
        let mut client = store
            .target
            .config
            .connect(tls)
            .map_err(|e| store.err(e))?;
        let channel: String = client
            .query_one(sql::CHANNEL, &[&store.target.schema])
            .map_err(|e| store.err(e))?
            .get(0);
        client
            .batch_execute(&format!("LISTEN {}", sql::ident(&channel)))
            .map_err(|e| store.err(e))?;
        Ok(client)
    }

    /// Wakes the handle's other waiters.
    fn tell(&self) {
        let mut h = self.heard.lock().unwrap_or_else(|p| p.into_inner());
        *h += 1;
        self.moved.notify_all();
    }

    /// Waits (not reading the connection: another waiter is) until that waiter hears a
    /// write, `until`, or a [`TICK`], whichever comes first.
    fn await_reader(&self, heard: u64, until: Instant) {
        let left = until.saturating_duration_since(Instant::now()).min(TICK);
        let h = self.heard.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self.moved.wait_timeout_while(h, left, |h| *h == heard);
    }
}
