//! One worker: runs one `claimdag` process at a time, logs what each success implies and each
//! kill, and keeps track of the claims it holds.

mod verbs;

use super::killer::Victims;
use super::{Killed, Outcome, Span, Success, POOL, SIGKILL};
use crate::common::{actor, Rng, Store};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs::File;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How one command ended.
#[derive(Debug)]
enum End {
    Exit {
        code: i32,
        stdout: String,
        stderr: String,
    },
    Killed,
}

/// One worker's log.
pub(super) struct Worker<'a> {
    s: &'a Store,
    me: String,
    ids: &'a [String],
    rng: Rng,
    victims: &'a Victims,
    t0: Instant,
    out: std::path::PathBuf,
    err: std::path::PathBuf,
    /// Claims this worker believes it holds: id -> generation.
    held: BTreeMap<String, u64>,
    successes: Vec<(Success, Span)>,
    killed: Vec<Killed>,
    cycles: Vec<(String, String)>,
    kills: usize,
    runs: usize,
    /// Every command and how it ended, for messages.
    trail: Vec<String>,
}

fn waitid_nowait(pid: i32) {
    loop {
        // SAFETY: a zeroed siginfo_t is a valid out-parameter for waitid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waits for our own child without reaping it; `info` outlives the call.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return;
        }
        let e = std::io::Error::last_os_error();
        assert_eq!(e.raw_os_error(), Some(libc::EINTR), "waitid: {e}");
    }
}

impl<'a> Worker<'a> {
    /// Worker `w` of a round: actor `0x70 + w`, its output files in the store's scratch
    /// directory.
    pub(super) fn new(
        s: &'a Store,
        w: u64,
        ids: &'a [String],
        seed: u64,
        victims: &'a Victims,
        t0: Instant,
    ) -> Worker<'a> {
        Worker {
            s,
            me: actor(0x70 + w),
            ids,
            rng: Rng::seeded(seed),
            victims,
            t0,
            out: s.scratch().join(format!("out-{w}")),
            err: s.scratch().join(format!("err-{w}")),
            held: BTreeMap::new(),
            successes: Vec::new(),
            killed: Vec::new(),
            cycles: Vec::new(),
            kills: 0,
            runs: 0,
            trail: Vec::new(),
        }
    }

    /// Runs random verbs until `stop`, adding the kills it sees to `landed` and raising
    /// `stop` once `target` kills landed in all; returns its log.
    pub(super) fn work(
        mut self,
        target: usize,
        landed: &AtomicUsize,
        stop: &AtomicBool,
    ) -> Outcome {
        // A bound on the steps so that the loop ends whatever happens; the kill
        // count is asserted below.
        let mut steps = 0;
        while !stop.load(Ordering::SeqCst) && steps < target * 40 {
            let before = self.kills;
            self.step();
            steps += 1;
            if self.kills > before
                && landed.fetch_add(self.kills - before, Ordering::SeqCst) + self.kills - before
                    >= target
            {
                stop.store(true, Ordering::SeqCst);
            }
        }
        stop.store(true, Ordering::SeqCst);
        Outcome {
            me: self.me,
            trail: self.trail,
            successes: self.successes,
            killed: self.killed,
            cycles: self.cycles,
            kills: self.kills,
            runs: self.runs,
        }
    }

    fn now(&self) -> Duration {
        self.t0.elapsed()
    }

    /// Runs one command; the killer may kill it when `killable`.
    fn exec(&mut self, args: &[&str], killable: bool) -> (End, Span) {
        let start = self.now();
        let mut cmd = self.s.command(args);
        cmd.stdout(Stdio::from(File::create(&self.out).expect("stdout file")))
            .stderr(Stdio::from(File::create(&self.err).expect("stderr file")));
        let mut child = cmd.spawn().expect("spawn claimdag");
        let pid = child.id() as i32;
        if killable {
            self.victims.pids.lock().expect("victims").push((pid, None));
        }
        waitid_nowait(pid);
        if killable {
            self.victims
                .pids
                .lock()
                .expect("victims")
                .retain(|&(p, _)| p != pid);
        }
        let status = child.wait().expect("wait");
        let end = self.now();
        self.runs += 1;
        use std::os::unix::process::ExitStatusExt;
        let read = |p: &std::path::Path| {
            String::from_utf8_lossy(&std::fs::read(p).expect("read output")).into_owned()
        };
        let ended = match (status.code(), status.signal()) {
            (Some(code), _) => End::Exit {
                code,
                stdout: read(&self.out),
                stderr: read(&self.err),
            },
            (None, Some(SIGKILL)) => {
                self.kills += 1;
                End::Killed
            }
            other => panic!("{args:?} ended by {other:?}: {}", read(&self.err)),
        };
        (ended, Span { start, end })
    }

    /// Runs a killable command whose exit must be one of `allowed`. Returns the exit code and
    /// stdout, or `None` when the command was killed (which is then logged).
    fn run(
        &mut self,
        args: &[&str],
        allowed: &[i32],
        killed: Killed,
    ) -> Option<(i32, String, String, Span)> {
        match self.exec(args, true) {
            (End::Killed, span) => {
                self.trail
                    .push(format!("{:?} {args:?}: killed", span.start));
                self.killed.push(killed);
                self.resync();
                None
            }
            (
                End::Exit {
                    code,
                    stdout,
                    stderr,
                },
                span,
            ) => {
                assert!(
                    allowed.contains(&code),
                    "{args:?} exited {code} (allowed {allowed:?})\nstdout: {stdout}\nstderr: {stderr}"
                );
                assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
                let said = if code == 0 { &stdout } else { &stderr };
                self.trail.push(format!(
                    "{:?} {args:?}: exit {code}: {}",
                    span.start,
                    said.trim()
                ));
                if code != 0 {
                    assert!(
                        stderr.starts_with("error: ") || (code == 1 && stderr.is_empty()),
                        "{args:?} exited {code}: {stderr}"
                    );
                }
                Some((code, stdout, stderr, span))
            }
        }
    }

    /// After a kill: learn which claims this actor holds now (a killed claim may have
    /// landed, a killed release or complete too). This read is never killed.
    fn resync(&mut self) {
        let me = self.me.clone();
        let (end, _) = self.exec(&["--json", "list", "--holder", &me], false);
        let End::Exit { code, stdout, .. } = end else {
            panic!("an unkillable command was killed");
        };
        assert_eq!(code, 0, "list --holder after a kill: {stdout}");
        let v: Value = serde_json::from_str(&stdout).expect("list json");
        self.held = v
            .as_array()
            .expect("array")
            .iter()
            .filter(|n| n["status"] == "claimed")
            .map(|n| {
                (
                    n["id"].as_str().expect("id").to_string(),
                    n["generation"].as_u64().expect("generation"),
                )
            })
            .collect();
    }

    fn node(&mut self) -> String {
        self.ids[self.rng.below(POOL as u64) as usize].clone()
    }

    fn held_or_random(&mut self) -> (String, u64) {
        if !self.held.is_empty() && self.rng.below(10) < 8 {
            let k = self.rng.below(self.held.len() as u64) as usize;
            let (id, g) = self.held.iter().nth(k).expect("held");
            (id.clone(), *g)
        } else {
            let id = self.node();
            (id, 1 + self.rng.below(6))
        }
    }

    fn ttl(&mut self) -> &'static str {
        // Mostly long leases; some short ones expire while the workers run.
        if self.rng.below(5) == 0 {
            "1500ms"
        } else {
            "10m"
        }
    }

    fn kill_log(verb: &'static str, node: Option<&str>, gen: Option<u64>) -> Killed {
        Killed {
            verb,
            node: node.map(str::to_string),
            gen,
            other: None,
        }
    }
}
