//! The journal is compacted once it holds more than a quarter of the snapshot, and sooner
//! when new processes keep replaying it: once the writers of its records had together
//! replayed more of it, when they loaded, than the snapshot holds.

use crate::common::{flat_plan, unsynced};
use claimdag::{Id, Status, Store};
use std::path::Path;

const HEADER: u64 = "claimdag-journal 1\n".len() as u64;

/// How many live nodes of `store` are done.
fn done_in(store: &Store) -> usize {
    store
        .inspect(|s, _| {
            s.nodes()
                .iter()
                .filter(|n| n.status == Status::Done)
                .count()
        })
        .unwrap()
}

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
        let journal = crate::common::journal_used_len(&dir).saturating_sub(HEADER);
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
    // One long-lived handle replays nothing it did not write: it keeps the quarter (the
    // rule for handles that replay would have compacted at about a twentieth).
    assert!(
        most > 0.2,
        "the journal of one long-lived handle reached only {most:.2} of the snapshot"
    );
    // Everything committed reads back from the files in a fresh handle.
    assert_eq!(done_in(&Store::open(Some(&dir)).unwrap()), done);
}

#[test]
fn a_journal_that_every_write_replays_is_compacted_once_the_replays_outweigh_the_snapshot() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    // Each write through a handle opened for it, as each `claimdag` command is a process:
    // it replays the whole journal when it loads, and says so in its record.
    let fresh = || unsynced(&dir, 1);
    fresh()
        .import("", flat_plan(1500, |i| format!("node {i} of a flat plan")))
        .unwrap();
    let me = Id([7; 16]);
    let (mut compactions, mut replayed, mut most) = (0, 0u64, 0u64);
    let mut claimed = None;
    for write in 1..=600 {
        let snapshot = len(&dir.join("snapshot.json"));
        let before = crate::common::journal_used_len(&dir).saturating_sub(HEADER);
        match claimed.take() {
            None => claimed = fresh().claim_next("", me, None, None).unwrap(),
            Some((id, g)) => fresh()
                .complete(id, Status::Done, g, Some(me), None)
                .unwrap(),
        }
        let after = crate::common::journal_used_len(&dir).saturating_sub(HEADER);
        let compacted = len(&dir.join("snapshot.json")) != snapshot;
        replayed += before;
        // Records here are under 1 KiB and the quarter is about 100 KB away: only the
        // replays decide.
        assert!(
            after < snapshot / 4,
            "write {write}: the journal reached the quarter"
        );
        assert_eq!(
            compacted,
            replayed > snapshot,
            "write {write}: {replayed} bytes replayed since the last compaction, snapshot of \
             {snapshot} bytes, journal {before} then {after} bytes"
        );
        if compacted {
            compactions += 1;
            replayed = 0;
        }
        most = most.max(after);
    }
    // About √(2 · 480 · 400 KB) ≈ 20 KB of journal between compactions: 600 writes of
    // about 480 bytes make about 14.
    assert!(compactions >= 10, "only {compactions} compactions");
    assert!(most < 40_000, "the journal reached {most} bytes");
    let report = fresh().check().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(
        done_in(&fresh()),
        300,
        "every completion survived the compactions"
    );
}

/// Journals written before records said what their writers replayed read as before (the
/// count is 0), and the store goes on from them.
#[test]
fn a_journal_without_replay_counts_reads_as_before() {
    use claimdag::store::embedded::journal;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let fresh = || unsynced(&dir, 1 << 30);
    fresh()
        .import("", flat_plan(50, |i| format!("node {i}")))
        .unwrap();
    let me = Id([7; 16]);
    for _ in 0..5 {
        let (id, g) = fresh().claim_next("", me, None, None).unwrap().unwrap();
        fresh()
            .complete(id, Status::Done, g, Some(me), None)
            .unwrap();
    }
    let path = dir.join("journal");
    let bytes = std::fs::read(&path).unwrap();
    let head = HEADER as usize;
    let scan = journal::scan(&bytes[head..], &path, HEADER, None).unwrap();
    assert!(
        scan.records.iter().any(|r| r.replayed > 0),
        "new records count"
    );
    let mut old = bytes[..head].to_vec();
    for mut rec in scan.records {
        rec.replayed = 0;
        old.extend_from_slice(&journal::encode(&rec));
    }
    assert!(!String::from_utf8_lossy(&old).contains("replayed"));
    let before = fresh().inspect(|s, _| s.nodes().to_vec()).unwrap();
    std::fs::write(&path, &old).unwrap();
    assert_eq!(fresh().inspect(|s, _| s.nodes().to_vec()).unwrap(), before);
    let (id, g) = fresh().claim_next("", me, None, None).unwrap().unwrap();
    fresh()
        .complete(id, Status::Done, g, Some(me), None)
        .unwrap();
    assert_eq!(done_in(&fresh()), 6);
    assert!(fresh().check().unwrap().problems.is_empty());
}
