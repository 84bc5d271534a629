//! `claimdag work -- CMD`: real workers running real commands, stopped by real signals.

use crate::common::{self, Store};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `claimdag --dir <store> work --actor name:NAME <opts> -- sh -c SCRIPT`, with `$W` set to
/// the test's scratch directory for the script.
pub(crate) fn worker(s: &Store, name: &str, opts: &[&str], script: &str) -> Command {
    let mut c = s.command(&["work", "--actor", &format!("name:{name}")]);
    c.args(opts).args(["--", "sh", "-c", script]);
    c.env("W", s.scratch()).current_dir(s.scratch());
    c
}

/// Starts a worker with its output captured.
pub(crate) fn start(mut c: Command) -> Child {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c.spawn().expect("start claimdag work")
}

/// Waits for a started worker (at most a minute): its exit status, stdout and stderr.
pub(crate) fn finish(child: Child) -> (Option<i32>, String, String) {
    let pid = child.id();
    let waiter = std::thread::spawn(move || child.wait_with_output().expect("wait"));
    let t = Instant::now();
    while !waiter.is_finished() {
        if t.elapsed() > Duration::from_secs(60) {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("claimdag work did not finish within a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = waiter.join().expect("waiter");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

fn run(c: Command) -> (Option<i32>, String, String) {
    finish(start(c))
}

/// Waits until `path` exists (at most 30 s).
pub(crate) fn wait_for(path: &Path) {
    let t = Instant::now();
    while !path.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

pub(crate) fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process (or group, for a negative pid) exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Waits until the process (group) `pid` is gone, at most 10 s; false if it never went.
pub(crate) fn gone(pid: i32) -> bool {
    let t = Instant::now();
    while alive(pid) {
        if t.elapsed() > Duration::from_secs(10) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// The pid a command wrote with `echo $$ > FILE`: the shell creates the file before it
/// writes the line, so wait for the whole line, not only for the file.
pub(crate) fn read_pid(path: &Path) -> i32 {
    let t = Instant::now();
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.ends_with('\n') {
            return text.trim().parse().expect("a pid");
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{} never held a pid",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn read(p: PathBuf) -> String {
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

pub(crate) fn events(s: &Store, id: &str) -> Vec<Value> {
    s.json(&["log", id])
        .as_array()
        .expect("log is a list")
        .clone()
}

#[test]
fn three_workers_drain_a_plan_every_node_once_and_after_its_prerequisites() {
    let s = Store::new();
    // 30 nodes in layers: node i waits on i-1 when i is not a multiple of 5, and on i-5.
    let nodes: Vec<Value> = (0..30)
        .map(|i| {
            let mut deps = Vec::new();
            if i % 5 != 0 {
                deps.push(format!("n{}", i - 1));
            }
            if i >= 5 {
                deps.push(format!("n{}", i - 5));
            }
            json!({"key": format!("n{i}"), "summary": format!("step {i}"), "deps": deps})
        })
        .collect();
    let ids = s.import_ok(&json!({ "nodes": nodes }));
    for (id, _) in &ids {
        let deps: Vec<String> = s.node(id)["deps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap().to_string())
            .collect();
        std::fs::write(s.scratch().join(format!("deps-{id}")), deps.join("\n")).unwrap();
    }
    // Each command checks that every prerequisite's command ended before it started.
    let script = r#"echo "$CLAIMDAG_NODE" >> "$W/starts"
        for p in $(cat "$W/deps-$CLAIMDAG_NODE"); do
          [ -e "$W/end-$p" ] || echo "$CLAIMDAG_NODE before $p" >> "$W/violations"
        done
        sleep 0.02
        touch "$W/end-$CLAIMDAG_NODE""#;
    let workers: Vec<Child> = (1..=3)
        .map(|i| start(worker(&s, &format!("w{i}"), &["--ttl", "30s"], script)))
        .collect();
    for w in workers {
        let (code, _, err) = finish(w);
        assert_eq!(code, Some(0), "a worker failed:\n{err}");
        assert!(
            err.contains("nothing left that this worker could do"),
            "{err}"
        );
    }
    assert!(
        !s.scratch().join("violations").exists(),
        "{}",
        read(s.scratch().join("violations"))
    );
    let mut starts: Vec<String> = read(s.scratch().join("starts"))
        .lines()
        .map(String::from)
        .collect();
    starts.sort();
    let before = starts.len();
    starts.dedup();
    assert_eq!((before, starts.len()), (30, 30), "every node ran once");
    for (id, _) in &ids {
        let n = s.node(id);
        assert_eq!(
            (n["status"].as_str(), n["generation"].as_u64()),
            (Some("done"), Some(2)),
            "{n}"
        );
    }
    s.ok(&["check"]);
}

#[test]
fn a_hung_command_past_a_lost_lease_is_killed_and_never_completes() {
    let s = Store::new();
    let a = s.upsert("hang past the lease", &[]);
    // The shell ignores TERM (and so does its sleep): it takes the KILL after the grace.
    let script = r#"trap "" TERM; echo $$ > "$W/pid"; sleep 60"#;
    let w = start(worker(
        &s,
        "stalled",
        &["--ttl", "1s", "--grace", "300ms", "--max", "1"],
        script,
    ));
    let pid = read_pid(&s.scratch().join("pid"));
    s.ok(&["reclaim", "--lease", "0"]);
    assert_eq!(s.claim(&a, "name:fresh", &[]), 4);
    let (code, _, err) = finish(w);
    assert_eq!(code, Some(9), "a lost lease exits 9:\n{err}");
    assert!(err.contains("lease lost") && err.contains("stale"), "{err}");
    assert!(gone(-pid), "the command's whole process group was stopped");
    let n = s.node(&a);
    assert_eq!(
        (n["status"].as_str(), n["generation"].as_u64()),
        (Some("claimed"), Some(4))
    );
    let stalled = s.ok(&["actor", "stalled"]).trim().to_string();
    assert!(
        !events(&s, &a).iter().any(|e| e["verb"] == "complete"),
        "the stalled worker completed nothing: {:?}",
        events(&s, &a)
    );
    assert_ne!(n["holder"].as_str(), Some(stalled.as_str()));
    // The new holder finishes it.
    s.ok(&["complete", &a, "--status", "done", "--gen", "4"]);
}

#[test]
fn a_worker_whose_renewals_keep_failing_stops_its_command_after_a_ttl() {
    let s = Store::new();
    let a = s.upsert("the disk goes away under it", &[]);
    // The worker's first sync (its claim) goes through; every later one fails (EIO), so no
    // renew succeeds: after a whole ttl the lease counts as lost.
    let script =
        r#"trap "echo term > \"$W/term\"; exit 143" TERM; echo $$ > "$W/pid"; sleep 60 & wait"#;
    let mut c = worker(
        &s,
        "cut-off",
        &["--ttl", "1s", "--grace", "2s", "--max", "1"],
        script,
    );
    c.env("CLAIMDAG_SYNC_FAIL_AFTER", "1");
    let w = start(c);
    wait_for(&s.scratch().join("pid"));
    let (code, _, err) = finish(w);
    assert_eq!(code, Some(9), "a lost lease exits 9:\n{err}");
    assert!(err.contains("lease lost"), "{err}");
    // Why: the renewals' I/O error, or (once the claim has run out) a stale generation.
    assert!(
        err.contains("Input/output") || err.contains("stale generation"),
        "{err}"
    );
    assert_eq!(
        read(s.scratch().join("term")).trim(),
        "term",
        "the command got TERM"
    );
    // The worker completed nothing; once its claim runs out, another actor gets the node.
    assert!(
        !events(&s, &a).iter().any(|e| e["verb"] == "complete"),
        "{:?}",
        events(&s, &a)
    );
    assert_eq!(s.node(&a)["status"].as_str(), Some("claimed"));
    let t = Instant::now();
    loop {
        let r = s.run(&["claim", &a, "--assignee", "name:next"]);
        if r.code == Some(0) {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the lost claim never ran out"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    s.ok(&["check"]);
}

#[test]
fn a_failing_command_fails_its_node_or_is_retried_up_to_the_cap() {
    let s = Store::new();
    let a = s.upsert("exits 3", &[]);
    let (code, out, err) = run(worker(&s, "w", &["--json"], "exit 3"));
    assert_eq!(code, Some(8), "{err}");
    let line: Value = serde_json::from_str(out.lines().next().expect("a JSON line")).unwrap();
    assert_eq!(line["outcome"], "failed");
    assert_eq!(line["exit_code"], 3);
    assert_eq!(line["id"], a.as_str());
    let n = s.node(&a);
    assert_eq!(n["status"], "failed");
    assert!(n["note"].as_str().unwrap().contains("exited 3"), "{n}");

    let b = s.upsert("exits 4, three times", &[]);
    s.ok(&["config", "max_attempts", "3"]);
    let script = r#"echo run >> "$W/runs"; exit 4"#;
    let (code, out, err) = run(worker(
        &s,
        "w",
        &["--on-failure", "release", "--json"],
        script,
    ));
    assert_eq!(code, Some(8), "{err}");
    assert_eq!(
        read(s.scratch().join("runs")).lines().count(),
        3,
        "tried up to the cap"
    );
    let outcomes: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(outcomes.len(), 3);
    // Handed back while attempts remain; the last attempt's failure ends the node.
    let words: Vec<&str> = outcomes
        .iter()
        .map(|o| o["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(words, ["released", "released", "failed"], "{out}");
    assert!(outcomes.iter().all(|o| o["id"] == b.as_str()));
    let n = s.node(&b);
    assert_eq!(
        (n["status"].as_str(), n["attempts"].as_u64()),
        (Some("failed"), Some(3))
    );
    assert!(
        n["note"].as_str().unwrap().contains("attempt 3 of 3"),
        "{n}"
    );
    assert!(s.node(&b)["holder"].is_null());
}

#[test]
fn sigterm_to_the_worker_stops_the_command_and_hands_the_claim_back() {
    let s = Store::new();
    let a = s.upsert("long task", &[]);
    let script = r#"trap 'echo got-term > "$W/term"; exit 0' TERM
        touch "$W/started"
        while :; do sleep 0.05; done"#;
    let w = start(worker(&s, "w", &["--grace", "5s"], script));
    wait_for(&s.scratch().join("started"));
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(w.id() as i32, libc::SIGTERM) };
    let (code, _, err) = finish(w);
    assert_eq!(code, Some(143), "128 + SIGTERM:\n{err}");
    assert_eq!(
        read(s.scratch().join("term")).trim(),
        "got-term",
        "the command got TERM"
    );
    assert!(err.contains("interrupted"), "{err}");
    let n = s.node(&a);
    assert_eq!(
        (n["status"].as_str(), n["generation"].as_u64()),
        (Some("todo"), Some(3))
    );
    assert_eq!(s.display(&a), "ready");
    let last = events(&s, &a).pop().unwrap();
    assert_eq!(
        (last["verb"].as_str(), last["generation"].as_u64()),
        (Some("release"), Some(3))
    );
    // Its command's exit 0 after the TERM did not complete the node.
    assert!(!events(&s, &a).iter().any(|e| e["verb"] == "complete"));
}

#[test]
fn a_killed_worker_loses_its_lease_and_the_node_is_granted_again_once() {
    let s = Store::new();
    let a = s.upsert("the worker dies", &[]);
    let script = r#"echo $$ > "$W/pid"; sleep 60"#;
    let mut w = start(worker(&s, "dies", &["--ttl", "3s"], script));
    let pid = read_pid(&s.scratch().join("pid"));
    w.kill().expect("SIGKILL the worker");
    let killed = Instant::now();
    let _ = w.wait();
    // Renewed at most a second before it died: the lease has two seconds left.
    let r = s.run(&["claim-next", "--assignee", "name:second"]);
    assert_eq!(r.code, Some(1), "still held: {}", r.stdout);
    assert!(gone(pid), "the command does not outlive its worker");
    std::thread::sleep(Duration::from_millis(3200).saturating_sub(killed.elapsed()));
    let got = s.json(&["claim-next", "--assignee", "name:second"]);
    assert_eq!(got["id"], a.as_str());
    assert_eq!(got["generation"], 4, "handed back at 3, granted at 4");
    let third = s.run(&["claim-next", "--assignee", "name:third"]);
    assert_eq!(third.code, Some(1), "granted once: {}", third.stdout);
    let claims = events(&s, &a)
        .iter()
        .filter(|e| e["verb"] == "claim")
        .count();
    assert_eq!(claims, 2);
}

#[test]
fn the_node_reaches_the_command_only_through_its_environment() {
    let s = Store::new();
    let evil = "$(touch pwned1) `touch pwned2`; touch pwned3 && echo \"'";
    let a = s.upsert(evil, &[]);
    s.upsert_ws("team", "another workspace", &[]);
    let script = r#"printf '%s' "$CLAIMDAG_SUMMARY" > "$W/summary"; env | grep '^CLAIMDAG_' | sort > "$W/env""#;
    let mut c = worker(&s, "w", &[], script);
    c.env("CLAIMDAG_WORKSPACE", "");
    let (code, _, err) = run(c);
    assert_eq!(code, Some(0), "{err}");
    for f in ["pwned1", "pwned2", "pwned3"] {
        assert!(!s.scratch().join(f).exists(), "{f} was created");
    }
    assert_eq!(read(s.scratch().join("summary")), evil);
    let me = s.ok(&["actor", "w"]).trim().to_string();
    let env = read(s.scratch().join("env"));
    for want in [
        format!("CLAIMDAG_NODE={a}"),
        "CLAIMDAG_GEN=2".to_string(),
        format!("CLAIMDAG_ACTOR={me}"),
        format!("CLAIMDAG_DIR={}", s.dir().display()),
        "CLAIMDAG_WORKSPACE=".to_string(),
    ] {
        assert!(env.lines().any(|l| l == want), "no {want} in\n{env}");
    }
    // The node of the other workspace was not this worker's to take.
    assert_eq!(
        s.ok_ws("team", &["list", "--status", "ready"])
            .lines()
            .count(),
        1
    );
}

#[test]
fn a_worker_waits_for_work_others_hold_and_no_wait_does_not() {
    let s = Store::new();
    let a = s.upsert("held by another worker", &[]);
    let b = s.upsert("waits on it", &[]);
    s.ok(&["link", &a, &b]);
    assert_eq!(s.claim(&a, "name:other", &[]), 2);
    let (code, _, err) = run(worker(&s, "w", &["--no-wait"], "true"));
    assert_eq!(code, Some(1), "nothing ready: {err}");
    assert!(err.contains("nothing ready (--no-wait)"), "{err}");

    let script = r#"echo "$CLAIMDAG_NODE" >> "$W/ran""#;
    let mut c = worker(&s, "w", &[], script);
    c.stderr(Stdio::piped()).stdout(Stdio::null());
    let mut w = c.spawn().expect("start");
    // The worker says it waits, and does not exit while a's claim may unlock b.
    let mut err = w.stderr.take().unwrap();
    let mut said = Vec::new();
    let t = Instant::now();
    while !String::from_utf8_lossy(&said).contains("waiting on 1 claim") {
        let mut buf = [0u8; 256];
        let n = std::io::Read::read(&mut err, &mut buf).expect("read stderr");
        assert!(
            n > 0 && t.elapsed() < Duration::from_secs(30),
            "{}",
            String::from_utf8_lossy(&said)
        );
        said.extend_from_slice(&buf[..n]);
    }
    assert!(w.try_wait().unwrap().is_none(), "still waiting");
    s.ok(&["complete", &a, "--status", "done", "--gen", "2"]);
    let status = {
        let t = Instant::now();
        loop {
            if let Some(st) = w.try_wait().unwrap() {
                break st;
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "the worker never took b"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    assert_eq!(status.code(), Some(0));
    assert_eq!(read(s.scratch().join("ran")).trim(), b);
    assert_eq!(s.node(&b)["status"], "done");
}

#[test]
fn a_command_that_cannot_start_hands_the_claim_back() {
    let s = Store::new();
    let a = s.upsert("no such program", &[]);
    let mut c = s.command(&["work", "--actor", "name:w", "--", "/nonexistent/program"]);
    c.current_dir(s.scratch());
    let (code, _, err) = run(c);
    assert_eq!(code, Some(127), "{err}");
    assert!(err.contains("cannot run /nonexistent/program"), "{err}");
    let n = s.node(&a);
    assert_eq!(
        (n["status"].as_str(), n["generation"].as_u64()),
        (Some("todo"), Some(3))
    );
}

#[test]
fn jobs_run_commands_at_once_within_max_held() {
    let s = Store::new();
    for i in 0..3 {
        s.upsert(&format!("parallel {i}"), &[]);
    }
    let r = s.run(&["work", "--actor", "name:w", "--jobs", "3", "--", "true"]);
    assert_eq!(r.code, Some(2), "max_held 1 refuses three at once");
    assert!(r.stderr.contains("max_held is 1"), "{}", r.stderr);
    assert_eq!(
        s.ok(&["list", "--status", "ready"]).lines().count(),
        3,
        "nothing taken"
    );
    s.ok(&["config", "max_held", "3"]);
    // Each command waits until all three run: only three at once can pass.
    let script = r#"touch "$W/running-$CLAIMDAG_NODE"
        i=0
        while [ "$(ls "$W" | grep -c '^running-')" -lt 3 ]; do
          i=$((i+1)); [ $i -gt 600 ] && exit 1; sleep 0.05
        done"#;
    let (code, _, err) = run(worker(&s, "w", &["--jobs", "3"], script));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(s.ok(&["list"]), "", "all three done");
    assert!(common::bin().ends_with("claimdag"));
}

#[test]
fn a_worker_whose_stderr_reader_left_carries_on_with_the_queue() {
    let s = Store::new();
    let a = s.upsert("first", &[]);
    let b = s.upsert("second", &[]);
    // Each command waits until the test has closed the worker's stderr.
    let script = r#"while [ ! -e "$W/closed" ]; do sleep 0.01; done"#;
    let mut c = worker(&s, "w", &[], script);
    c.stdout(Stdio::null()).stderr(Stdio::piped());
    let mut w = c.spawn().expect("start");
    // As `claimdag work ... 2>&1 | head -1`: one line, then the reader is gone.
    let mut err = std::io::BufReader::new(w.stderr.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut err, &mut line).expect("read a line");
    assert!(line.contains("started"), "{line}");
    drop(err);
    std::fs::write(s.scratch().join("closed"), "").unwrap();
    let t = Instant::now();
    let status = loop {
        if let Some(st) = w.try_wait().unwrap() {
            break st;
        }
        if t.elapsed() > Duration::from_secs(60) {
            let _ = w.kill();
            panic!("the worker did not finish within a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
    for id in [&a, &b] {
        assert_eq!(s.node(id)["status"], "done");
    }
}

#[test]
fn releasing_failed_nodes_without_an_attempt_cap_is_refused_up_front() {
    let s = Store::new();
    let a = s.upsert("fails every time", &[]);
    let before = s.files();
    for opts in [
        &["--no-wait", "--on-failure", "release"][..],
        &["--on-failure", "release"][..],
    ] {
        let w = start(worker(&s, "w", opts, r#"echo run >> "$W/runs"; exit 1"#));
        let (code, _, err) = finish(w);
        assert_eq!(code, Some(2), "{opts:?}: {err}");
        assert!(
            err.contains("--on-failure release needs an attempt cap")
                && err.contains("max_attempts"),
            "{err}"
        );
        assert!(!s.scratch().join("runs").exists(), "nothing ran");
        assert_eq!(s.files(), before, "the store is as it was");
    }
    // With a cap it runs, and stops at the cap.
    s.ok(&["config", "max_attempts", "2"]);
    let opts = ["--no-wait", "--on-failure", "release"];
    let (code, _, err) = run(worker(&s, "w", &opts, r#"echo run >> "$W/runs"; exit 1"#));
    assert_eq!(code, Some(8), "{err}");
    assert_eq!(read(s.scratch().join("runs")).lines().count(), 2);
    assert_eq!(s.node(&a)["attempts"], 2);
}
