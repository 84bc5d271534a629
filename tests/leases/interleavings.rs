//! Interleavings of many handles on one store (each handle has its own lock file
//! descriptor, so handles in one process exclude each other exactly as processes do):
//!
//! - unarchive, reopen, claim, complete and archive looping on one node in four handles
//!   (and in four `claimdag` process loops): a generation never goes back and is never
//!   granted twice, and `check` stays clean;
//! - a handle whose store directory was removed (and made again by another handle) never
//!   writes through the deleted files: every committed write is in the store;
//! - reads are one snapshot: while a node moves in and out of the archive, `get` always
//!   finds it and `list --all` shows it exactly once.
//!
//! `CLAIMDAG_SOAK=1` (`make soak`) runs each loop for much longer.

use crate::common::{actor_id as actor, handle as open};
use claimdag::{Error, Id, ListFilter, Status, Store, Upsert};
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn soak() -> bool {
    std::env::var("CLAIMDAG_SOAK").is_ok_and(|v| !v.is_empty() && v != "0")
}

fn run_for() -> Duration {
    Duration::from_secs(if soak() { 60 } else { 3 })
}

fn upsert(s: &Store, summary: &str) -> Id {
    s.upsert(Upsert {
        summary: summary.into(),
        ..Upsert::default()
    })
    .expect("upsert")
}

/// One handle's loop: bring the node back, reopen it, claim it, finish it, archive it.
/// Refusals are expected (another handle got there first); each grant is recorded.
fn churn(dir: &Path, node: Id, me: Id, stop: &AtomicBool, grants: &Mutex<Vec<u64>>) -> usize {
    let s = open(dir);
    let mut steps = 0;
    while !stop.load(Ordering::Relaxed) {
        let _ = s.unarchive(node);
        let _ = s.reopen(node, None);
        if let Ok(g) = s.claim(node, me, None, None) {
            grants.lock().unwrap().push(g);
            let _ = s.complete(node, Status::Done, g, Some(me), Some(&format!("{me}")));
        }
        let _ = s.archive("", &[node], None);
        steps += 1;
    }
    steps
}

#[test]
fn unarchive_races_never_move_a_generation_back_or_grant_it_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let s = open(&dir);
    let node = upsert(&s, "churned");
    let g = s.claim(node, actor(1), None, None).unwrap();
    s.complete(node, Status::Done, g, None, None).unwrap();
    s.archive("", &[node], None).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let grants = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..4u8)
        .map(|w| {
            let (dir, stop, grants) = (dir.clone(), stop.clone(), grants.clone());
            std::thread::spawn(move || churn(&dir, node, actor(10 + w), &stop, &grants))
        })
        .collect();
    std::thread::sleep(run_for());
    stop.store(true, Ordering::Relaxed);
    let steps: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();

    let grants = grants.lock().unwrap();
    let distinct: HashSet<u64> = grants.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        grants.len(),
        "a generation was granted twice in {} grants over {steps} loops",
        grants.len()
    );
    assert!(
        grants.len() > 10,
        "the loop made progress: {} grants",
        grants.len()
    );
    let report = open(&dir).check().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    // The node ends at a generation at least as high as every grant.
    let last = open(&dir).get(node).unwrap().node.generation;
    assert!(last >= *grants.iter().max().unwrap());
}

/// The same loop with four `claimdag` processes per step, as the CLI runs it.
#[test]
fn unarchive_races_between_processes_never_grant_a_generation_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let s = open(&dir);
    let node = upsert(&s, "churned by processes");
    let g = s.claim(node, actor(1), None, None).unwrap();
    s.complete(node, Status::Done, g, None, None).unwrap();
    s.archive("", &[node], None).unwrap();
    let cli = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_claimdag"))
            .arg("--dir")
            .arg(&dir)
            .args(args)
            .env_remove("CLAIMDAG_CRASH_AT")
            .output()
            .expect("run claimdag")
    };
    let until = Instant::now() + run_for();
    let grants = Mutex::new(Vec::new());
    let id = node.hex();
    std::thread::scope(|scope| {
        for w in 0..4u8 {
            let (cli, grants, id) = (&cli, &grants, &id);
            scope.spawn(move || {
                let me = actor(20 + w).hex();
                while Instant::now() < until {
                    cli(&["unarchive", id]);
                    cli(&["reopen", id]);
                    let out = cli(&["claim", id, "--assignee", &me]);
                    if out.status.success() {
                        let text = String::from_utf8_lossy(&out.stdout);
                        let g = text.trim().trim_start_matches("gen=").to_string();
                        grants.lock().unwrap().push(g.parse::<u64>().unwrap());
                        cli(&["complete", id, "--status", "done", "--gen", &g]);
                    }
                    cli(&["archive", id]);
                }
            });
        }
    });
    let grants = grants.into_inner().unwrap();
    let distinct: HashSet<u64> = grants.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        grants.len(),
        "a generation was granted twice"
    );
    assert!(!grants.is_empty());
    let report = open(&dir).check().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}

#[test]
fn a_removed_store_directory_loses_no_committed_write() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let stale = open(&dir);
    upsert(&stale, "before the directory was removed");
    std::fs::remove_dir_all(&dir).unwrap();

    // The stale handle and a fresh one write at once; every write either fails or is in the
    // store at the path afterwards.
    let writes = if soak() { 2000 } else { 300 };
    let committed = Arc::new(Mutex::new(Vec::new()));
    let fresh_dir = dir.clone();
    let fresh_committed = committed.clone();
    let fresh = std::thread::spawn(move || {
        let s = open(&fresh_dir);
        for i in 0..writes {
            if let Ok(id) = s.upsert(Upsert {
                summary: format!("fresh {i}"),
                ..Upsert::default()
            }) {
                fresh_committed.lock().unwrap().push(id);
            }
        }
    });
    for i in 0..writes {
        match stale.upsert(Upsert {
            summary: format!("stale {i}"),
            ..Upsert::default()
        }) {
            Ok(id) => committed.lock().unwrap().push(id),
            Err(e) => assert!(matches!(e, Error::Io { .. }), "{e}"),
        }
    }
    fresh.join().unwrap();

    assert!(
        dir.join("lock").exists(),
        "the store made again has its lock file"
    );
    let reader = open(&dir);
    let live: HashSet<Id> = reader
        .list(&ListFilter {
            workspace: Some(String::new()),
            ..ListFilter::default()
        })
        .unwrap()
        .into_iter()
        .map(|v| v.node.id)
        .collect();
    let committed = committed.lock().unwrap();
    let lost: Vec<&Id> = committed.iter().filter(|id| !live.contains(id)).collect();
    assert!(
        lost.is_empty(),
        "{} of {} committed writes are not in the store",
        lost.len(),
        committed.len()
    );
    assert!(reader.check().unwrap().problems.is_empty());
}

#[test]
fn a_handle_follows_its_store_when_the_directory_is_made_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let s = open(&dir);
    upsert(&s, "a");
    std::fs::remove_dir_all(&dir).unwrap();
    let b = upsert(&s, "b");
    assert!(
        dir.join("lock").exists(),
        "the write made the lock file again"
    );
    // Another handle sees exactly what the first one wrote after the removal.
    let other = open(&dir);
    let ids: Vec<Id> = other
        .list(&ListFilter::default())
        .unwrap()
        .into_iter()
        .map(|v| v.node.id)
        .collect();
    assert_eq!(ids, vec![b]);
    // And the first handle sees the other's writes.
    let c = upsert(&other, "c");
    assert!(s.get(c).is_ok());
}

#[test]
fn reads_are_one_snapshot_while_a_node_moves_in_and_out_of_the_archive() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let s = open(&dir);
    let node = upsert(&s, "moving");
    let g = s.claim(node, actor(1), None, None).unwrap();
    s.complete(node, Status::Done, g, None, None).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let mover = {
        let (dir, stop) = (dir.clone(), stop.clone());
        std::thread::spawn(move || {
            let s = open(&dir);
            while !stop.load(Ordering::Relaxed) {
                s.archive("", &[node], None).unwrap();
                s.unarchive(node).unwrap();
            }
        })
    };
    let all = ListFilter {
        workspace: Some(String::new()),
        terminal: true,
        archived: true,
        ..ListFilter::default()
    };
    let reader = open(&dir);
    let until = Instant::now() + run_for();
    let mut reads = 0;
    while Instant::now() < until {
        let seen = reader.list(&all).unwrap();
        let times = seen.iter().filter(|v| v.node.id == node).count();
        assert_eq!(
            times, 1,
            "list --all showed the node {times} times after {reads} reads"
        );
        reader
            .get(node)
            .expect("get finds a node that exists throughout");
        reads += 1;
    }
    stop.store(true, Ordering::Relaxed);
    mover.join().unwrap();
    assert!(reads > 50, "{reads} reads");
}
