//! SIGKILL torture through the real binary. Several worker threads run random verbs
//! (upsert, link, claim-next, claim, renew, release, complete, reclaim, reopen, archive,
//! unarchive, and reads) on one store, one `claimdag` process at a time each, while a killer
//! thread sends SIGKILL to a random running process at random moments.
//!
//! Each worker logs what every command that returned success implies (a grant of `(id,
//! gen)`, a renew at `gen`, a link, ...) and every command that was killed. Afterwards:
//!
//! - the store opens and `check` passes;
//! - every success is in the store: its event is in `log --json`, its node and links exist;
//! - nothing that failed is: every event of a worker's actor is explained by one of its
//!   successes or by one of its killed commands, never by a refused one, and a link refused
//!   as a cycle is never there;
//! - no node was ever granted to two live holders: every `(id, gen)` grant is unique, the
//!   history replays as a legal sequence of grants and hand-backs ending in the state `list`
//!   shows, and no worker's fenced call at an old generation succeeded after a newer grant
//!   of the node had been returned to another worker.
//!
//! `CLAIMDAG_SOAK=1` (`make soak`) runs thousands of kills instead of a few hundred.

mod history;
mod killer;
mod verify;
mod worker;

use crate::common::{Rng, Store};
use killer::{kill_at_random, Victims};
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::time::{Duration, Instant};
use worker::Worker;

const SIGKILL: i32 = 9;
const WORKERS: u64 = 4;
/// Nodes the workers share: ids are minted from the summary, so every worker knows them.
const POOL: usize = 24;
/// The share of commands the killer picks to kill (those that end first are spared).
const KILL_PERCENT: u64 = 30;

fn soak() -> bool {
    std::env::var("CLAIMDAG_SOAK").is_ok_and(|v| !v.is_empty() && v != "0")
}

fn summary(i: usize) -> String {
    format!("torture node {i:02}")
}

/// Every sixth node carries about 48 KiB of labels, so that the journal passes the compaction
/// threshold every few hundred writes and some kills land inside a compaction.
fn labels(i: usize) -> Vec<String> {
    if i.is_multiple_of(6) {
        (0..200)
            .map(|k| format!("n{i}-{k}-{}", "l".repeat(240)))
            .collect()
    } else {
        Vec::new()
    }
}

fn pool_ids() -> Vec<String> {
    (0..POOL)
        .map(|i| claimdag::Id::mint("", "task", None, &summary(i)).hex())
        .collect()
}

/// A command and the monotonic times it was started and had returned, since the test began.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: Duration,
    end: Duration,
}

/// What a command that returned success implies.
#[derive(Debug, Clone)]
enum Success {
    Upsert(String),
    Link {
        p: String,
        c: String,
    },
    Grant {
        id: String,
        gen: u64,
    },
    Renew {
        id: String,
        gen: Option<u64>,
    },
    Release {
        id: String,
        gen: u64,
    },
    Complete {
        id: String,
        gen: u64,
        status: String,
    },
    Cancel {
        id: String,
        gen: u64,
    },
    HandedBack {
        id: String,
        gen: u64,
    },
    Reopen {
        id: String,
        gen: u64,
    },
    Archive(String),
    Unarchive(String),
}

/// A command that was killed: it may have landed or not.
#[derive(Debug, Clone)]
struct Killed {
    verb: &'static str,
    node: Option<String>,
    gen: Option<u64>,
    other: Option<String>,
}

/// What one worker did in a round.
struct Outcome {
    me: String,
    trail: Vec<String>,
    successes: Vec<(Success, Span)>,
    killed: Vec<Killed>,
    cycles: Vec<(String, String)>,
    kills: usize,
    runs: usize,
}

/// One round: a fresh store, the workers and the killer until `target` kills landed.
fn round(round: usize, target: usize, seed_rng: &mut Rng) -> (usize, usize) {
    let s = Store::new();
    let ids = pool_ids();
    for (i, id) in ids.iter().enumerate().take(POOL / 2) {
        assert_eq!(&s.upsert(&summary(i), &[]), id);
    }
    // No cap on claims an actor holds, so that grants are frequent.
    s.ok(&["config", "max_held", "0"]);
    let victims = Victims::default();
    let landed = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let t0 = Instant::now();
    let killer_seed = seed_rng.next();
    let seeds: Vec<u64> = (0..WORKERS).map(|_| seed_rng.next()).collect();
    let (outcomes, sent) = std::thread::scope(|scope| {
        let killer = scope.spawn(|| kill_at_random(&victims, &stop, killer_seed));
        let handles: Vec<_> = (0..WORKERS)
            .map(|w| {
                let (s, ids, victims, landed, stop) = (&s, &ids, &victims, &landed, &stop);
                let seed = seeds[w as usize];
                scope.spawn(move || {
                    Worker::new(s, w, ids, seed, victims, t0).work(target, landed, stop)
                })
            })
            .collect();
        let outcomes: Vec<Outcome> = handles
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .collect();
        (outcomes, killer.join().expect("killer"))
    });
    let kills: usize = outcomes.iter().map(|o| o.kills).sum();
    let runs: usize = outcomes.iter().map(|o| o.runs).sum();
    let successes: usize = outcomes.iter().map(|o| o.successes.len()).sum();
    eprintln!(
        "round {round}: {kills} processes killed ({sent} SIGKILLs sent), {runs} runs, \
         {successes} successful writes"
    );
    assert!(kills >= target, "only {kills} of {target} kills landed");
    verify::verify(&s, &outcomes);
    (kills, runs)
}

#[test]
fn sigkills_at_random_moments_against_workers_running_random_verbs() {
    let (rounds, per_round) = if soak() { (10, 400) } else { (1, 300) };
    let mut rng = Rng::from_env("torture");
    let mut kills = 0;
    let mut runs = 0;
    for r in 0..rounds {
        let (k, n) = round(r, per_round, &mut rng);
        kills += k;
        runs += n;
    }
    eprintln!("torture: {kills} processes killed in {runs} runs over {rounds} round(s)");
}
