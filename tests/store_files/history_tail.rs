//! A reader of the history that goes on from a cursor (`watch`, `serve`'s streams, Python's
//! `Watch`) reads only what was written since its last look, and still gets every line
//! once, in order: across compactions that move the journal's events into the history file,
//! past lines a compaction cut short wrote twice, over a torn last line, and when the file
//! is replaced by a shorter one.

use crate::common::{flat_plan, unsynced};
use claimdag::model::HistoryLine;
use claimdag::store::HistoryCursor;
use claimdag::{Id, Status, Store};
use std::io::Write;
use std::path::Path;

fn places(lines: &[HistoryLine]) -> Vec<(u64, u32)> {
    lines.iter().map(|l| (l.seq, l.i)).collect()
}

/// Every line after `cur`, read `page` lines at a time.
fn drain(store: &Store, cur: &mut HistoryCursor, page: usize) -> Vec<HistoryLine> {
    let mut out = Vec::new();
    loop {
        let got = store.history_next(cur, page).unwrap();
        assert!(
            got.len() <= page,
            "a page of {page} gave {} lines",
            got.len()
        );
        if got.is_empty() {
            return out;
        }
        out.extend(got);
    }
}

/// A store compacted at every write, with a plan of 40 nodes and `n` of them done.
fn worked(dir: &Path, n: usize) -> Store {
    let store = unsynced(dir, 1);
    store
        .import("", flat_plan(40, |i| format!("node {i}")))
        .unwrap();
    work(&store, n);
    store
}

/// Claims and completes `n` ready nodes.
fn work(store: &Store, n: usize) {
    let me = Id([9; 16]);
    for _ in 0..n {
        let (id, g) = store.claim_next("", me, None, None).unwrap().unwrap();
        store.complete(id, Status::Done, g, Some(me), None).unwrap();
    }
}

fn append(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
}

#[test]
fn a_cursor_reads_every_line_once_across_compactions() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    // A small threshold: the journal is compacted into the history file again and again.
    let store = unsynced(&dir, 1);
    store
        .import("", flat_plan(300, |i| format!("node {i} of a flat plan")))
        .unwrap();
    let me = Id([7; 16]);
    let mut follower = HistoryCursor::after_write(0);
    let mut followed = drain(&store, &mut follower, 7);
    let mut done = 0;
    while let Some((id, g)) = store.claim_next("", me, None, None).unwrap() {
        store.complete(id, Status::Done, g, Some(me), None).unwrap();
        followed.extend(drain(&store, &mut follower, 7));
        done += 1;
        if done == 200 {
            break;
        }
    }
    assert!(
        std::fs::metadata(dir.join("history.jsonl")).unwrap().len() > 0,
        "no compaction moved events into the history file"
    );
    let all = store.history(None).unwrap();
    assert_eq!(places(&followed), places(&all));
    assert_eq!(followed, all);
    // A cursor made late reads the same, in pages of any size.
    for page in [1, 3, 1000] {
        assert_eq!(drain(&store, &mut HistoryCursor::after_write(0), page), all);
    }
    // One that starts after a write gets the writes after it only.
    let mid = all[all.len() / 2].seq;
    let after: Vec<_> = all.iter().filter(|l| l.seq > mid).cloned().collect();
    assert_eq!(
        drain(&store, &mut HistoryCursor::after_write(mid), 5),
        after
    );
    assert_eq!(follower.seq(), all.last().unwrap().seq);
    // One node's history (`log NODE`), read by its lines only, is its part of the whole.
    for id in all.iter().filter_map(|l| l.event.node).step_by(97) {
        let mine: Vec<_> = all
            .iter()
            .filter(|l| l.event.node == Some(id))
            .cloned()
            .collect();
        assert_eq!(store.history(Some(id)).unwrap(), mine);
        let late: Vec<_> = mine.iter().filter(|l| l.seq > mid).cloned().collect();
        assert_eq!(store.history_since(mid, Some(id)).unwrap(), late);
    }
}

#[test]
fn lines_written_twice_and_a_torn_last_line_are_read_as_the_store_reads_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = worked(&dir, 10);
    let path = dir.join("history.jsonl");
    let text = std::fs::read(&path).unwrap();
    let lines: Vec<&[u8]> = text.split_inclusive(|&c| c == b'\n').collect();
    assert!(
        lines.len() > 6,
        "the history file holds {} lines",
        lines.len()
    );
    let mut cur = HistoryCursor::after_write(0);
    let before = drain(&store, &mut cur, 4);
    // A compaction cut short after appending: its lines come again after the file's end.
    for l in &lines[lines.len() - 5..] {
        append(&path, l);
    }
    // And a crash mid-append: a line with no newline.
    append(&path, &lines[0][..lines[0].len() / 2]);
    assert_eq!(
        store.history(None).unwrap(),
        before,
        "the store reads the same history"
    );
    let id = before[3].event.node.unwrap();
    let mine: Vec<_> = before
        .iter()
        .filter(|l| l.event.node == Some(id))
        .cloned()
        .collect();
    assert_eq!(
        store.history(Some(id)).unwrap(),
        mine,
        "one node's, once each"
    );
    assert_eq!(
        drain(&store, &mut cur, 4),
        vec![],
        "nothing new for a follower"
    );
    assert_eq!(drain(&store, &mut HistoryCursor::after_write(0), 4), before);
}

#[test]
fn a_history_file_replaced_by_a_shorter_one_is_read_from_its_start() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = worked(&dir, 10);
    let mut cur = HistoryCursor::after_write(0);
    let all = drain(&store, &mut cur, 1000);
    // The file now holds its first line only (as one rotated away would): the cursor's
    // place in it is past its end.
    let path = dir.join("history.jsonl");
    let text = std::fs::read(&path).unwrap();
    let first = text.iter().position(|&c| c == b'\n').unwrap() + 1;
    std::fs::write(&path, &text[..first]).unwrap();
    work(&store, 1);
    let new = drain(&store, &mut cur, 1000);
    assert!(!new.is_empty(), "the writes after the replacement are read");
    assert!(new.iter().all(|l| l.seq > all.last().unwrap().seq));
    assert_eq!(new.last(), store.history(None).unwrap().last());
}

#[test]
fn a_follower_reads_the_journal_from_where_it_stopped_even_inside_a_record() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    // No compaction: everything stays in the journal.
    let store = unsynced(&dir, u64::MAX / 4);
    let mut follower = HistoryCursor::after_write(0);
    let mut followed = Vec::new();
    let me = Id([3; 16]);
    for round in 0..5 {
        // One record of 30 events, read 7 lines at a time: pages end inside it.
        store
            .import("", flat_plan(30, |i| format!("round {round} node {i}")))
            .unwrap();
        followed.extend(drain(&store, &mut follower, 7));
        let (id, g) = store.claim_next("", me, None, None).unwrap().unwrap();
        store.complete(id, Status::Done, g, Some(me), None).unwrap();
        followed.extend(drain(&store, &mut follower, 7));
    }
    assert_eq!(
        std::fs::metadata(dir.join("history.jsonl"))
            .map(|m| m.len())
            .unwrap_or(0),
        0,
        "a compaction ran"
    );
    assert_eq!(followed, store.history(None).unwrap());
}
