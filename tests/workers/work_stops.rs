//! `claimdag work` stops the whole of a command: what the command left running after it
//! exited, what ignores TERM, what left its process group, and all of it when the worker
//! itself is killed. A node is never finished or handed back while a process of its command
//! runs. Real processes and signals; each process is checked by its pid.

use crate::common::Store;
use crate::work::{alive, events, finish, gone, read_pid, start, worker};
use std::time::{Duration, Instant};

/// Kills the processes a test started, if a failing test left them running.
struct Reap(Vec<i32>);

impl Drop for Reap {
    fn drop(&mut self) {
        for &pid in &self.0 {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// A command that starts a child which ignores TERM and writes its pid to `$W/pid`, then
/// (`wait`) waits for it, or (`exit`) exits 0 as soon as the child is there.
const TERM_IGNORING_CHILD: &str = r#"sh -c 'trap "" TERM; echo $$ > "$W/pid"; exec sleep 120' &"#;

fn then_wait() -> String {
    format!("{TERM_IGNORING_CHILD} wait")
}

fn then_exit() -> String {
    format!(r#"{TERM_IGNORING_CHILD} while [ ! -s "$W/pid" ]; do sleep 0.01; done; exit 0"#)
}

/// Watches the node while the process `pid` lives: as long as it runs, the node must stay
/// claimed (not finished, not handed back). The node is read first, then the process
/// checked, so a node seen finished with the process alive afterwards is a real overlap.
fn held_while_alive(s: &Store, id: &str, pid: i32) {
    let t = Instant::now();
    loop {
        let n = s.node(id);
        if !alive(pid) {
            return;
        }
        assert_eq!(
            n["status"], "claimed",
            "the node was finished or handed back while process {pid} of its command ran: {n}"
        );
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "process {pid} never went"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_lost_lease_kills_what_ignores_term_after_the_command_itself_exited() {
    let s = Store::new();
    let a = s.upsert("a child of the command ignores TERM", &[]);
    let opts = ["--ttl", "1s", "--grace", "300ms", "--max", "1"];
    let w = start(worker(&s, "stalled", &opts, &then_wait()));
    let pid = read_pid(&s.scratch().join("pid"));
    let _reap = Reap(vec![pid]);
    s.ok(&["reclaim", "--lease", "0"]);
    assert_eq!(s.claim(&a, "name:fresh", &[]), 4);
    // The shell dies of the TERM; its child ignores it and must get the KILL.
    let (code, _, err) = finish(w);
    assert_eq!(code, Some(9), "a lost lease exits 9:\n{err}");
    assert!(
        !alive(pid),
        "claimdag work exited while process {pid} of its command still ran:\n{err}"
    );
    let n = s.node(&a);
    assert_eq!(
        (n["status"].as_str(), n["generation"].as_u64()),
        (Some("claimed"), Some(4))
    );
    assert!(!events(&s, &a).iter().any(|e| e["verb"] == "complete"));
}

#[test]
fn sigterm_to_the_worker_hands_the_claim_back_only_once_its_command_is_all_gone() {
    let s = Store::new();
    let a = s.upsert("stopped with a child that ignores TERM", &[]);
    let w = start(worker(&s, "w", &["--grace", "500ms"], &then_wait()));
    let pid = read_pid(&s.scratch().join("pid"));
    let _reap = Reap(vec![pid]);
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(w.id() as i32, libc::SIGTERM) };
    held_while_alive(&s, &a, pid);
    let (code, _, err) = finish(w);
    assert_eq!(code, Some(143), "128 + SIGTERM:\n{err}");
    assert!(!alive(pid), "process {pid} outlived the worker:\n{err}");
    let n = s.node(&a);
    assert_eq!(
        (n["status"].as_str(), n["generation"].as_u64()),
        (Some("todo"), Some(3)),
        "handed back once the command was gone"
    );
}

#[test]
fn a_command_that_exits_0_leaving_a_child_is_done_once_the_child_was_stopped() {
    let s = Store::new();
    let a = s.upsert("exits 0 and leaves a child running", &[]);
    let w = start(worker(&s, "w", &["--grace", "300ms"], &then_exit()));
    let pid = read_pid(&s.scratch().join("pid"));
    let _reap = Reap(vec![pid]);
    held_while_alive(&s, &a, pid);
    let (code, _, err) = finish(w);
    assert_eq!(code, Some(0), "its exit decides the node:\n{err}");
    assert!(!alive(pid), "process {pid} outlived the worker:\n{err}");
    assert!(err.contains("left processes running"), "{err}");
    assert_eq!(s.node(&a)["status"], "done");
}

#[cfg(target_os = "linux")]
#[test]
fn a_process_that_left_the_command_s_group_is_stopped_too() {
    let s = Store::new();
    let a = s.upsert("a child in a session of its own", &[]);
    let script = format!(r#"setsid {}"#, then_exit());
    let w = start(worker(&s, "w", &["--grace", "300ms"], &script));
    let pid = read_pid(&s.scratch().join("pid"));
    let _reap = Reap(vec![pid]);
    // SAFETY: getsid has no memory-safety preconditions.
    assert_eq!(
        unsafe { libc::getsid(pid) },
        pid,
        "the child left the group"
    );
    held_while_alive(&s, &a, pid);
    let (code, _, err) = finish(w);
    assert_eq!(code, Some(0), "{err}");
    assert!(!alive(pid), "process {pid} outlived the worker:\n{err}");
    assert_eq!(s.node(&a)["status"], "done");
}

#[test]
fn a_worker_killed_with_sigkill_takes_the_whole_command_with_it() {
    let s = Store::new();
    s.upsert("the worker dies mid-command", &[]);
    // `sleep` is a child of the command's shell, not the command itself.
    let script = r#"echo $$ > "$W/shell"; sh -c 'echo $$ > "$W/pid"; exec sleep 61.5'; echo"#;
    let mut w = start(worker(&s, "dies", &["--ttl", "30s"], script));
    let shell = read_pid(&s.scratch().join("shell"));
    let pid = read_pid(&s.scratch().join("pid"));
    let _reap = Reap(vec![shell, pid]);
    w.kill().expect("SIGKILL the worker");
    let _ = w.wait();
    assert!(gone(shell), "the command's shell outlived its worker");
    assert!(gone(pid), "the command's sleep outlived its worker");
}
