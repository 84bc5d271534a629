//! `claim-next --wait`: a waiter wakes on another process's write and on a scheduled time
//! passing, answers none when its wait runs out, never gets a node another waiter got, and
//! leaves nothing behind when killed.

use crate::{both, finish, Target};
use std::time::{Duration, Instant};

/// The node and generation `claim-next` printed (`ID  gen=G`).
fn claimed(out: &str) -> (String, u64) {
    let mut parts = out.split_whitespace();
    let id = parts.next().expect("an id").to_string();
    let g = parts
        .next()
        .and_then(|g| g.strip_prefix("gen="))
        .and_then(|g| g.parse().ok())
        .expect("gen=G");
    (id, g)
}

fn a_waiter_wakes_when_another_process_completes_a_prerequisite(t: &Target) {
    let a = t.upsert("first", &[]);
    let b = t.upsert("then", &[]);
    t.ok(&["link", &a, &b]);
    let (_, g) = claimed(&t.ok(&["claim-next", "--assignee", "name:w1"]));
    let start = Instant::now();
    let waiter = t.spawn(&["claim-next", "--assignee", "name:w2", "--wait", "60s"]);
    std::thread::sleep(Duration::from_millis(500));
    t.ok(&["complete", &a, "--status", "done", "--gen", &g.to_string()]);
    let r = finish(waiter, "claim-next --wait 60s");
    let (id, gen) = claimed(r.ok());
    assert_eq!((id.as_str(), gen), (b.as_str(), 2), "{}", r.stdout);
    // Woken by the write, not by its wait running out.
    assert!(
        start.elapsed() < Duration::from_secs(45),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_waiter_wakes_on_another_process_s_complete_embedded() {
    a_waiter_wakes_when_another_process_completes_a_prerequisite(&Target::embedded());
}

#[test]
fn a_waiter_wakes_on_another_process_s_complete_postgres() {
    a_waiter_wakes_when_another_process_completes_a_prerequisite(&Target::postgres());
}

#[test]
fn a_waiter_wakes_when_a_scheduled_time_passes_and_not_before() {
    for t in both() {
        let n = t.upsert("later", &["--not-before", "+1500ms"]);
        let start = Instant::now();
        let r = t.run(&["claim-next", "--assignee", "name:w1", "--wait", "60s"]);
        let took = start.elapsed();
        assert_eq!(claimed(r.ok()).0, n);
        assert!(
            took >= Duration::from_millis(1000),
            "granted early: {took:?}"
        );
        assert!(took < Duration::from_secs(45), "{took:?}");
        // The claim cleared it.
        assert!(t.node(&n)["not_before"].is_null());
    }
}

#[test]
fn a_wait_that_runs_out_answers_none_after_the_wait() {
    for t in both() {
        t.upsert("held", &[]);
        t.ok(&["claim-next", "--assignee", "name:w1"]);
        let start = Instant::now();
        let r = t.run(&["claim-next", "--assignee", "name:w2", "--wait", "800ms"]);
        let took = start.elapsed();
        assert_eq!(r.code, Some(1), "{}{}", r.stdout, r.stderr);
        assert_eq!(r.stdout, "");
        assert!(
            took >= Duration::from_millis(800),
            "answered early: {took:?}"
        );
        let j = t.run(&[
            "--json",
            "claim-next",
            "--assignee",
            "name:w2",
            "--wait",
            "300ms",
        ]);
        assert_eq!(j.code, Some(1));
        assert_eq!(j.json(), serde_json::Value::Null);
    }
}

/// 16 processes wait; 16 nodes are made ready one at a time: each is granted once, to one
/// waiter, and every waiter gets one.
fn sixteen_waiters_each_get_one_node(t: &Target) {
    t.ok(&["config", "max_held", "0"]);
    let waiters: Vec<_> = (0..16)
        .map(|k| {
            let who = format!("name:w{k}");
            t.spawn(&["claim-next", "--assignee", &who, "--wait", "90s"])
        })
        .collect();
    std::thread::sleep(Duration::from_millis(700));
    let mut made = Vec::new();
    for k in 0..16 {
        made.push(t.upsert(&format!("node {k}"), &[]));
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut got: Vec<String> = waiters
        .into_iter()
        .map(|w| claimed(finish(w, "claim-next --wait").ok()).0)
        .collect();
    got.sort();
    made.sort();
    assert_eq!(got, made, "each node granted once, each waiter one node");
    let log = t.json(&["log"]);
    let claims = log
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["verb"] == "claim")
        .count();
    assert_eq!(claims, 16, "{log}");
}

#[test]
fn sixteen_waiters_nodes_made_ready_one_at_a_time_each_granted_once_embedded() {
    sixteen_waiters_each_get_one_node(&Target::embedded());
}

#[test]
fn sixteen_waiters_nodes_made_ready_one_at_a_time_each_granted_once_postgres() {
    sixteen_waiters_each_get_one_node(&Target::postgres());
}

#[test]
fn a_waiter_killed_mid_wait_leaves_nothing_behind() {
    for t in both() {
        let n = t.upsert("held", &[]);
        t.ok(&["claim-next", "--assignee", "name:w1"]);
        let before = t.json(&["list", "--all"]);
        let mut w = t.spawn(&["claim-next", "--assignee", "name:w2", "--wait", "60s"]);
        std::thread::sleep(Duration::from_millis(500));
        w.kill().expect("kill the waiter");
        w.wait().expect("reap the waiter");
        assert_eq!(
            t.json(&["list", "--all"]),
            before,
            "a killed waiter changed nodes"
        );
        let check = t.json(&["check"]);
        assert_eq!(check["ok"], true, "{check}");
        // The store works as before: the holder finishes, the next worker claims.
        t.ok(&["complete", &n, "--status", "done", "--gen", "2"]);
        let m = t.upsert("next", &[]);
        assert_eq!(
            claimed(&t.ok(&["claim-next", "--assignee", "name:w3"])).0,
            m
        );
    }
}

/// Context switches, voluntary and not, of every thread of process `pid` so far: a process
/// that looks at the store every few milliseconds switches hundreds of times a second.
fn switches(pid: u32) -> u64 {
    let mut n = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("the process's threads") {
        let status =
            std::fs::read_to_string(task.unwrap().path().join("status")).unwrap_or_default();
        for line in status.lines().filter(|l| l.contains("ctxt_switches:")) {
            n += line
                .split_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    n
}

#[test]
fn a_waiter_sleeps_while_nothing_changes() {
    for t in both() {
        t.upsert("held", &[]);
        t.ok(&["claim-next", "--assignee", "name:w1"]);
        let mut w = t.spawn(&["claim-next", "--assignee", "name:w2", "--wait", "60s"]);
        std::thread::sleep(Duration::from_millis(700));
        let before = switches(w.id());
        std::thread::sleep(Duration::from_secs(2));
        let after = switches(w.id());
        w.kill().expect("kill the waiter");
        w.wait().expect("reap the waiter");
        // Looking every 25 ms would be 80 switches and more; a sleeping waiter makes few.
        assert!(
            after - before <= 10,
            "{} switches in 2 s of waiting ({})",
            after - before,
            t.dir
        );
    }
}
