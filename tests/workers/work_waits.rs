//! `claimdag work` and time: it waits for the store to change instead of polling it, waits
//! for scheduled nodes, and with `--on-failure release` hands a failed node back with the
//! store's backoff until its last attempt.

use crate::common::Store;
use crate::work::{finish, start, wait_for, worker};
use serde_json::Value;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// The CPU time (user and system) process `pid` has used so far.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // The fields after the command's name (which may hold spaces) in its parentheses:
    // state is field 3, utime field 14 and stime field 15.
    let rest = &stat[stat.rfind(')').expect("(comm)") + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no memory-safety preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    Duration::from_millis(ticks * 1000 / per_second.max(1))
}

/// Reads the worker's stderr until it holds `text` (at most 30 s); what it read.
fn read_until(w: &mut Child, text: &str) -> String {
    let err = w.stderr.as_mut().expect("stderr piped");
    let mut said = Vec::new();
    let t = Instant::now();
    while !String::from_utf8_lossy(&said).contains(text) {
        let mut buf = [0u8; 256];
        let n = err.read(&mut buf).expect("read stderr");
        assert!(
            n > 0 && t.elapsed() < Duration::from_secs(30),
            "never said {text:?}: {}",
            String::from_utf8_lossy(&said)
        );
        said.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&said).into_owned()
}

fn lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn stop(mut w: Child) -> Option<i32> {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(w.id() as i32, libc::SIGTERM) };
    w.stderr.take();
    finish(w).0
}

#[test]
fn an_idle_worker_uses_no_cpu_and_starts_work_another_process_adds() {
    let s = Store::new();
    // A claim of someone else's may still bring work: the worker waits instead of exiting.
    let held = s.upsert("held elsewhere", &[]);
    s.claim(&held, "name:other", &["--ttl", "1h"]);
    let script = r#"echo "$CLAIMDAG_NODE" >> "$W/ran""#;
    let mut c = worker(&s, "w", &[], script);
    c.stdout(Stdio::null()).stderr(Stdio::piped());
    let mut w = c.spawn().expect("start claimdag work");
    let said = read_until(&mut w, "waiting on 1 claim");
    assert!(said.contains("nothing ready"), "{said}");

    let before = cpu_time(w.id());
    std::thread::sleep(Duration::from_secs(3));
    let used = cpu_time(w.id()) - before;
    assert!(
        used < Duration::from_millis(300),
        "an idle worker used {used:?} of CPU in 3 s: it should sleep until the store changes"
    );
    assert!(w.try_wait().unwrap().is_none(), "still waiting");

    // Another process adds work: the worker wakes and runs it.
    let t = Instant::now();
    let added = s.upsert("added while it waited", &[]);
    wait_for(&s.scratch().join("ran"));
    let took = t.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "started {took:?} after the write"
    );
    let t = Instant::now();
    while s.display(&added) != "done" {
        assert!(t.elapsed() < Duration::from_secs(30), "never completed");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(lines(&s.scratch().join("ran")), [added]);
    assert_eq!(stop(w), Some(143));
    assert_eq!(s.display(&held), "claimed", "another's claim is left alone");
}

#[test]
fn a_scheduled_node_is_work_that_will_come_and_is_run_when_its_time_comes() {
    let s = Store::new();
    let later = s.upsert("not yet", &["--not-before", "+2s"]);
    assert_eq!(s.display(&later), "scheduled");
    let (code, _, err) = finish(start(worker(&s, "w", &["--no-wait"], "true")));
    assert_eq!(code, Some(1), "--no-wait: nothing ready now: {err}");

    let script = r#"echo "$CLAIMDAG_NODE" >> "$W/ran""#;
    let mut c = worker(&s, "w", &[], script);
    c.stdout(Stdio::null()).stderr(Stdio::piped());
    let t = Instant::now();
    let mut w = c.spawn().expect("start claimdag work");
    let said = read_until(&mut w, "scheduled node");
    assert!(said.contains("waiting for 1 scheduled node(s)"), "{said}");
    assert!(said.contains(&later[..8]), "{said}");
    let (code, _, err) = finish(w);
    assert_eq!(code, Some(0), "ran it, then nothing was left: {err}");
    assert!(
        t.elapsed() >= Duration::from_millis(1500),
        "not before its time"
    );
    assert_eq!(
        lines(&s.scratch().join("ran")),
        std::slice::from_ref(&later)
    );
    assert_eq!(s.display(&later), "done");
}

#[test]
fn on_failure_release_hands_back_with_the_backoff_and_fails_the_last_attempt() {
    let s = Store::new();
    let a = s.upsert("fails every time", &[]);
    s.ok(&["config", "retry_delay", "1s"]);
    s.ok(&["config", "max_attempts", "3"]);
    // Each run writes the time it started (ms since the epoch).
    let script = r#"date +%s%3N >> "$W/runs"; exit 5"#;
    let w = start(worker(
        &s,
        "w",
        &["--on-failure", "release", "--json"],
        script,
    ));
    // Between the runs the node is handed back, scheduled for after the backoff.
    let mut seen_scheduled = false;
    let t = Instant::now();
    while lines(&s.scratch().join("runs")).len() < 3 && t.elapsed() < Duration::from_secs(30) {
        seen_scheduled |= s.display(&a) == "scheduled";
        std::thread::sleep(Duration::from_millis(50));
    }
    let (code, out, err) = finish(w);
    assert_eq!(code, Some(8), "{err}");
    assert!(
        seen_scheduled,
        "never seen scheduled between attempts: {err}"
    );
    let outcomes: Vec<String> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["outcome"].to_string())
        .collect();
    assert_eq!(outcomes, [r#""released""#, r#""released""#, r#""failed""#]);
    let runs: Vec<u64> = lines(&s.scratch().join("runs"))
        .iter()
        .map(|l| l.parse().expect("ms"))
        .collect();
    assert_eq!(runs.len(), 3, "{err}");
    // retry_delay x 2^(attempts-1): 1 s after the first, 2 s after the second.
    assert!(runs[1] - runs[0] >= 900, "{runs:?}");
    assert!(runs[2] - runs[1] >= 1900, "{runs:?}");
    let n = s.node(&a);
    assert_eq!(
        (n["status"].as_str(), n["attempts"].as_u64()),
        (Some("failed"), Some(3)),
        "{n}"
    );

    // `fail` is the default's other name: complete failed at once.
    let b = s.upsert("fails once", &[]);
    let (code, _, err) = finish(start(worker(&s, "w", &["--on-failure", "fail"], "exit 1")));
    assert_eq!(code, Some(8), "{err}");
    assert_eq!(s.node(&b)["status"], "failed");
}
