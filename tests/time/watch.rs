//! `claimdag watch`: every committed write of another process, as it happens, and a quiet
//! end when its reader goes away.

use crate::{both, Target};
use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

fn a_watch_prints_another_process_s_writes_as_they_commit(t: &Target) {
    let first = t.upsert("before the watch", &[]);
    let mut w = t.spawn(&["--json", "watch"]);
    let mut lines = BufReader::new(w.stdout.take().unwrap()).lines();
    std::thread::sleep(Duration::from_millis(500));
    let second = t.upsert("while watched", &[]);
    let v: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    // Only what came after the watch started.
    assert_eq!(v["verb"], "create");
    assert_eq!(v["node"], second.as_str(), "{v}");
    t.ok(&["claim", &second, "--assignee", "name:w1"]);
    let v: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(v["verb"], "claim");
    assert_eq!(v["generation"], 2);
    let _ = w.kill();
    let _ = w.wait();
    // --since replays first.
    let mut w = t.spawn(&["watch", "--since", "0"]);
    let mut lines = BufReader::new(w.stdout.take().unwrap()).lines();
    let l = lines.next().unwrap().unwrap();
    assert!(l.contains("create") && l.contains(&first[..8]), "{l}");
    let _ = w.kill();
    let _ = w.wait();
}

#[test]
fn a_watch_prints_another_process_s_writes_embedded() {
    a_watch_prints_another_process_s_writes_as_they_commit(&Target::embedded());
}

#[test]
fn a_watch_prints_another_process_s_writes_postgres() {
    a_watch_prints_another_process_s_writes_as_they_commit(&Target::postgres());
}

#[test]
fn a_watch_whose_reader_goes_away_ends_quietly() {
    for t in both() {
        t.upsert("something", &[]);
        let mut w = t.spawn(&["watch", "--since", "0"]);
        let mut out = BufReader::new(w.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        drop(out); // the reader goes away
        let start = Instant::now();
        let status = loop {
            if let Some(s) = w.try_wait().unwrap() {
                break s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "watch kept running"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(status.code(), Some(0));
        let mut err = String::new();
        std::io::Read::read_to_string(&mut w.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(err, "", "a watch whose reader left printed an error");
    }
}
