//! Compaction runs off the write lock's path while other handles keep writing: with a
//! threshold of one byte every write compacts, so records committed by one handle while
//! another writes its snapshot must survive the journal swap. Four handles (each with its
//! own files and OS locks, as separate processes have) claim and complete every node once.
//! A temporary left by a compaction that did not finish is removed by the next writer, never
//! while another compaction runs.

use crate::common::{flat_plan, unsynced};
use claimdag::{Id, Status};
use std::collections::HashSet;

#[test]
fn writes_committed_during_a_compaction_survive_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let open = || unsynced(&dir, 1);
    open()
        .import("", flat_plan(120, |i| format!("node {i}")))
        .unwrap();
    let grants: Vec<Vec<(Id, u64)>> = std::thread::scope(|s| {
        let workers: Vec<_> = (1..=4u8)
            .map(|w| {
                let store = open();
                s.spawn(move || {
                    let mut me = [0u8; 16];
                    me[15] = w;
                    let me = Id(me);
                    let mut mine = Vec::new();
                    while let Some((id, g)) = store.claim_next("", me, None, None).unwrap() {
                        store.complete(id, Status::Done, g, Some(me), None).unwrap();
                        mine.push((id, g));
                    }
                    mine
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let all: Vec<(Id, u64)> = grants.into_iter().flatten().collect();
    let distinct: HashSet<Id> = all.iter().map(|(id, _)| *id).collect();
    assert_eq!(all.len(), 120, "every node granted exactly once");
    assert_eq!(distinct.len(), 120);
    let fresh = open();
    let report = fresh.check().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert!(dir.join("history.jsonl").exists(), "compactions ran");
    let done = fresh
        .inspect(|s, _| {
            s.nodes()
                .iter()
                .filter(|n| n.status == Status::Done)
                .count()
        })
        .unwrap();
    assert_eq!(done, 120, "every completion survived the compactions");
    // create, claim and complete for every node, each once.
    assert_eq!(report.events, 360);
}

/// The temporaries of a compaction that did not finish (killed, or out of space) are removed
/// by the next process that writes, under the write lock; not while a compaction holds
/// `compact.lock` (they are then its own), and not by a read.
#[test]
fn a_temporary_left_by_a_compaction_is_removed_by_the_next_writer() {
    let s = crate::common::Store::new();
    let mut ids = vec![s.upsert("first", &[])];
    let temporaries = ["snapshot.json.tmp", "journal.tmp"].map(|t| s.dir.join(t));
    for t in &temporaries {
        std::fs::write(t, vec![b'x'; 256 << 10]).unwrap();
    }
    let left = || temporaries.iter().filter(|t| t.exists()).count();
    s.ok(&["list"]);
    assert_eq!(left(), 2, "a read removed a temporary");
    // Another process compacting: it holds compact.lock, and the files are its own.
    let compacting = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(s.dir.join("compact.lock"))
        .unwrap();
    compacting.lock().unwrap();
    ids.push(s.upsert("while another compacts", &[]));
    assert_eq!(left(), 2, "a temporary of a running compaction was removed");
    compacting.unlock().unwrap();
    ids.push(s.upsert("after", &[]));
    assert_eq!(left(), 0, "a temporary left by a compaction stayed");
    let listed: Vec<String> = s
        .json(&["list"])
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, ids);
    assert!(s.ok(&["check"]).starts_with("ok"));
}
