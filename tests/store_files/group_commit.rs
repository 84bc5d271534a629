//! Group commit: the threads of one handle share `fdatasync`s; every write that returns is
//! durable and in the store; a sync that fails takes back every write of its batch and
//! fails each of them; reads and other handles go on meanwhile.
//!
//! The journal's syncs are slowed (and made to fail) for one directory through the
//! `testing` feature's sync faults, so that writers really overlap a sync.

use crate::common::{actor_id as actor, files_of, handle as open};
use claimdag::store::embedded::fault::{self, SyncFault};
use claimdag::{Error, Id, ListFilter, Status, Store, Upsert};
use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::Duration;

fn upsert(s: &Store, summary: &str) -> claimdag::Result<Id> {
    s.upsert(Upsert {
        summary: summary.into(),
        ..Upsert::default()
    })
}

fn live(dir: &Path) -> Vec<claimdag::NodeView> {
    open(dir).list(&ListFilter::default()).expect("list")
}

fn slow(dir: &Path, ms: u64, fail: u32) {
    fault::set_sync_fault(
        dir,
        SyncFault {
            delay: Duration::from_millis(ms),
            fail,
            ..SyncFault::default()
        },
    );
}

/// Runs `upsert`s of `names` in threads at once; each name with what its call returned.
fn upserts_at_once(store: &Store, names: Vec<String>) -> Vec<(String, claimdag::Result<Id>)> {
    let start = Arc::new(Barrier::new(names.len()));
    std::thread::scope(|s| {
        let handles: Vec<_> = names
            .into_iter()
            .map(|name| {
                let start = start.clone();
                s.spawn(move || {
                    start.wait();
                    let r = upsert(store, &name);
                    (name, r)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Exactly the writes that returned Ok (and `before`) are in the store, for `store` and for
/// a fresh handle, and `check` is clean.
fn only_the_ok_writes_are_in(
    store: &Store,
    dir: &Path,
    results: &[(String, claimdag::Result<Id>)],
    before: &[&str],
) {
    for (_, r) in results {
        if let Err(e) = r {
            assert!(matches!(e, Error::Io { .. }), "{e}");
        }
    }
    let mut want: Vec<String> = results
        .iter()
        .filter(|(_, r)| r.is_ok())
        .map(|(n, _)| n.clone())
        .chain(before.iter().map(|b| b.to_string()))
        .collect();
    want.sort();
    for s in [store, &open(dir)] {
        let mut got: Vec<String> = s
            .list(&ListFilter::default())
            .unwrap()
            .into_iter()
            .map(|v| v.node.summary)
            .collect();
        got.sort();
        assert_eq!(
            got, want,
            "the store does not hold exactly the writes that returned Ok"
        );
    }
    assert!(open(dir).check().unwrap().problems.is_empty());
}

#[test]
fn threads_of_one_handle_share_syncs_and_every_write_is_durable() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = open(&dir);
    let threads = 8;
    let per = 10;
    let ids: Vec<Id> = (0..threads * per)
        .map(|i| upsert(&store, &format!("n{i}")).unwrap())
        .collect();
    slow(&dir, 5, 0);
    std::thread::scope(|s| {
        for k in 0..threads {
            let store = &store;
            s.spawn(move || {
                let me = actor(k as u8 + 1);
                for _ in 0..per {
                    let (id, g) = store.claim_next("", me, None, None).unwrap().unwrap();
                    store.complete(id, Status::Done, g, Some(me), None).unwrap();
                }
            });
        }
    });
    let writes = (threads * per * 2) as u64;
    let syncs = fault::syncs(&dir);
    assert!(
        syncs <= writes / 2,
        "{writes} writes of 8 threads took {syncs} syncs: they were not shared"
    );
    // A fresh handle (its own files) sees every write: each node done once, by its claimer.
    let nodes = live(&dir);
    assert!(nodes.is_empty(), "{} nodes are not done", nodes.len());
    let fresh = open(&dir);
    for id in &ids {
        let v = fresh.get(*id).unwrap();
        assert_eq!(v.node.status, Status::Done);
        assert_eq!(v.node.generation, 2, "{id} was granted more than once");
    }
    assert!(fresh.check().unwrap().problems.is_empty());
}

#[test]
fn a_failed_sync_takes_the_write_back_and_leaves_the_files_as_they_were() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = open(&dir);
    let a = upsert(&store, "a").unwrap();
    let before = files_of(&dir);
    slow(&dir, 0, 1);
    let err = store.claim(a, actor(1), None, None).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
    assert_eq!(files_of(&dir), before, "a failed write changed the files");
    // The handle reads the files again: the node is not claimed, and the next write works.
    assert_eq!(store.get(a).unwrap().node.status, Status::Todo);
    assert_eq!(store.claim(a, actor(1), None, None).unwrap(), 2);
    assert!(open(&dir).check().unwrap().problems.is_empty());
}

#[test]
fn a_failed_sync_fails_every_write_of_its_batch_and_keeps_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = open(&dir);
    upsert(&store, "made").unwrap();
    // The first sync is slow, so the other writers append while it runs; then it fails.
    slow(&dir, 100, 1);
    let results = upserts_at_once(&store, (0..8).map(|k| format!("w{k}")).collect());
    let failed = results.iter().filter(|(_, r)| r.is_err()).count();
    assert!(
        failed >= 2,
        "the failed sync's batch held only {failed} write(s): the writers did not overlap it"
    );
    only_the_ok_writes_are_in(&store, &dir, &results, &["made"]);
}

#[test]
fn a_failed_second_sync_keeps_what_the_first_made_durable() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = open(&dir);
    upsert(&store, "made").unwrap();
    // The first write's sync is slow and succeeds; the others append during it and their
    // sync, the batch's second, fails. The first call returned Ok: its write stays.
    fault::set_sync_fault(
        &dir,
        SyncFault {
            delay: Duration::from_millis(150),
            after: 1,
            fail: 1,
            ..SyncFault::default()
        },
    );
    let results = std::thread::scope(|s| {
        let first = s.spawn(|| ("first".to_string(), upsert(&store, "first")));
        std::thread::sleep(Duration::from_millis(40));
        let mut rest = upserts_at_once(&store, (0..4).map(|k| format!("w{k}")).collect());
        rest.push(first.join().unwrap());
        rest
    });
    let ok: Vec<&String> = results
        .iter()
        .filter(|(_, r)| r.is_ok())
        .map(|(n, _)| n)
        .collect();
    assert!(
        ok.contains(&&"first".to_string()),
        "the first sync's write failed: {ok:?}"
    );
    assert!(
        ok.len() < results.len(),
        "no write met the failing sync: {ok:?}"
    );
    only_the_ok_writes_are_in(&store, &dir, &results, &["made"]);
}

#[test]
fn a_write_that_panics_releases_the_lock_at_once() {
    use claimdag::store::{embedded::EmbeddedStore, Backend};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    upsert(&open(&dir), "made").unwrap();
    let handle = EmbeddedStore::open(dir.clone());
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        handle.write(&|_| claimdag::rules::Scope::Unknown, &mut |_, _, _| {
            panic!("a decision that panics")
        })
    }));
    assert!(panicked.is_err());
    // The handle sits idle; another handle (as another process would) still gets the lock.
    let (tx, rx) = std::sync::mpsc::channel();
    let other = dir.clone();
    std::thread::spawn(move || tx.send(upsert(&open(&other), "after").is_ok()));
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(60)),
        Ok(true),
        "a handle that panicked mid-write kept the store locked"
    );
    // And the handle itself goes on.
    assert!(handle
        .write(&|_| claimdag::rules::Scope::Unknown, &mut |_, _, _| Ok(
            claimdag::model::Change::default()
        ))
        .is_ok());
    drop(handle);
    assert_eq!(live(&dir).len(), 2);
}

#[test]
fn reads_and_other_handles_go_on_while_threads_write() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = open(&dir);
    upsert(&store, "first").unwrap();
    slow(&dir, 2, 0);
    let writers = 4;
    let per = 15;
    std::thread::scope(|s| {
        for k in 0..writers {
            let store = &store;
            s.spawn(move || {
                for i in 0..per {
                    upsert(store, &format!("t{k}-{i}")).unwrap();
                }
            });
        }
        // Reads on the same handle: what they see only grows (they see durable writes).
        let store = &store;
        s.spawn(move || {
            let mut seen = 0;
            for _ in 0..40 {
                let n = store.list(&ListFilter::default()).unwrap().len();
                assert!(n >= seen, "a read saw {n} nodes after {seen}");
                seen = n;
            }
        });
        // Another handle (its own lock, as another process) writes too.
        let dir = &dir;
        s.spawn(move || {
            let other = open(dir);
            for i in 0..per {
                upsert(&other, &format!("other-{i}")).unwrap();
            }
        });
    });
    assert_eq!(live(&dir).len(), 1 + (writers + 1) * per);
    assert!(open(&dir).check().unwrap().problems.is_empty());
}

#[test]
fn a_write_that_panics_on_a_torn_journal_header_leaves_the_files_as_they_were() {
    use claimdag::store::{embedded::EmbeddedStore, embedded::JOURNAL, Backend};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    upsert(&open(&dir), "made").unwrap();
    // A crash while the journal was being made again left half its header.
    let journal = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join(JOURNAL))
        .unwrap();
    journal.set_len(5).unwrap();
    let before = files_of(&dir);
    let handle = EmbeddedStore::open(dir.clone());
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        handle.write(&|_| claimdag::rules::Scope::Unknown, &mut |_, _, _| {
            panic!("a decision that panics")
        })
    }));
    assert!(panicked.is_err());
    assert_eq!(
        files_of(&dir),
        before,
        "a write that panicked changed the files"
    );
    // The store still reads and writes.
    upsert(&open(&dir), "after").unwrap();
    assert!(open(&dir).check().unwrap().problems.is_empty());
}

#[test]
fn threads_of_two_handles_race_claim_next_and_each_node_is_granted_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let nodes = if std::env::var("CLAIMDAG_SOAK").is_ok_and(|v| !v.is_empty() && v != "0") {
        2_000
    } else {
        200
    };
    let first = open(&dir);
    for i in 0..nodes {
        upsert(&first, &format!("n{i}")).unwrap();
    }
    slow(&dir, 1, 0);
    let second = open(&dir);
    // 2 handles (as 2 processes) x 4 threads: batches within each, exclusion between them.
    let grants: Vec<(Id, u64, Id)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..8u8)
            .map(|k| {
                let store = if k % 2 == 0 { &first } else { &second };
                s.spawn(move || {
                    let me = actor(k + 1);
                    let mut mine = Vec::new();
                    while let Some((id, g)) = store.claim_next("", me, None, None).unwrap() {
                        store.complete(id, Status::Done, g, Some(me), None).unwrap();
                        mine.push((id, g, me));
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    let mut ids: Vec<Id> = grants.iter().map(|(id, _, _)| *id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), grants.len(), "a node was granted twice");
    assert_eq!(grants.len(), nodes, "every node was granted");
    let fresh = open(&dir);
    for (id, g, who) in &grants {
        let v = fresh.get(*id).unwrap();
        assert_eq!(
            (v.node.status, v.node.generation, v.node.completed_by),
            (Status::Done, *g, Some(*who))
        );
    }
    assert!(fresh.check().unwrap().problems.is_empty());
}

/// A power cut during a shared sync may keep a later record of it and lose an earlier one
/// (the sectors of unsynced writes reach the disk in any order). The later record says it
/// was written before the earlier one was durable, so the store reads as before that sync:
/// not `corrupt`, nothing of the unfinished sync, and the next write lands cleanly.
#[test]
fn a_power_cut_inside_a_shared_sync_drops_the_whole_sync() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = open(&dir);
    upsert(&store, "before").unwrap();
    slow(&dir, 20, 0);
    let names = (0..8).map(|i| format!("shared {i}")).collect();
    for (_, r) in upserts_at_once(&store, names) {
        r.unwrap();
    }
    drop(store);
    let path = dir.join("journal");
    let bytes = std::fs::read(&path).unwrap();
    let starts: Vec<usize> = (1..bytes.len())
        .filter(|&i| bytes[i] == b'#' && bytes[i - 1] == b'\n')
        .collect();
    let records = crate::common::journal_records(&bytes);
    // A record written while the one before it waited for its sync.
    let k = (1..records.len())
        .find(|&k| records[k]["durable"].as_u64().is_some())
        .expect("no two writes shared a sync");
    let seq = records[k]["seq"].as_u64().unwrap();
    assert!(records[k]["durable"].as_u64().unwrap() < seq - 1);
    // The cut: record k-1 never reached the disk, record k did, nothing after it.
    let mut cut = bytes.clone();
    let end = starts.get(k + 1).copied().unwrap_or(bytes.len());
    cut[starts[k - 1]..starts[k]].fill(0);
    cut[end..].fill(0);
    std::fs::write(&path, &cut).unwrap();
    let expect: Vec<String> = records[..k - 1]
        .iter()
        .flat_map(|r| r["nodes"].as_array().cloned().unwrap_or_default())
        .map(|n| n["summary"].as_str().unwrap().to_string())
        .collect();
    let fresh = open(&dir);
    let mut got: Vec<String> = fresh
        .list(&ListFilter::default())
        .expect("the store opens after the cut")
        .into_iter()
        .map(|v| v.node.summary)
        .collect();
    got.sort();
    let mut want = expect.clone();
    want.sort();
    assert_eq!(got, want, "the store reads as before the unfinished sync");
    assert!(fresh.check().unwrap().problems.is_empty());
    upsert(&fresh, "after the cut").unwrap();
    let again = open(&dir);
    assert_eq!(
        again.list(&ListFilter::default()).unwrap().len(),
        want.len() + 1
    );
    assert!(again.check().unwrap().problems.is_empty());
}
