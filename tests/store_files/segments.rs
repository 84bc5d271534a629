//! The history in segments: once the history file reaches a segment's size a compaction
//! seals it under `history/` with an index; `log NODE`, `--since` and a cursor read the
//! same lines as a read of the whole history, an older store's single history file is
//! sealed as it is, an index that does not fit its segment is read around and written
//! again, `history_keep` moves old segments to a compressed archive that `log --all` and a
//! reader from the start still read, and a SIGKILL at each step of a seal or a move leaves
//! a store that reads the same.

use crate::common::{actor, copy_dir, flat_plan, segmented, Store};
use claimdag::model::HistoryLine;
use claimdag::store::HistoryCursor;
use claimdag::{Id, Status};
use std::path::Path;

const SIGKILL: i32 = 9;

/// Claims and completes (or releases, every third) `n` ready nodes; the ids touched.
fn work(store: &claimdag::Store, n: usize) -> Vec<Id> {
    let me = Id([9; 16]);
    let mut ids = Vec::new();
    for k in 0..n {
        let Some((id, g)) = store.claim_next("", me, None, None).unwrap() else {
            break;
        };
        if k % 3 == 2 {
            store.release(id, me, g).unwrap();
        } else {
            store.complete(id, Status::Done, g, Some(me), None).unwrap();
        }
        ids.push(id);
    }
    ids
}

fn files(dir: &Path, ext: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(ext))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Every way of reading the history agrees with the whole history read line by line.
fn agrees(store: &claimdag::Store, all: &[HistoryLine], ids: &[Id]) {
    for id in ids {
        let mine: Vec<HistoryLine> = all
            .iter()
            .filter(|l| l.event.node == Some(*id))
            .cloned()
            .collect();
        assert!(!mine.is_empty());
        assert_eq!(store.history(Some(*id)).unwrap(), mine, "log of {id}");
        let since = mine[mine.len() / 2].seq;
        let later: Vec<HistoryLine> = mine.iter().filter(|l| l.seq > since).cloned().collect();
        assert_eq!(
            store.history_since(since, Some(*id)).unwrap(),
            later,
            "log of {id} --since {since}"
        );
    }
    let last = all.last().unwrap().seq;
    for since in [0, 1, last / 3, last / 2, last - 5, last] {
        let want: Vec<HistoryLine> = all.iter().filter(|l| l.seq > since).cloned().collect();
        assert_eq!(
            store.history_since(since, None).unwrap(),
            want,
            "--since {since}"
        );
        let mut cur = HistoryCursor::after_write(since);
        let mut got = Vec::new();
        loop {
            let page = store.history_next(&mut cur, 13).unwrap();
            if page.is_empty() {
                break;
            }
            got.extend(page);
        }
        assert_eq!(got, want, "a cursor after write {since}");
    }
}

#[test]
fn every_read_of_a_segmented_history_sees_every_line_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    // Compacted at every write, sealed every 4 KiB: dozens of segments.
    let store = segmented(&dir, 1, 4096);
    store
        .import("", flat_plan(300, |i| format!("node {i} of a flat plan")))
        .unwrap();
    let mut follower = HistoryCursor::after_write(0);
    let mut followed = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..20 {
        ids.extend(work(&store, 10));
        followed.extend(store.history_next(&mut follower, 1_000).unwrap());
    }
    let segs = files(&dir.join("history"), ".jsonl");
    let idx = files(&dir.join("history"), ".idx");
    assert!(segs.len() >= 10, "sealed segments: {segs:?}");
    assert_eq!(segs.len(), idx.len(), "an index beside each segment");
    assert_eq!(segs[0], "0000000001.jsonl");
    // A fresh handle reads the whole history through every segment, with no line twice.
    let fresh = segmented(&dir, 1, 4096);
    let all = fresh.history(None).unwrap();
    let places: Vec<(u64, u32)> = all.iter().map(|l| (l.seq, l.i)).collect();
    assert!(
        places.windows(2).all(|w| w[0] < w[1]),
        "in order, once each"
    );
    assert_eq!(followed, all, "a follower that read as the store grew");
    assert_eq!(all.iter().filter(|l| l.event.verb == "claim").count(), 200);
    agrees(&fresh, &all, &ids[..20]);
    // A reader that knows only the line it read last (`serve` resuming a page), in the
    // middle of a write or at its end, goes on with the next line.
    for k in (0..all.len() - 1).step_by(7).chain([1, 298, 299]) {
        let mut cur = HistoryCursor::after_write(0);
        cur.passed(&all[k]);
        let next = fresh.history_next(&mut cur, 3).unwrap();
        let want = &all[k + 1..(k + 4).min(all.len())];
        assert_eq!(next, want, "after line {k} ({}, {})", all[k].seq, all[k].i);
    }
    let report = fresh.check().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert!(report.notes.is_empty(), "{:?}", report.notes);
}

#[test]
fn an_older_store_with_one_history_file_is_sealed_and_reads_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    {
        // Never sealed: the one history file of a store written before segments.
        let old = segmented(&dir, 1, u64::MAX);
        old.import("", flat_plan(250, |i| format!("node {i}")))
            .unwrap();
        work(&old, 150);
    }
    assert!(!dir.join("history").exists());
    let before = segmented(&dir, 1, u64::MAX).history(None).unwrap();
    // Enough writes for a compaction (past a quarter of the snapshot).
    let store = segmented(&dir, 1, 4096);
    let ids = work(&store, 40);
    // The old file is the first segment, whole.
    let old_len = before.len();
    let segs = files(&dir.join("history"), ".jsonl");
    assert_eq!(segs[0], "0000000001.jsonl");
    assert_eq!(files(&dir.join("history"), ".idx")[0], "0000000001.idx");
    let first = std::fs::read(dir.join("history").join(&segs[0])).unwrap();
    assert!(first.iter().filter(|&&c| c == b'\n').count() >= old_len);
    let all = store.history(None).unwrap();
    assert_eq!(
        all[..before.len()],
        before[..],
        "the old lines, as they were"
    );
    let mut some: Vec<Id> = before.iter().filter_map(|l| l.event.node).take(5).collect();
    some.extend(ids);
    agrees(&store, &all, &some);
}

#[test]
fn an_index_that_does_not_fit_its_segment_is_read_around_then_written_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = segmented(&dir, 1, 4096);
    store
        .import("", flat_plan(100, |i| format!("node {i}")))
        .unwrap();
    let ids = work(&store, 60);
    let all = store.history(None).unwrap();
    let segs = dir.join("history");
    // One index torn (cut short), one gone, one of another segment.
    let idx = files(&segs, ".idx");
    assert!(idx.len() >= 4, "{idx:?}");
    let torn = segs.join(&idx[0]);
    let len = std::fs::metadata(&torn).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&torn)
        .unwrap()
        .set_len(len - 10)
        .unwrap();
    std::fs::remove_file(segs.join(&idx[1])).unwrap();
    std::fs::copy(segs.join(&idx[3]), segs.join(&idx[2])).unwrap();
    let fresh = segmented(&dir, 1, 4096);
    assert_eq!(fresh.history(None).unwrap(), all);
    agrees(&fresh, &all, &ids);
    let report = fresh.check().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.notes.len(), 3, "{:?}", report.notes);
    assert!(report.notes[0].contains(&idx[0]), "{:?}", report.notes);
    // The next compaction writes them again.
    work(&fresh, 30);
    assert!(fresh.check().unwrap().notes.is_empty());
    // An index of the right length that lies is what check's comparison is for.
    let lie = segs.join(&idx[0]);
    let mut bytes = std::fs::read(&lie).unwrap();
    let n = bytes.len();
    bytes[n - 1] ^= 0x55;
    std::fs::write(&lie, bytes).unwrap();
    let report = fresh.check().unwrap();
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert!(
        report.problems[0].contains("disagrees with its segment"),
        "{:?}",
        report.problems
    );
}

#[test]
fn history_keep_moves_old_segments_to_an_archive_that_log_all_still_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = segmented(&dir, 1, 4096);
    store
        .import("", flat_plan(300, |i| format!("node {i}")))
        .unwrap();
    store.set_settings(&[("history_keep", "200")]).unwrap();
    // A follower that reads a little after every few writes, so that the segment it is in
    // is sealed and then archived under it.
    let mut follower = HistoryCursor::after_write(0);
    let mut followed = store.history_next(&mut follower, 7).unwrap();
    let mut ids = Vec::new();
    for _ in 0..40 {
        ids.extend(work(&store, 5));
        followed.extend(store.history_next(&mut follower, 7).unwrap());
    }
    assert!(
        follower.seq() < store.version().unwrap(),
        "the follower lags"
    );
    let archived = files(&dir.join("history").join("archive"), ".jsonl.gz");
    let live = files(&dir.join("history"), ".jsonl");
    assert!(archived.len() >= 5, "archived: {archived:?}");
    assert_eq!(archived[0], "0000000001.jsonl.gz");
    assert!(!live.contains(&"0000000001.jsonl".to_string()));
    let everything = store.history_archived(0, None).unwrap();
    let kept = store.history(None).unwrap();
    assert!(kept.len() < everything.len());
    assert!(kept.len() >= 200, "at least the last 200 events stay live");
    assert_eq!(everything[everything.len() - kept.len()..], kept[..]);
    assert_eq!(
        everything
            .iter()
            .filter(|l| l.event.verb == "claim")
            .count(),
        200
    );
    // A node whose lines were all archived: nothing live, all of it with --all.
    let first = ids[0];
    assert!(store.history(Some(first)).unwrap().is_empty());
    let all_of_first: Vec<HistoryLine> = everything
        .iter()
        .filter(|l| l.event.node == Some(first))
        .cloned()
        .collect();
    assert_eq!(
        store.history_archived(0, Some(first)).unwrap(),
        all_of_first
    );
    // A reader from the start reads the archive first.
    let mut cur = HistoryCursor::after_write(0);
    let mut got = Vec::new();
    loop {
        let page = store.history_next(&mut cur, 50).unwrap();
        if page.is_empty() {
            break;
        }
        got.extend(page);
    }
    assert_eq!(got, everything);
    loop {
        let page = store.history_next(&mut follower, 7).unwrap();
        if page.is_empty() {
            break;
        }
        followed.extend(page);
    }
    assert_eq!(followed, everything, "a follower across seals and moves");
    let report = store.check().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.events as usize, everything.len());
}

/// A CLI store compacted at every write and sealed every 2 KiB, keeping the last 40 events.
fn cli_store() -> Store {
    let s = Store::new().with_env(&[
        ("CLAIMDAG_COMPACT_MIN_BYTES", "1"),
        ("CLAIMDAG_SEGMENT_BYTES", "2048"),
    ]);
    s.ok(&["config", "history_keep", "40"]);
    s
}

/// `log --all` without times.
fn history(s: &Store) -> Vec<String> {
    s.json(&["log", "--all"])
        .as_array()
        .expect("log array")
        .iter()
        .map(|e| format!("{} {} {} {}", e["seq"], e["i"], e["verb"], e["node"]))
        .collect()
}

#[test]
fn a_kill_while_sealing_or_archiving_a_segment_loses_and_repeats_nothing() {
    let me = actor(7);
    for point in [
        "roll-after-index",
        "roll-after-rename",
        "archive-after-rename",
    ] {
        let s = cli_store();
        let mut killed = false;
        let mut ids = Vec::new();
        for k in 0..200 {
            let summary = format!("node {k} {}", "w".repeat(100));
            let before = history(&s);
            let armed = !killed;
            let r = if armed {
                s.run_env(
                    &["upsert", "--summary", &summary],
                    &[("CLAIMDAG_CRASH_AT", point)],
                )
            } else {
                s.run(&["upsert", "--summary", &summary])
            };
            if r.signal == Some(SIGKILL) {
                killed = true;
                // The write was committed before the compaction: it is there, once.
                let after = history(&s);
                assert_eq!(after.len(), before.len() + 1, "{point}: the killed write");
                assert_eq!(after[..before.len()], before[..], "{point}");
                let c = s.run(&["check"]);
                assert_eq!(c.code, Some(0), "{point}: {} {}", c.stdout, c.stderr);
                continue;
            }
            assert_eq!(r.code, Some(0), "{point}: {}", r.stderr);
            ids.push(r.stdout.trim().to_string());
            if killed && k % 5 == 0 {
                let g = s.claim(ids.last().unwrap(), &me, &[]);
                s.ok(&[
                    "complete",
                    ids.last().unwrap(),
                    "--status",
                    "done",
                    "--gen",
                    &g.to_string(),
                ]);
            }
        }
        assert!(killed, "{point} was never reached");
        let all = history(&s);
        let mut sorted = all.clone();
        sorted.dedup();
        assert_eq!(sorted.len(), all.len(), "{point}: a line twice");
        let upserts = all.iter().filter(|l| l.contains("\"create\"")).count();
        assert_eq!(upserts, 200, "{point}: every upsert once");
        // Each node's log is its lines of the whole history.
        for id in ids.iter().step_by(17) {
            let mine: Vec<&String> = all.iter().filter(|l| l.contains(id.as_str())).collect();
            let log: Vec<String> = s
                .json(&["log", id, "--all"])
                .as_array()
                .unwrap()
                .iter()
                .map(|e| format!("{} {} {} {}", e["seq"], e["i"], e["verb"], e["node"]))
                .collect();
            assert_eq!(log.iter().collect::<Vec<_>>(), mine, "{point}: log {id}");
        }
        let c = s.run(&["check"]);
        assert_eq!(c.code, Some(0), "{point}: {} {}", c.stdout, c.stderr);
        assert!(
            s.dir.join("history").join("archive").exists(),
            "{point}: nothing archived"
        );
        let twin = Store::new();
        copy_dir(&s.dir, &twin.dir);
        assert_eq!(history(&twin), all);
    }
}

#[test]
fn a_fifo_in_place_of_a_segment_or_an_index_is_refused_without_hanging() {
    for victim in ["0000000001.jsonl", "0000000001.idx"] {
        let s = cli_store();
        let mut ids = Vec::new();
        while !s.dir.join("history").join("0000000002.jsonl").exists() {
            ids.push(s.upsert(&format!("node {} {}", ids.len(), "v".repeat(200)), &[]));
        }
        let path = s.dir.join("history").join(victim);
        std::fs::remove_file(&path).unwrap();
        crate::common::mkfifo(&path);
        for args in [
            vec!["log", "--all"],
            vec!["log", ids[0].as_str(), "--all"],
            vec!["check"],
        ] {
            let r = s.run(&args);
            assert_eq!(
                r.code,
                Some(7),
                "{victim}: {args:?}: {} {}",
                r.stdout,
                r.stderr
            );
            assert!(
                r.stderr.contains("not a regular file"),
                "{victim}: {}",
                r.stderr
            );
        }
    }
}
