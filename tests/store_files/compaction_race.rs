//! Compaction runs off the write lock's path while other handles keep writing: with a
//! threshold of one byte every write compacts, so records committed by one handle while
//! another writes its snapshot must survive the journal swap. Four handles (each with its
//! own files and OS locks, as separate processes have) claim and complete every node once.

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
