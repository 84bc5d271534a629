//! Waiting on PostgreSQL: every write is announced (`NOTIFY`, sent by the store row's
//! trigger, so only once it committed); a handle listens on one connection of its own
//! however many of its threads wait, and a listening connection that is lost is made again.

use crate::{cli, pg, psql, schema_of};
use claimdag::{Actor, ClaimNextOptions, Store};
use std::time::{Duration, Instant};

/// The listening connections on the store at `url` (its channel is named after its schema).
fn listeners(url: &str) -> i64 {
    let schema = schema_of(url);
    let channel = psql(&format!("SELECT 'claimdag_' || md5('{schema}')"));
    psql(&format!(
        "SELECT count(*) FROM pg_stat_activity WHERE query ILIKE 'LISTEN %{channel}%'"
    ))
    .parse()
    .unwrap()
}

#[test]
fn a_handle_listens_on_one_connection_however_many_threads_wait() {
    let url = pg::fresh_url();
    cli(&url, &["config", "max_held", "0"]).ok();
    let store = Store::open(Some(std::path::Path::new(&url))).unwrap();
    let waiters: Vec<_> = (0..6)
        .map(|k| {
            let s = store.clone();
            std::thread::spawn(move || {
                let me = Actor::from_name(&format!("t{k}")).unwrap();
                let wait = Duration::from_secs(6).into();
                s.claim_next_with(
                    "",
                    me,
                    ClaimNextOptions {
                        wait,
                        ..Default::default()
                    },
                )
            })
        })
        .collect();
    let start = Instant::now();
    while listeners(&url) == 0 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(listeners(&url), 1, "one listening connection per handle");
    let id = cli(&url, &["upsert", "--summary", "one node"])
        .ok()
        .trim()
        .to_string();
    let got: Vec<_> = waiters
        .into_iter()
        .map(|w| w.join().unwrap().unwrap())
        .collect();
    let granted: Vec<_> = got.iter().flatten().collect();
    assert_eq!(granted.len(), 1, "one node, granted once: {got:?}");
    assert_eq!(granted[0].id.hex(), id);
}

#[test]
fn a_lost_listening_connection_is_made_again_and_the_waiter_still_wakes() {
    let url = pg::fresh_url();
    cli(&url, &["upsert", "--summary", "held"]).ok();
    cli(&url, &["claim-next", "--assignee", "name:w1"]).ok();
    let mut waiter = crate::common::command();
    waiter
        .arg("--dir")
        .arg(&url)
        .args(["claim-next", "--assignee", "name:w2", "--wait", "60s"]);
    waiter.stdout(std::process::Stdio::piped());
    let child = waiter.spawn().unwrap();
    let start = Instant::now();
    while listeners(&url) == 0 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let schema = schema_of(&url);
    let channel = psql(&format!("SELECT 'claimdag_' || md5('{schema}')"));
    psql(&format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE query ILIKE 'LISTEN %{channel}%'"
    ));
    let id = cli(
        &url,
        &["upsert", "--summary", "made while it had no listener"],
    )
    .ok()
    .trim()
    .to_string();
    let woke = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(&id));
    // Woken by its fallback look (or the new listener), long before its wait ran out.
    assert!(
        woke.elapsed() < Duration::from_secs(30),
        "{:?}",
        woke.elapsed()
    );
}
