//! SIGKILL torture through the real binary. Several worker threads run random verbs
//! (upsert, link, claim-next, claim, renew, release, complete, reclaim, reopen, archive,
//! unarchive, and reads) on one store, one `claimdag` process at a time each, while a killer
//! thread sends SIGKILL to a random running process at random moments.
//!
//! Each worker logs what every command that returned success implies (a grant of `(id,
//! gen)`, a renew at `gen`, a link, ...) and every command that was killed. Afterwards:
//!
//! - the store opens and `check` passes;
//! - every success is in the store: its event is in `log --json`, its node and links exist;
//! - nothing that failed is: every event of a worker's actor is explained by one of its
//!   successes or by one of its killed commands, never by a refused one, and a link refused
//!   as a cycle is never there;
//! - no node was ever granted to two live holders: every `(id, gen)` grant is unique, the
//!   history replays as a legal sequence of grants and hand-backs ending in the state `list`
//!   shows, and no worker's fenced call at an old generation succeeded after a newer grant
//!   of the node had been returned to another worker.
//!
//! `CLAIMDAG_SOAK=1` (`make soak`) runs thousands of kills instead of a few hundred.

use crate::common::{self, actor, Rng, Store};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const SIGKILL: i32 = 9;
const WORKERS: u64 = 4;
/// Nodes the workers share: ids are minted from the summary, so every worker knows them.
const POOL: usize = 24;
/// The share of commands the killer picks to kill (those that end first are spared).
const KILL_PERCENT: u64 = 30;

fn soak() -> bool {
    std::env::var("CLAIMDAG_SOAK").is_ok_and(|v| !v.is_empty() && v != "0")
}

fn summary(i: usize) -> String {
    format!("torture node {i:02}")
}

/// Every sixth node carries about 48 KiB of labels, so that the journal passes the compaction
/// threshold every few hundred writes and some kills land inside a compaction.
fn labels(i: usize) -> Vec<String> {
    if i.is_multiple_of(6) {
        (0..200)
            .map(|k| format!("n{i}-{k}-{}", "l".repeat(240)))
            .collect()
    } else {
        Vec::new()
    }
}

fn pool_ids() -> Vec<String> {
    (0..POOL)
        .map(|i| claimdag::Id::mint("", "task", None, &summary(i)).hex())
        .collect()
}

/// Running processes the killer may kill. A worker removes its child's pid before reaping
/// it, so a pid here is never one the system has handed to another process. The killer
/// gives each new pid its fate when it first sees it: spared, or killed at a random moment
/// of its first few milliseconds (if it is still running then), so that the share of
/// commands killed does not depend on how loaded the machine is.
#[derive(Default)]
struct Victims {
    pids: Mutex<Vec<(i32, Option<Option<Instant>>)>>,
}

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

/// A command and the monotonic times it was started and had returned, since the test began.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: Duration,
    end: Duration,
}

/// What a command that returned success implies.
#[derive(Debug, Clone)]
enum Success {
    Upsert(String),
    Link {
        p: String,
        c: String,
    },
    Grant {
        id: String,
        gen: u64,
    },
    Renew {
        id: String,
        gen: Option<u64>,
    },
    Release {
        id: String,
        gen: u64,
    },
    Complete {
        id: String,
        gen: u64,
        status: String,
    },
    Cancel {
        id: String,
        gen: u64,
    },
    HandedBack {
        id: String,
        gen: u64,
    },
    Reopen {
        id: String,
        gen: u64,
    },
    Archive(String),
    Unarchive(String),
}

/// A command that was killed: it may have landed or not.
#[derive(Debug, Clone)]
struct Killed {
    verb: &'static str,
    node: Option<String>,
    gen: Option<u64>,
    other: Option<String>,
}

/// One worker's log.
struct Worker<'a> {
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

impl Worker<'_> {
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

    /// One random verb.
    fn step(&mut self) {
        let me = self.me.clone();
        let pick = self.rng.below(100);
        match pick {
            0..=9 => {
                let i = self.rng.below(POOL as u64) as usize;
                let sum = summary(i);
                let labels = labels(i);
                let prio = self.rng.below(3).to_string();
                let mut args = vec!["upsert", "--summary", sum.as_str()];
                for l in &labels {
                    args.push("--label");
                    args.push(l);
                }
                if self.rng.below(3) == 0 {
                    args.extend(["--priority", prio.as_str()]);
                }
                let k = Self::kill_log("upsert", Some(&self.ids[i]), None);
                if let Some((_, out, _, span)) = self.run(&args, &[0], k) {
                    assert_eq!(out.trim(), self.ids[i], "upsert printed another id");
                    self.successes
                        .push((Success::Upsert(out.trim().to_string()), span));
                }
            }
            10..=13 => {
                let a = self.rng.below(POOL as u64) as usize;
                let b = self.rng.below(POOL as u64) as usize;
                // Mostly forward links (lower index first); some backward ones close cycles.
                let (pi, ci) = if self.rng.below(5) == 0 {
                    (a.max(b), a.min(b))
                } else {
                    (a.min(b), a.max(b))
                };
                let (p, c) = (self.ids[pi].clone(), self.ids[ci].clone());
                let soft = self.rng.below(3) == 0;
                let mut args = vec!["link", p.as_str(), c.as_str()];
                if soft {
                    args.insert(1, "--soft");
                }
                let mut k = Self::kill_log("link", Some(&c), None);
                k.other = Some(p.clone());
                if let Some((code, _, err, span)) = self.run(&args, &[0, 2, 3, 4], k) {
                    match code {
                        0 => self.successes.push((Success::Link { p, c }, span)),
                        2 => {
                            assert!(err.contains("cycle"), "{args:?}: {err}");
                            self.cycles.push((p, c));
                        }
                        _ => {}
                    }
                }
            }
            14..=27 => {
                let ttl = self.ttl();
                let args = ["claim-next", "--assignee", &me, "--ttl", ttl];
                let k = Self::kill_log("claim-next", None, None);
                if let Some((code, out, _, span)) = self.run(&args, &[0, 1], k) {
                    if code == 0 {
                        let id = out.split_whitespace().next().expect("id").to_string();
                        let gen = common::parse_gen(&out);
                        self.held.insert(id.clone(), gen);
                        self.successes.push((Success::Grant { id, gen }, span));
                    } else {
                        assert_eq!(out, "", "claim-next with nothing ready printed");
                    }
                }
            }
            28..=35 => {
                let id = self.node();
                let ttl = self.ttl();
                let gen = (self.rng.below(2) == 0).then(|| 1 + self.rng.below(6));
                let gs = gen.map(|g| g.to_string()).unwrap_or_default();
                let mut args = vec!["claim", id.as_str(), "--assignee", &me, "--ttl", ttl];
                if gen.is_some() {
                    args.extend(["--gen", gs.as_str()]);
                }
                let k = Self::kill_log("claim", Some(&id), gen);
                if let Some((code, out, _, span)) = self.run(&args, &[0, 3, 4, 5], k) {
                    if code == 0 {
                        let g = common::parse_gen(&out);
                        if let Some(given) = gen {
                            assert_eq!(g, given + 1, "claim --gen {given} granted {g}");
                        }
                        self.held.insert(id.clone(), g);
                        self.successes.push((Success::Grant { id, gen: g }, span));
                    }
                }
            }
            36..=47 => {
                let (id, g) = self.held_or_random();
                let with_gen = self.rng.below(10) != 0;
                let gs = g.to_string();
                let ttl = self.ttl();
                let mut args = vec!["renew", id.as_str(), "--actor", &me];
                if with_gen {
                    args.extend(["--gen", gs.as_str()]);
                }
                if self.rng.below(2) == 0 {
                    args.extend(["--ttl", ttl]);
                }
                let gen = with_gen.then_some(g);
                let k = Self::kill_log("renew", Some(&id), gen);
                if let Some((code, _, _, span)) = self.run(&args, &[0, 3, 4, 5], k) {
                    if code == 0 {
                        self.successes.push((Success::Renew { id, gen }, span));
                    } else {
                        self.held.remove(&id);
                    }
                }
            }
            48..=55 => {
                let (id, g) = self.held_or_random();
                let gs = g.to_string();
                let args = ["release", id.as_str(), "--actor", &me, "--gen", &gs];
                let k = Self::kill_log("release", Some(&id), Some(g));
                if let Some((code, out, _, span)) = self.run(&args, &[0, 3, 4, 5], k) {
                    self.held.remove(&id);
                    if code == 0 {
                        let ng = common::parse_gen(&out);
                        assert_eq!(ng, g + 1, "release at {g} printed gen={ng}");
                        self.successes
                            .push((Success::Release { id, gen: ng }, span));
                    }
                }
            }
            56..=71 => {
                let (id, g) = self.held_or_random();
                let status = match self.rng.below(10) {
                    0..=6 => "done",
                    7..=8 => "failed",
                    _ => "cancelled",
                };
                let gs = g.to_string();
                let args = [
                    "complete",
                    id.as_str(),
                    "--status",
                    status,
                    "--gen",
                    &gs,
                    "--actor",
                    &me,
                ];
                let mut k = Self::kill_log("complete", Some(&id), Some(g));
                k.other = Some(status.to_string());
                if let Some((code, _, _, span)) = self.run(&args, &[0, 3, 4, 5], k) {
                    self.held.remove(&id);
                    if code == 0 {
                        let status = status.to_string();
                        self.successes
                            .push((Success::Complete { id, gen: g, status }, span));
                    }
                }
            }
            72..=73 => {
                // Cancel a todo node without a claim, at a guessed generation.
                let id = self.node();
                let g = 1 + self.rng.below(6);
                let gs = g.to_string();
                let args = [
                    "complete",
                    id.as_str(),
                    "--status",
                    "cancelled",
                    "--gen",
                    &gs,
                ];
                let k = Self::kill_log("cancel", Some(&id), Some(g));
                if let Some((0, _, _, span)) = self.run(&args, &[0, 3, 4, 5], k) {
                    self.successes.push((Success::Cancel { id, gen: g }, span));
                }
            }
            74..=79 => {
                let lease = ["0", "2s"][self.rng.below(2) as usize];
                let mut args = vec!["--json", "reclaim"];
                if self.rng.below(3) != 0 {
                    args.extend(["--lease", lease]);
                }
                let k = Self::kill_log("reclaim", None, None);
                if let Some((_, out, _, span)) = self.run(&args, &[0], k) {
                    let v: Value = serde_json::from_str(&out).expect("reclaim json");
                    for h in v.as_array().expect("array") {
                        let id = h["id"].as_str().expect("id").to_string();
                        let gen = h["generation"].as_u64().expect("generation");
                        self.successes.push((Success::HandedBack { id, gen }, span));
                    }
                }
            }
            80..=86 => {
                let id = self.node();
                let k = Self::kill_log("reopen", Some(&id), None);
                if let Some((0, out, _, span)) = self.run(&["reopen", &id], &[0, 2, 3], k) {
                    let gen = common::parse_gen(&out);
                    self.successes.push((Success::Reopen { id, gen }, span));
                }
            }
            87..=89 => {
                let id = self.node();
                let k = Self::kill_log("archive", Some(&id), None);
                if let Some((0, out, _, span)) = self.run(&["archive", &id], &[0, 2, 3], k) {
                    assert!(out.starts_with("archived "), "{out}");
                    self.successes.push((Success::Archive(id), span));
                }
            }
            90..=92 => {
                let id = self.node();
                let k = Self::kill_log("unarchive", Some(&id), None);
                if let Some((0, _, _, span)) = self.run(&["unarchive", &id], &[0, 2, 3], k) {
                    self.successes.push((Success::Unarchive(id), span));
                }
            }
            93..=95 => {
                let k = Self::kill_log("read", None, None);
                if let Some((_, out, _, _)) = self.run(&["check"], &[0], k) {
                    assert!(out.starts_with("ok"), "check while writers run: {out}");
                }
            }
            96..=97 => {
                let id = self.node();
                let k = Self::kill_log("read", None, None);
                self.run(&["show", &id], &[0, 3], k);
            }
            _ => {
                let k = Self::kill_log("read", None, None);
                self.run(&["list", "--all"], &[0], k);
            }
        }
    }
}

/// One history event, as `log --json` prints it.
#[derive(Debug, Clone)]
struct Ev {
    seq: u64,
    verb: String,
    node: Option<String>,
    actor: Option<String>,
    gen: Option<u64>,
    detail: Option<String>,
}

fn events(s: &Store) -> Vec<Ev> {
    let log = s.json(&["log"]);
    let str_of = |v: &Value| v.as_str().map(str::to_string);
    log.as_array()
        .expect("log array")
        .iter()
        .map(|e| Ev {
            seq: e["seq"].as_u64().expect("seq"),
            verb: e["verb"].as_str().expect("verb").to_string(),
            node: str_of(&e["node"]),
            actor: str_of(&e["actor"]),
            gen: e["generation"].as_u64(),
            detail: str_of(&e["detail"]),
        })
        .collect()
}

/// What the history says of one node, replayed.
#[derive(Debug, Clone, PartialEq)]
struct Replayed {
    status: String,
    gen: u64,
    holder: Option<String>,
    archived: bool,
}

/// Replays the history node by node, asserting every transition is legal (SPEC section 3):
/// a grant only of an unclaimed node, at the next generation; renew, release and complete
/// only by the holder at its generation; hand-backs and reopens move the generation by one.
fn replay(log: &[Ev]) -> BTreeMap<String, Replayed> {
    let mut nodes: BTreeMap<String, Replayed> = BTreeMap::new();
    for (k, e) in log.iter().enumerate() {
        let Some(id) = &e.node else {
            continue;
        };
        let g = e
            .gen
            .unwrap_or_else(|| panic!("event {k} has no generation: {e:?}"));
        let at = |what: &str| format!("event {k} ({e:?}): {what}");
        if e.verb == "create" {
            assert!(!nodes.contains_key(id), "{}", at("created twice"));
            assert_eq!(g, 1, "{}", at("created at generation 1"));
            nodes.insert(
                id.clone(),
                Replayed {
                    status: "todo".into(),
                    gen: 1,
                    holder: None,
                    archived: false,
                },
            );
            continue;
        }
        let n = nodes
            .get_mut(id)
            .unwrap_or_else(|| panic!("{}", at("a node with no create event")));
        let terminal = matches!(n.status.as_str(), "done" | "failed" | "cancelled");
        assert!(
            !n.archived || e.verb == "unarchive",
            "{}",
            at("an event of an archived node")
        );
        match e.verb.as_str() {
            "update" | "link" | "unlink" => {
                assert_eq!(g, n.gen, "{}", at("generation unchanged"));
            }
            "claim" => {
                assert_eq!(n.status, "todo", "{}", at("granted while not todo"));
                assert_eq!(
                    g,
                    n.gen + 1,
                    "{}",
                    at("a grant moves the generation by one")
                );
                assert!(e.actor.is_some(), "{}", at("a grant without an actor"));
                n.status = "claimed".into();
                n.holder = e.actor.clone();
                n.gen = g;
            }
            "renew" => {
                assert_eq!(n.status, "claimed", "{}", at("renew of an unclaimed node"));
                assert_eq!(g, n.gen, "{}", at("renew at another generation"));
                assert_eq!(e.actor, n.holder, "{}", at("renew by another actor"));
            }
            "release" | "expire" | "reclaim" => {
                assert_eq!(
                    n.status,
                    "claimed",
                    "{}",
                    at("hand-back of an unclaimed node")
                );
                assert_eq!(
                    g,
                    n.gen + 1,
                    "{}",
                    at("a hand-back moves the generation by one")
                );
                assert_eq!(e.actor, n.holder, "{}", at("hand-back names the holder"));
                n.status = "todo".into();
                n.holder = None;
                n.gen = g;
            }
            "complete" => {
                let st = e.detail.clone().expect("complete detail");
                assert_eq!(g, n.gen, "{}", at("complete at another generation"));
                match n.status.as_str() {
                    "claimed" => assert_eq!(e.actor, n.holder, "{}", at("complete by the holder")),
                    "todo" => assert_eq!(st, "cancelled", "{}", at("only a cancel of a todo node")),
                    _ => panic!("{}", at("complete of a finished node")),
                }
                n.status = st;
                n.holder = None;
            }
            "reopen" => {
                assert!(terminal, "{}", at("reopen of an unfinished node"));
                assert_eq!(g, n.gen + 1, "{}", at("reopen moves the generation by one"));
                n.status = "todo".into();
                n.gen = g;
            }
            "archive" => {
                assert!(terminal, "{}", at("archive of an unfinished node"));
                assert_eq!(g, n.gen, "{}", at("archive keeps the generation"));
                n.archived = true;
            }
            "unarchive" => {
                assert!(n.archived, "{}", at("unarchive of a live node"));
                assert_eq!(g, n.gen, "{}", at("unarchive keeps the generation"));
                n.archived = false;
            }
            other => panic!("{}", at(&format!("unknown verb {other}"))),
        }
    }
    nodes
}

/// Removes and returns the index of the first unused event that `want` accepts.
fn take(log: &[Ev], used: &mut [bool], want: impl Fn(&Ev) -> bool) -> Option<usize> {
    let i = (0..log.len()).find(|&i| !used[i] && want(&log[i]))?;
    used[i] = true;
    Some(i)
}

struct Outcome {
    me: String,
    trail: Vec<String>,
    successes: Vec<(Success, Span)>,
    killed: Vec<Killed>,
    cycles: Vec<(String, String)>,
    kills: usize,
    runs: usize,
}

/// One round: a fresh store, the workers and the killer until `target` kills landed.
fn round(round: usize, target: usize, seed_rng: &mut Rng) -> (usize, usize) {
    let s = Store::new();
    let ids = pool_ids();
    for (i, id) in ids.iter().enumerate().take(POOL / 2) {
        assert_eq!(&s.upsert(&summary(i), &[]), id);
    }
    // No cap on claims an actor holds, so that grants are frequent.
    s.ok(&["config", "max_held", "0"]);
    let victims = Victims::default();
    let landed = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let t0 = Instant::now();
    let killer_seed = seed_rng.next();
    let seeds: Vec<u64> = (0..WORKERS).map(|_| seed_rng.next()).collect();
    let (outcomes, sent) = std::thread::scope(|scope| {
        let killer = scope.spawn(|| {
            let mut rng = Rng::seeded(killer_seed);
            let mut sent = 0usize;
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_micros(100 + rng.below(900)));
                let now = Instant::now();
                let mut pids = victims.pids.lock().expect("victims");
                for (pid, fate) in pids.iter_mut() {
                    let when = *fate.get_or_insert_with(|| {
                        (rng.below(100) < KILL_PERCENT)
                            .then(|| now + Duration::from_micros(rng.below(12_000)))
                    });
                    if when.is_some_and(|t| t <= now) {
                        // SAFETY: `pid` is a child that has not been reaped (see Victims).
                        unsafe {
                            libc::kill(*pid, libc::SIGKILL);
                        }
                        *fate = Some(None);
                        sent += 1;
                    }
                }
            }
            sent
        });
        let handles: Vec<_> = (0..WORKERS)
            .map(|w| {
                let (s, ids, victims, landed, stop) = (&s, &ids, &victims, &landed, &stop);
                let seed = seeds[w as usize];
                scope.spawn(move || {
                    let mut worker = Worker {
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
                    };
                    // A bound on the steps so that the loop ends whatever happens; the kill
                    // count is asserted below.
                    let mut steps = 0;
                    while !stop.load(Ordering::SeqCst) && steps < target * 40 {
                        let before = worker.kills;
                        worker.step();
                        steps += 1;
                        if worker.kills > before
                            && landed.fetch_add(worker.kills - before, Ordering::SeqCst)
                                + worker.kills
                                - before
                                >= target
                        {
                            stop.store(true, Ordering::SeqCst);
                        }
                    }
                    stop.store(true, Ordering::SeqCst);
                    Outcome {
                        me: worker.me,
                        trail: worker.trail,
                        successes: worker.successes,
                        killed: worker.killed,
                        cycles: worker.cycles,
                        kills: worker.kills,
                        runs: worker.runs,
                    }
                })
            })
            .collect();
        let outcomes: Vec<Outcome> = handles
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .collect();
        (outcomes, killer.join().expect("killer"))
    });
    let kills: usize = outcomes.iter().map(|o| o.kills).sum();
    let runs: usize = outcomes.iter().map(|o| o.runs).sum();
    let successes: usize = outcomes.iter().map(|o| o.successes.len()).sum();
    eprintln!(
        "round {round}: {kills} processes killed ({sent} SIGKILLs sent), {runs} runs, \
         {successes} successful writes"
    );
    assert!(kills >= target, "only {kills} of {target} kills landed");
    verify(&s, &outcomes);
    (kills, runs)
}

/// The checks of the module comment, on the store after the workers stopped.
fn verify(s: &Store, outcomes: &[Outcome]) {
    let r = s.run(&["check"]);
    assert_eq!(r.code, Some(0), "check: {}{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("ok"), "check: {}", r.stdout);
    let log = events(s);
    let all = s.all();
    let compactions = std::fs::metadata(s.dir.join("history.jsonl")).is_ok();
    let journal = std::fs::metadata(s.dir.join("journal"))
        .map(|m| m.len())
        .unwrap_or(0);
    eprintln!(
        "  {} events, {} nodes, journal {journal} bytes, history.jsonl {}",
        log.len(),
        all.len(),
        if compactions {
            "written (compaction ran)"
        } else {
            "not written"
        }
    );

    // The history is a legal sequence that ends in the state the store shows.
    let replayed = replay(&log);
    for (id, n) in &all {
        let r = replayed
            .get(id)
            .unwrap_or_else(|| panic!("{id} is in the store but has no history"));
        let shown = Replayed {
            status: n["status"].as_str().expect("status").to_string(),
            gen: n["generation"].as_u64().expect("generation"),
            holder: n["holder"].as_str().map(str::to_string),
            archived: n["archived"].as_bool().expect("archived"),
        };
        assert_eq!(&shown, r, "{id}: the store and its replayed history differ");
    }
    assert_eq!(
        replayed.len(),
        all.len(),
        "nodes in the history but not the store"
    );

    // Every grant is unique, and each is in the history under its actor.
    let mut grants: HashMap<(String, u64), (String, Span)> = HashMap::new();
    for o in outcomes {
        for (x, span) in &o.successes {
            if let Success::Grant { id, gen } = x {
                if let Some((other, _)) = grants.insert((id.clone(), *gen), (o.me.clone(), *span)) {
                    panic!(
                        "{id} at generation {gen} was granted to {other} and to {}",
                        o.me
                    );
                }
            }
        }
    }

    // A fenced call at generation g that returned success started before any grant of a
    // later generation of that node had returned to its worker.
    for o in outcomes {
        for (x, span) in &o.successes {
            let (id, g) = match x {
                Success::Grant { id, gen }
                | Success::Renew { id, gen: Some(gen) }
                | Success::Complete { id, gen, .. } => (id, *gen),
                Success::Release { id, gen } => (id, gen - 1),
                _ => continue,
            };
            for ((gid, gg), (who, gspan)) in &grants {
                if gid == id && *gg > g {
                    assert!(
                        span.start < gspan.end,
                        "{} used {id} at generation {g} after {who} had been granted \
                         generation {gg}: {x:?}",
                        o.me
                    );
                }
            }
        }
    }

    // Every success is there: match each to an event of its own.
    let mut used = vec![false; log.len()];
    let is = |e: &Ev, verb: &str, id: &str| e.verb == verb && e.node.as_deref() == Some(id);
    for o in outcomes {
        let me = Some(o.me.as_str());
        for (x, _) in &o.successes {
            let found = match x {
                Success::Upsert(id) => all.contains_key(id).then_some(0),
                Success::Link { p, c } => {
                    // A link that was there already wrote no event: take one if there is.
                    take(&log, &mut used, |e| {
                        is(e, "link", c)
                            && e.detail.as_deref().is_some_and(|d| d.ends_with(p.as_str()))
                    });
                    let n = &all[c];
                    let has = |k: &str| {
                        n[k].as_array()
                            .is_some_and(|v| v.iter().any(|d| d.as_str() == Some(p.as_str())))
                    };
                    (has("deps") || has("soft_deps")).then_some(0)
                }
                Success::Grant { id, gen } => take(&log, &mut used, |e| {
                    is(e, "claim", id) && e.gen == Some(*gen) && e.actor.as_deref() == me
                }),
                Success::Renew { id, gen: Some(g) } => take(&log, &mut used, |e| {
                    is(e, "renew", id) && e.gen == Some(*g) && e.actor.as_deref() == me
                }),
                Success::Renew { .. } => Some(0), // counted below
                Success::Release { id, gen } => take(&log, &mut used, |e| {
                    is(e, "release", id) && e.gen == Some(*gen) && e.actor.as_deref() == me
                }),
                Success::Complete { id, gen, status } => take(&log, &mut used, |e| {
                    is(e, "complete", id)
                        && e.gen == Some(*gen)
                        && e.actor.as_deref() == me
                        && e.detail.as_deref() == Some(status.as_str())
                }),
                // Without --actor a cancel also ends a live claim at that generation; the
                // event then names the holder it ended.
                Success::Cancel { id, gen } => take(&log, &mut used, |e| {
                    is(e, "complete", id)
                        && e.gen == Some(*gen)
                        && e.detail.as_deref() == Some("cancelled")
                }),
                Success::HandedBack { id, gen } => take(&log, &mut used, |e| {
                    (is(e, "reclaim", id) || is(e, "expire", id)) && e.gen == Some(*gen)
                }),
                Success::Reopen { id, gen } => take(&log, &mut used, |e| {
                    is(e, "reopen", id) && e.gen == Some(*gen)
                }),
                // Archiving an archived node writes nothing: its earlier event stays.
                Success::Archive(id) => take(&log, &mut used, |e| is(e, "archive", id))
                    .or_else(|| log.iter().position(|e| is(e, "archive", id))),
                Success::Unarchive(id) => take(&log, &mut used, |e| is(e, "unarchive", id)),
            };
            assert!(
                found.is_some(),
                "{}: a successful write is missing: {x:?}",
                o.me
            );
        }
    }

    // Nothing that failed is: every event a worker's command could have written and no
    // success explains is explained by a killed command of that worker, each used once.
    let owner: HashMap<&str, usize> = outcomes
        .iter()
        .enumerate()
        .map(|(i, o)| (o.me.as_str(), i))
        .collect();
    let mut spent: Vec<Vec<bool>> = outcomes
        .iter()
        .map(|o| vec![false; o.killed.len()])
        .collect();
    let mut spend = |w: usize, pass: u8, ok: &dyn Fn(&Killed) -> Option<u8>| -> bool {
        let k = (0..outcomes[w].killed.len())
            .find(|&k| !spent[w][k] && ok(&outcomes[w].killed[k]) == Some(pass));
        if let Some(k) = k {
            spent[w][k] = true;
        }
        k.is_some()
    };
    // Exact matches first (pass 0), then killed commands that name less (pass 1, 2). A
    // reclaim writes all its hand-backs in one record: the events of one record count once.
    let mut reclaims: BTreeSet<u64> = (0..log.len())
        .filter(|&i| used[i] && log[i].verb == "reclaim")
        .map(|i| log[i].seq)
        .collect();
    let mut unexplained: Vec<usize> = (0..log.len()).filter(|&i| !used[i]).collect();
    // Renews without --gen that returned success wrote an event of some generation of the
    // node: whether the renew events left of one actor and node are explained is a count.
    // With n events left, s such successes, f killed renews without --gen and, per
    // generation, the events left there and the killed renews at it: every success needs an
    // event (s <= n) and every event an explanation (n - sum of min(events at g, killed at g)
    // <= s + f).
    let mut groups: BTreeMap<(String, String), Vec<u64>> = BTreeMap::new();
    unexplained.retain(|&i| {
        let e = &log[i];
        if e.verb != "renew" {
            return true;
        }
        let key = (
            e.actor.clone().unwrap_or_default(),
            e.node.clone().unwrap_or_default(),
        );
        groups.entry(key).or_default().push(e.gen.unwrap_or(0));
        false
    });
    for o in outcomes {
        for (x, _) in &o.successes {
            if let Success::Renew { id, gen: None } = x {
                groups.entry((o.me.clone(), id.clone())).or_default();
            }
        }
    }
    for ((a, id), gens) in &groups {
        let o = outcomes
            .iter()
            .find(|o| &o.me == a)
            .expect("a renew by an actor no worker has");
        let free = o
            .successes
            .iter()
            .filter(|(x, _)| matches!(x, Success::Renew { id: i, gen: None } if i == id))
            .count();
        let killed: Vec<Option<u64>> = o
            .killed
            .iter()
            .filter(|k| k.verb == "renew" && k.node.as_deref() == Some(id.as_str()))
            .map(|k| k.gen)
            .collect();
        let killed_free = killed.iter().filter(|g| g.is_none()).count();
        let mut covered = 0;
        for g in gens.iter().collect::<BTreeSet<_>>() {
            let here = gens.iter().filter(|x| *x == g).count();
            let k = killed.iter().filter(|x| **x == Some(*g)).count();
            covered += here.min(k);
        }
        assert!(
            free <= gens.len(),
            "{a}: {free} renews of {id} without --gen returned success, {} events left for them",
            gens.len()
        );
        assert!(
            gens.len() - covered <= free + killed_free,
            "{a}: renew events of {id} at generations {gens:?} that no success and no killed \
             command explains (a refused renew wrote?)"
        );
    }
    for pass in 0..3u8 {
        unexplained.retain(|&i| {
            let e = &log[i];
            let node = e.node.as_deref();
            let on = |k: &Killed| k.node.as_deref() == node;
            let worker = e.actor.as_deref().and_then(|a| owner.get(a).copied());
            let n = outcomes.len();
            let explained = match e.verb.as_str() {
                "claim" => {
                    let w = worker.expect("a grant to an actor no worker has");
                    spend(w, pass, &|k| match (k.verb, k.gen) {
                        ("claim", Some(g)) if on(k) && e.gen == Some(g + 1) => Some(0),
                        ("claim", None) if on(k) => Some(1),
                        ("claim-next", _) => Some(2),
                        _ => None,
                    })
                }
                "release" => {
                    let w = worker.expect("a release by an actor no worker has");
                    spend(w, pass, &|k| {
                        (k.verb == "release" && on(k) && e.gen == k.gen.map(|g| g + 1)).then_some(0)
                    })
                }
                "complete" => {
                    let by_holder = |k: &Killed| {
                        (k.verb == "complete" && on(k) && e.gen == k.gen && e.detail == k.other)
                            .then_some(0)
                    };
                    let cancel =
                        |k: &Killed| (k.verb == "cancel" && on(k) && e.gen == k.gen).then_some(0);
                    worker.is_some_and(|w| spend(w, pass, &by_holder))
                        || (0..n).any(|w| spend(w, pass, &cancel))
                }
                "reopen" | "unarchive" | "archive" | "link" => {
                    let same = |k: &Killed| {
                        let same_link = e.verb != "link"
                            || k.other.as_ref().is_some_and(|p| {
                                e.detail.as_deref().is_some_and(|d| d.ends_with(p.as_str()))
                            });
                        (k.verb == e.verb && on(k) && same_link).then_some(0)
                    };
                    (0..n).any(|w| spend(w, pass, &same))
                }
                "reclaim" => {
                    reclaims.contains(&e.seq) || {
                        let any = |k: &Killed| (k.verb == "reclaim").then_some(0);
                        let found = (0..n).any(|w| spend(w, pass, &any));
                        if found {
                            reclaims.insert(e.seq);
                        }
                        found
                    }
                }
                // Any write hands back expired claims; creates and updates come from
                // upserts of the pool, killed or not; settings from the setup.
                _ => true,
            };
            !explained
        });
    }
    if let Some(&i) = unexplained.first() {
        let e = &log[i];
        let node = e.node.clone().unwrap_or_default();
        let mut told = String::new();
        for o in outcomes {
            for line in o
                .trail
                .iter()
                .filter(|l| !node.is_empty() && l.contains(&node))
            {
                told.push_str(&format!("{}: {line}\n", &o.me[28..]));
            }
        }
        let history: Vec<&Ev> = log.iter().filter(|f| f.node == e.node).collect();
        panic!(
            "{} event(s) that no success and no killed command explains (a refused command \
             wrote?), the first: {e:?}\nits node's history: {history:#?}\ncommands on it:\n{told}",
            unexplained.len()
        );
    }

    // A link refused as a cycle is never there: links are never removed, so the path that
    // made it a cycle stays.
    for o in outcomes {
        for (p, c) in &o.cycles {
            // A self-link is refused as a cycle before the node is looked up.
            let Some(n) = all.get(c) else {
                continue;
            };
            for k in ["deps", "soft_deps"] {
                assert!(
                    !n[k]
                        .as_array()
                        .is_some_and(|v| v.iter().any(|d| d.as_str() == Some(p.as_str()))),
                    "{c} waits on {p}, a link refused as a cycle"
                );
            }
        }
    }
}

#[test]
fn sigkills_at_random_moments_against_workers_running_random_verbs() {
    let (rounds, per_round) = if soak() { (10, 400) } else { (1, 300) };
    let mut rng = Rng::from_env("torture");
    let mut kills = 0;
    let mut runs = 0;
    for r in 0..rounds {
        let (k, n) = round(r, per_round, &mut rng);
        kills += k;
        runs += n;
    }
    eprintln!("torture: {kills} processes killed in {runs} runs over {rounds} round(s)");
}
