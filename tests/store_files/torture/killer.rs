//! The killer thread and the running processes it may kill.

use super::KILL_PERCENT;
use crate::common::Rng;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Running processes the killer may kill. A worker removes its child's pid before reaping
/// it, so a pid here is never one the system has handed to another process. The killer
/// gives each new pid its fate when it first sees it: spared, or killed at a random moment
/// of its first few milliseconds (if it is still running then), so that the share of
/// commands killed does not depend on how loaded the machine is.
#[derive(Default)]
pub(super) struct Victims {
    pub(super) pids: Mutex<Vec<(i32, Option<Option<Instant>>)>>,
}

/// The killer: every few hundred microseconds, gives each new pid of `victims` its fate and
/// kills those whose moment has come, until `stop`. Returns how many SIGKILLs it sent.
pub(super) fn kill_at_random(victims: &Victims, stop: &AtomicBool, seed: u64) -> usize {
    let mut rng = Rng::seeded(seed);
    let mut sent = 0usize;
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_micros(100 + rng.below(900)));
        let now = Instant::now();
        let mut pids = victims.pids.lock().expect("victims");
        for (pid, fate) in pids.iter_mut() {
            let when = *fate.get_or_insert_with(|| {
                (rng.below(100) < KILL_PERCENT)
                    .then(|| now + Duration::from_micros(rng.below(12_000)))
            });
            if when.is_some_and(|t| t <= now) {
                // SAFETY: `pid` is a child that has not been reaped (see Victims).
                unsafe {
                    libc::kill(*pid, libc::SIGKILL);
                }
                *fate = Some(None);
                sent += 1;
            }
        }
    }
    sent
}
