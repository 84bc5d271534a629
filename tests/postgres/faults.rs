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
    for _ in 0..8 {
        std::thread::sleep(Duration::from_millis(150));
        kill_connections();
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
    let before = psql(&format!("SELECT {schema}.change_count()"));
    // Another session holds the workspace's lock; this one gives up after 300 ms.
    let mut holder = super::psql_meanwhile(&format!(
        "BEGIN; SELECT name FROM {schema}.ws FOR UPDATE; SELECT pg_sleep(3); COMMIT;"
    ));
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
        psql(&format!("SELECT {schema}.change_count()")),
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

/// Kills every claimdag connection to the server this binary started; returns how many.
fn kill_connections() -> i64 {
    let out = std::process::Command::new("psql")
        .arg(pg::own_url())
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
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// Kills the claimdag connections of one idle handle, which must be there.
fn kill_idle_connection() {
    assert!(
        kill_connections() >= 1,
        "a claimdag connection was there to kill"
    );
}

#[test]
fn work_finishes_its_node_after_its_connection_was_killed() {
    // The server drops `work`'s connection while its command runs (pg_terminate_backend, as
    // a restart or an idle timeout would): the lease is still valid, so the finished work is
    // sent on a new connection and the node ends done.
    let (url, _dir, _turn) = pg::fresh_own();
    let a = super::cli(&url, &["upsert", "--summary", "outlives its connection"])
        .ok()
        .trim()
        .to_string();
    let mut c = crate::common::command();
    c.args([
        "--dir", &url, "work", "--actor", "name:w1", "--ttl", "30s", "--max", "1",
    ])
    .args(["--", "sh", "-c", "sleep 3"])
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    // Wait until the node is claimed, then kill the connection while the command runs.
    let end = std::time::Instant::now() + Duration::from_secs(60);
    while super::cli(&url, &["--json", "show", &a]).json()["status"] != "claimed" {
        assert!(
            std::time::Instant::now() < end,
            "work never claimed the node"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    kill_idle_connection();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "work: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let node = super::cli(&url, &["--json", "show", &a]).json();
    assert_eq!(node["status"], "done", "{node}");
    assert_eq!(node["generation"], 2, "{node}");
}

#[test]
fn a_lease_object_renews_and_completes_after_its_connection_was_killed() {
    let (url, _dir, _turn) = pg::fresh_own();
    let s = open(&url);
    s.upsert(Upsert {
        summary: "held by a lease object".into(),
        ..Upsert::default()
    })
    .unwrap();
    let me = Actor::from_name("lease-after-kill").unwrap();
    let lease = s
        .lease_next("", me, None, 60_000)
        .unwrap()
        .expect("a ready node");
    // Killed while idle between calls, as between a lease's renewals.
    let idle = || std::thread::sleep(Duration::from_millis(1500));
    kill_idle_connection();
    idle();
    s.renew(lease.id(), me, Some(lease.generation()), None)
        .unwrap();
    kill_idle_connection();
    idle();
    assert!(!lease.is_lost());
    let id = lease.id();
    lease.complete(Status::Done, None).unwrap();
    assert_eq!(open(&url).get(id).unwrap().node.status, Status::Done);
}
