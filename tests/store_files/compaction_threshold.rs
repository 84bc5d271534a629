//! The journal is compacted once it holds more than a quarter of the snapshot: every process
//! that opens the store reads both files, so the journal never adds more than a quarter to
//! that read.

use crate::common::{flat_plan, unsynced};
use claimdag::{Id, Status, Store};
use std::path::Path;

const HEADER: u64 = "claimdag-journal 1\n".len() as u64;

fn len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

#[test]
fn the_journal_never_holds_more_than_a_quarter_of_the_snapshot_after_a_write() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = unsynced(&dir, 1);
    store
        .import("", flat_plan(1500, |i| format!("node {i} of a flat plan")))
        .unwrap();
    let me = Id([7; 16]);
    let (mut most, mut compactions, mut last_snapshot) = (0.0f64, 0, 0);
    let mut done = 0;
    while let Some((id, g)) = store.claim_next("", me, None, None).unwrap() {
        store.complete(id, Status::Done, g, Some(me), None).unwrap();
        done += 1;
        let snapshot = len(&dir.join("snapshot.json"));
        let journal = len(&dir.join("journal")).saturating_sub(HEADER);
        assert!(
            journal * 4 <= snapshot,
            "after {done} nodes the journal holds {journal} bytes, more than a quarter of the \
             {snapshot}-byte snapshot"
        );
        most = most.max(journal as f64 / snapshot as f64);
        if snapshot != last_snapshot {
            compactions += 1;
            last_snapshot = snapshot;
        }
        if done == 600 {
            break;
        }
    }
    assert_eq!(done, 600, "nodes ran out");
    assert!(
        compactions >= 3,
        "only {compactions} compactions in {done} cycles"
    );
    eprintln!("{compactions} compactions; the journal reached {most:.2} of the snapshot");
    // Everything committed reads back from the files in a fresh handle.
    let fresh = Store::open(Some(&dir)).unwrap();
    let finished = fresh
        .inspect(|s, _| {
            s.nodes()
                .iter()
                .filter(|n| n.status == Status::Done)
                .count()
        })
        .unwrap();
    assert_eq!(finished, done);
}
