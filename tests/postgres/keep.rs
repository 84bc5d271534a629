//! `history_keep` on PostgreSQL (schema version 16): the lines past the setting move to
//! `history_archive`; `log` and `log NODE` show the live ones, `log --all`, a cursor from
//! the start, `check` and `copy` every line once and in order, with a count of events and
//! with a duration measured on the store's clock; writes racing the moves lose nothing, and
//! a pass held up in the middle of its move keeps no writer or reader waiting.

use super::{cli, psql, schema_of};
use crate::pg;
use claimdag::model::HistoryLine;
use claimdag::store::HistoryCursor;
use claimdag::{Id, Status, Store, Upsert};
use serde_json::Value;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

fn open(url: &str) -> Store {
    Store::open(Some(Path::new(url))).expect("open the store")
}

fn upsert(store: &Store, summary: &str) -> Id {
    store
        .upsert(Upsert {
            summary: summary.to_string(),
            ..Default::default()
        })
        .expect("upsert")
}

/// The `(seq, i)` of each line of a `log --json`.
fn places(log: &Value) -> Vec<(u64, u64)> {
    log.as_array()
        .expect("a JSON array")
        .iter()
        .map(|l| (l["seq"].as_u64().unwrap(), l["i"].as_u64().unwrap()))
        .collect()
}

fn place(lines: &[HistoryLine]) -> Vec<(u64, u32)> {
    lines.iter().map(|l| (l.seq, l.i)).collect()
}

/// Every line once, in order: each place after the one before.
fn in_order_once(lines: &[HistoryLine]) {
    let p = place(lines);
    assert!(p.windows(2).all(|w| w[0] < w[1]), "{p:?}");
}

/// The whole history as a follower reads it from the start, `page` lines at a time.
fn drain(store: &Store, page: usize) -> Vec<HistoryLine> {
    let mut cur = HistoryCursor::after_write(0);
    let mut all = Vec::new();
    loop {
        let lines = store.history_next(&mut cur, page).expect("history_next");
        if lines.is_empty() {
            return all;
        }
        assert!(lines.len() <= page);
        all.extend(lines);
    }
}

fn rows(schema: &str, table: &str) -> usize {
    psql(&format!("SELECT count(*) FROM {schema}.{table}"))
        .parse()
        .unwrap()
}

#[test]
fn a_count_of_events_keeps_that_many_live_and_the_rest_is_still_read_by_log_all() {
    let url = pg::fresh_url();
    let schema = schema_of(&url);
    let store = open(&url);
    let me = Id([7; 16]);
    let ids: Vec<Id> = (0..6).map(|k| upsert(&store, &format!("n{k}"))).collect();
    for _ in 0..3 {
        let (id, g) = store.claim_next("", me, None, None).unwrap().unwrap();
        store.complete(id, Status::Done, g, Some(me), None).unwrap();
    }
    let mut all = store.history(None).unwrap();
    assert_eq!(all.len(), 12);

    cli(&url, &["config", "history_keep", "5"]).ok();
    all.extend(store.history_since(all.last().unwrap().seq, None).unwrap());
    assert_eq!(all.len(), 13, "the config line is live");
    // The setting's change makes a pass due: the write that changed it moved the rest.
    let live = cli(&url, &["--json", "log"]).json();
    let want: Vec<(u64, u64)> = all[8..].iter().map(|l| (l.seq, l.i as u64)).collect();
    assert_eq!(places(&live), want, "{live}");
    assert_eq!(store.history(None).unwrap(), all[8..].to_vec());
    assert_eq!(
        (rows(&schema, "history"), rows(&schema, "history_archive")),
        (5, 8)
    );

    // log --all: every line once, in order.
    let everything = cli(&url, &["--json", "log", "--all"]).json();
    let want: Vec<(u64, u64)> = all.iter().map(|l| (l.seq, l.i as u64)).collect();
    assert_eq!(places(&everything), want, "{everything}");
    let archived = store.history_archived(0, None).unwrap();
    assert_eq!(archived, all);
    in_order_once(&archived);
    let since = all[3].seq;
    assert_eq!(
        store.history_archived(since, None).unwrap(),
        all.iter()
            .filter(|l| l.seq > since)
            .cloned()
            .collect::<Vec<_>>()
    );

    // A node whose lines were all moved: none live, all of them with --all.
    let first = ids[0].hex();
    assert_eq!(
        cli(&url, &["--json", "log", &first]).json(),
        Value::Array(vec![])
    );
    let mine = places(&cli(&url, &["--json", "log", "--all", &first]).json());
    let want: Vec<(u64, u64)> = all
        .iter()
        .filter(|l| l.event.node == Some(ids[0]))
        .map(|l| (l.seq, l.i as u64))
        .collect();
    assert!(!want.is_empty());
    assert_eq!(mine, want);

    // A follower from the start reads both tables, a page at a time.
    for page in [1, 3, 100] {
        assert_eq!(drain(&store, page), all, "pages of {page}");
    }
    let check = cli(&url, &["--json", "check"]).json();
    assert_eq!(check["ok"], true, "{check}");
    assert_eq!(check["events"], 13, "{check}");

    // A copy carries every line.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("copy");
    let dir = dir.to_str().unwrap();
    cli(&url, &["copy", "--from", &url, "--to", dir]).ok();
    assert_eq!(
        places(&cli(dir, &["--json", "log", "--all"]).json()),
        places(&everything)
    );

    // Back to all: nothing more moves, and what moved stays readable.
    cli(&url, &["config", "history_keep", "all"]).ok();
    for k in 0..3 {
        upsert(&store, &format!("later {k}"));
    }
    assert_eq!(rows(&schema, "history_archive"), 8);
    assert_eq!(store.history(None).unwrap().len(), 5 + 4);
    assert_eq!(store.history_archived(0, None).unwrap().len(), 13 + 4);
    assert!(cli(&url, &["check"]).ok().starts_with("ok:"));
}

#[test]
fn a_duration_moves_the_lines_older_than_it_on_the_stores_clock() {
    let url = pg::fresh_url();
    let schema = schema_of(&url);
    let store = open(&url);
    for k in 0..3 {
        upsert(&store, &format!("old {k}"));
    }
    cli(&url, &["config", "history_keep", "1h"]).ok();
    let before = store.history(None).unwrap();
    assert_eq!(before.len(), 4, "nothing is an hour old yet");
    assert_eq!(rows(&schema, "history_archive"), 0);

    // The store's clock two hours ahead (the workspace's last write stamped then, as a
    // host whose clock is ahead leaves it): the next write is decided then, and the lines
    // before it are past the hour.
    psql(&format!(
        "UPDATE {schema}.ws_writes y SET last_now = last_now + 7200000 \
         WHERE (y.name, y.wseq) IN (SELECT name, wseq FROM {schema}.ws_now)"
    ));
    let stepped: u64 = psql(&format!("SELECT max(last_now) FROM {schema}.ws_now"))
        .parse()
        .unwrap();
    let new = upsert(&store, "new");
    let live = store.history(None).unwrap();
    assert_eq!(live.len(), 1, "{live:?}");
    assert_eq!(live[0].event.node, Some(new));
    assert!(live[0].event.at >= stepped);
    let all = store.history_archived(0, None).unwrap();
    assert_eq!(all[..4], before[..]);
    assert_eq!(all[4..], live[..]);
    assert_eq!(drain(&store, 2), all);
    let log = cli(&url, &["--json", "log", "--all"]).json();
    assert_eq!(log.as_array().unwrap().len(), 5, "{log}");
    let check = cli(&url, &["--json", "check"]).json();
    assert_eq!(
        (check["ok"].clone(), check["events"].clone()),
        (true.into(), 5.into())
    );
}

#[test]
fn writes_racing_the_moves_lose_no_line_and_repeat_none() {
    const WRITERS: usize = 4;
    const EACH: usize = 120;
    let url = pg::fresh_url();
    let schema = schema_of(&url);
    let store = open(&url);
    cli(&url, &["config", "history_keep", "40"]).ok();
    let stop = AtomicBool::new(false);
    let (made, configs) = std::thread::scope(|s| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let url = url.clone();
                s.spawn(move || {
                    let store = open(&url);
                    (0..EACH)
                        .map(|k| upsert(&store, &format!("w{w} n{k}")))
                        .collect::<Vec<Id>>()
                })
            })
            .collect();
        // Each change of the setting makes a pass due in the session that wrote it, while
        // the writers go on.
        let changer = s.spawn(|| {
            let store = open(&url);
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                let keep = if n % 2 == 0 { "41" } else { "40" };
                store.set_setting("history_keep", keep).expect("config");
                n += 1;
            }
            n
        });
        let made: Vec<Id> = writers
            .into_iter()
            .flat_map(|w| w.join().expect("a writer"))
            .collect();
        stop.store(true, Ordering::SeqCst);
        (made, changer.join().expect("the changer"))
    });
    assert!(configs > 0);
    eprintln!("history_keep race: {configs} changes of the setting");
    // One line an upsert, one a change of the setting (and the first one's).
    let all = store.history_archived(0, None).unwrap();
    in_order_once(&all);
    assert_eq!(all.len(), made.len() + configs + 1);
    let created: std::collections::BTreeSet<Id> = all
        .iter()
        .filter(|l| l.event.verb == "create")
        .filter_map(|l| l.event.node)
        .collect();
    assert_eq!(created, made.iter().copied().collect());
    assert_eq!(drain(&store, 64), all);
    let moved = rows(&schema, "history_archive");
    let live = rows(&schema, "history");
    assert_eq!(moved + live, all.len());
    assert!(moved > 0 && live >= 40, "{moved} moved, {live} live");
    assert_eq!(store.history(None).unwrap(), all[moved..].to_vec());
    let check = store.check().unwrap();
    assert!(check.problems.is_empty(), "{:?}", check.problems);
    assert_eq!(check.events, all.len());
}

#[test]
fn a_pass_held_up_in_its_move_keeps_no_writer_or_reader_waiting_and_loses_nothing() {
    let url = pg::fresh_url();
    let schema = schema_of(&url);
    let store = open(&url);
    for k in 0..10 {
        upsert(&store, &format!("n{k}"));
    }
    cli(&url, &["config", "history_keep", "3"]).ok();
    assert_eq!(rows(&schema, "history_archive"), 8);
    // Another session keeps the archive from being written to: the next pass stops at its
    // move, in the middle of its transaction.
    let mut holder = postgres::Client::connect(pg::url(), postgres::NoTls).expect("connect");
    let mut hold = holder.transaction().expect("begin");
    hold.batch_execute(&format!(
        "LOCK TABLE {schema}.history_archive IN SHARE MODE"
    ))
    .expect("lock the archive");
    let mut config = crate::common::command()
        .arg("--dir")
        .arg(&url)
        .args(["config", "history_keep", "2"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("start claimdag config");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while psql(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' \
         AND query LIKE '%archive_history%'",
    ) != "1"
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the pass never started"
        );
        assert!(config.try_wait().unwrap().is_none(), "the config ended");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Meanwhile: writes and reads of both tables go through.
    let (tx, rx) = std::sync::mpsc::channel();
    let meanwhile = url.clone();
    std::thread::spawn(move || {
        let store = open(&meanwhile);
        let made: Vec<Id> = (0..5)
            .map(|k| upsert(&store, &format!("during {k}")))
            .collect();
        let live = store.history(None).unwrap();
        let all = store.history_archived(0, None).unwrap();
        let _ = tx.send((made, live, all));
    });
    let (made, live, all) = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the writes and reads went through while the pass waited");
    assert_eq!(live.len(), 4 + 5, "{live:?}");
    assert_eq!(all.len(), 17);
    assert!(live
        .iter()
        .rev()
        .take(5)
        .all(|l| made.contains(&l.event.node.unwrap())));
    assert!(config.try_wait().unwrap().is_none(), "the pass still waits");
    hold.commit().expect("let the archive go");
    assert!(config.wait().unwrap().success());
    // The pass moved the two oldest of the lines it counted; nothing else changed.
    let after = store.history_archived(0, None).unwrap();
    assert_eq!(after, all);
    in_order_once(&after);
    assert_eq!(
        (rows(&schema, "history_archive"), rows(&schema, "history")),
        (10, 7)
    );
    assert_eq!(store.history(None).unwrap(), all[10..].to_vec());
    let check = store.check().unwrap();
    assert!(check.problems.is_empty(), "{:?}", check.problems);
    assert_eq!(check.events, 17);
}
