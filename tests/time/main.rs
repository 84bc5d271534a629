//! Time in the rules, through the command line, on the directory store and on a real
//! PostgreSQL server: scheduled nodes (`upsert --not-before`), the retry backoff of every
//! hand-back, `release --retry-in`, `claim-next --wait` woken by another process's write or
//! by a scheduled time passing, and `watch`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/pg.rs"]
mod pg;
#[path = "../common/target.rs"]
mod target;

mod bounds;
mod scheduled;
mod waiting;
mod watch;

use common::Run;
use std::process::Child;
use std::time::Duration;
pub use target::{both, Target};

/// Waits for a started command to end (two minutes at most); what it did.
pub fn finish(child: Child, what: &str) -> Run {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(out) => Run::from_output(vec![what.to_string()], out.expect("wait for claimdag")),
        Err(_) => {
            // SAFETY: a signal to a child of this process.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("{what} did not end within two minutes");
        }
    }
}
