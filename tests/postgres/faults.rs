//! Faults under load: the server restarted mid-run as after a crash, connections killed
//! mid-transaction, statement timeouts. Workers (Store handles in threads, one connection
//! each) keep calling `claim_next` + `complete` and record every call that returned success.
//! Afterwards nothing committed is lost, no generation was granted twice, no node has two
//! live holders, and `check` is clean.

use super::{pg, psql};
use claimdag::{Actor, Status, Store, Upsert};
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn open(url: &str) -> Store {
    Store::open(Some(Path::new(url))).expect("open")
}

#[derive(Default)]
struct Seen {
    grants: Vec<(claimdag::Id, u64)>,
    completed: Vec<(claimdag::Id, Actor)>,
    errors: usize,
}

fn workers(
    url: &str,
    n: u8,
    stop: &Arc<AtomicBool>,
    seen: &Arc<Mutex<Seen>>,
) -> Vec<std::thread::JoinHandle<()>> {
    (0..n)
        .map(|w| {
            let (url, stop, seen) = (url.to_string(), stop.clone(), seen.clone());
            std::thread::spawn(move || {
                let s = open(&url);
                let me = Actor::from_name(&format!("fault-worker-{w}")).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    match s.claim_next("", me, None, Some(60_000)) {
                        Ok(Some((id, g))) => {
                            seen.lock().unwrap().grants.push((id, g));
                            match s.complete(id, Status::Done, g, Some(me), None) {
                                Ok(()) => seen.lock().unwrap().completed.push((id, me)),
                                Err(_) => seen.lock().unwrap().errors += 1,
                            }
                        }
                        Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                        Err(e) => {
                            assert_eq!(e.code(), claimdag::Code::Io, "{e}");
                            seen.lock().unwrap().errors += 1;
                            std::thread::sleep(Duration::from_millis(20));
                        }
                    }
                }
            })
        })
        .collect()
}

/// Every completion that returned success is in the store, every grant unique, no two
/// live holders, check clean.
fn verify(url: &str, seen: &Seen) {
    let s = open(url);
    let grants: HashSet<_> = seen.grants.iter().copied().collect();
    assert_eq!(
        grants.len(),
        seen.grants.len(),
        "a generation was granted twice"
    );
    for (id, who) in &seen.completed {
        let v = s.get(*id).unwrap();
        assert_eq!(
            (v.node.status, v.node.completed_by),
            (Status::Done, Some(*who)),
            "{id} lost its completion"
        );
    }
    let report = s.check().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}

fn seed(url: &str, n: usize) {
    let s = open(url);
    s.set_setting("max_held", "0").unwrap();
    for i in 0..n {
        s.upsert(Upsert {
            summary: format!("faulty work {i}"),
            ..Upsert::default()
        })
        .unwrap();
    }
}

#[test]
fn a_server_restarted_mid_run_loses_nothing_committed() {
    let (url, _, _turn) = pg::fresh_own();
    seed(&url, 400);
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let handles = workers(&url, 4, &stop, &seen);
    std::thread::sleep(Duration::from_millis(700));
    pg::restart_own();
    std::thread::sleep(Duration::from_millis(1000));
    stop.store(true, Ordering::Relaxed);
    handles.into_iter().for_each(|h| h.join().unwrap());
    let seen = seen.lock().unwrap();
    assert!(
        !seen.completed.is_empty() && seen.errors > 0,
        "work ran on both sides of the crash"
    );
    verify(&url, &seen);
}

#[test]
fn connections_killed_mid_transaction_lose_nothing_committed() {
    let (url, _, _turn) = pg::fresh_own();
    seed(&url, 400);
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let handles = workers(&url, 4, &stop, &seen);
    let killer_url = pg::own_url().to_string();
    for _ in 0..8 {
        std::thread::sleep(Duration::from_millis(150));
        let out = std::process::Command::new("psql")
            .arg(&killer_url)
            .args([
                "-X",
                "-q",
                "-t",
                "-A",
                "-c",
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                    WHERE application_name = 'claimdag' AND pid <> pg_backend_pid()",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    handles.into_iter().for_each(|h| h.join().unwrap());
    let seen = seen.lock().unwrap();
    assert!(
        !seen.completed.is_empty() && seen.errors > 0,
        "{} done, {} errors",
        seen.completed.len(),
        seen.errors
    );
    verify(&url, &seen);
}

#[test]
fn a_statement_timeout_refuses_the_write_and_changes_nothing() {
    let url = pg::fresh_url();
    seed(&url, 3);
    let schema = super::schema_of(&url);
    let before = psql(&format!("SELECT seq FROM {schema}.store"));
    // Another session holds the store's lock; this one gives up after 300 ms.
    let mut holder = std::process::Command::new("psql")
        .arg(pg::url())
        .args([
            "-X",
            "-q",
            "-c",
            &format!(
                "BEGIN; SELECT seq FROM {schema}.store FOR UPDATE; SELECT pg_sleep(3); COMMIT;"
            ),
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let timed = format!("{url}&options=-c%20statement_timeout%3D300");
    let s = open(&timed);
    let e = s
        .upsert(Upsert {
            summary: "blocked".into(),
            ..Upsert::default()
        })
        .unwrap_err();
    assert_eq!(e.code(), claimdag::Code::Io, "{e}");
    assert!(
        e.to_string().contains("statement timeout") || e.to_string().contains("canceling"),
        "{e}"
    );
    holder.wait().unwrap();
    assert_eq!(
        psql(&format!("SELECT seq FROM {schema}.store")),
        before,
        "nothing was written"
    );
    // Once the lock is free the same handle writes.
    s.upsert(Upsert {
        summary: "after".into(),
        ..Upsert::default()
    })
    .unwrap();
    assert!(open(&url).check().unwrap().problems.is_empty());
}

#[test]
fn clients_with_skewed_clocks_agree_on_the_server_clock() {
    // The lease clock is the server's: a handle never asks its own clock, so a claim's
    // renewed_at is the server's time whatever the client's.
    let url = pg::fresh_url();
    let s = open(&url);
    let a = s
        .upsert(Upsert {
            summary: "timed".into(),
            ..Upsert::default()
        })
        .unwrap();
    let me = Actor::from_name("clock").unwrap();
    s.claim(a, me, None, Some(60_000)).unwrap();
    let server_ms: i64 = psql("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint")
        .parse()
        .unwrap();
    let renewed = s.get(a).unwrap().node.renewed_at.unwrap() as i64;
    assert!(
        (server_ms - renewed).abs() < 5_000,
        "renewed_at {renewed} vs server {server_ms}"
    );
    assert_eq!(s.now().unwrap() / 10_000, server_ms as u64 / 10_000);
}
