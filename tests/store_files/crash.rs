//! Crashes through the real binary. A writer is killed with SIGKILL at every crash point of
//! the write path (`CLAIMDAG_CRASH_AT`), including the compaction steps, and by external
//! SIGKILLs at random moments while writers loop. After each kill the store reads, `check`
//! passes, and every write whose command returned success is there.
//!
//! The outcome of a killed write is compared with an oracle: the same command run to
//! completion on a copy of the store made just before. A killed write may have landed or
//! not, but nothing else: the store reads exactly as before it, or exactly as the oracle.

use crate::common::{self, actor, copy_dir, parse_gen, Rng, Run, Store};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Stdio;
use std::time::Duration;

const SIGKILL: i32 = 9;

/// The append-path crash points, in write order.
const APPEND_POINTS: [&str; 4] = ["before-append", "mid-append", "after-append", "after-sync"];

/// The compaction crash points, in order.
const COMPACT_POINTS: [&str; 4] = [
    "compact-after-history",
    "compact-before-rename",
    "compact-after-rename",
    "compact-before-truncate",
];

/// The journal is compacted once it holds more than this many bytes (the default tuning).
const COMPACT_MIN_BYTES: u64 = 1 << 20;
/// The journal's header line.
const JOURNAL_HEADER: u64 = "claimdag-journal 1\n".len() as u64;

/// Every node with the fields that depend on when a command ran left out, keyed by id.
pub(super) fn state(s: &Store) -> BTreeMap<String, Value> {
    let r = s.run(&["--json", "list", "--all"]);
    assert_eq!(r.code, Some(0), "list after a crash: {}", r.stderr);
    r.json()
        .as_array()
        .expect("list array")
        .iter()
        .map(|n| {
            let mut n = n.clone();
            if let Some(o) = n.as_object_mut() {
                for k in ["created_at", "updated_at", "claimed_at", "renewed_at"] {
                    o.remove(k);
                }
            }
            (n["id"].as_str().expect("id").to_string(), n)
        })
        .collect()
}

/// The history without times: one tuple per event, in order.
pub(super) fn history(s: &Store) -> Vec<String> {
    history_of(s, &["log"])
}

/// What `log_args` prints (`log`, `log --all`) without times: one tuple per event, in order.
pub(super) fn history_of(s: &Store, log_args: &[&str]) -> Vec<String> {
    s.json(log_args)
        .as_array()
        .expect("log array")
        .iter()
        .map(|e| {
            format!(
                "{} {} {} {} {}",
                e["verb"], e["node"], e["actor"], e["generation"], e["detail"]
            )
        })
        .collect()
}

/// The store reads, `check` passes, and `list` prints one line a live unfinished node.
fn sound(s: &Store, what: &str) {
    let r = s.run(&["list"]);
    assert_eq!(r.code, Some(0), "{what}: list: {}", r.stderr);
    let r = s.run(&["check"]);
    assert_eq!(r.code, Some(0), "{what}: check: {} {}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("ok"), "{what}: check: {}", r.stdout);
}

fn journal_used(s: &Store) -> u64 {
    crate::common::journal_used_len(&s.dir).saturating_sub(JOURNAL_HEADER)
}

/// A store in the shape the append-path scenarios start from.
struct Fixture {
    store: Store,
    ready: String,
    claimed: String,
    done: String,
    spare: String,
}

fn fixture() -> Fixture {
    let store = Store::new();
    let ready = store.upsert("ready node", &[]);
    let claimed = store.upsert("claimed node", &[]);
    assert_eq!(store.claim(&claimed, &actor(7), &[]), 2);
    let done = store.upsert("done node", &[]);
    assert_eq!(store.claim(&done, &actor(9), &[]), 2);
    store.ok(&["complete", &done, "--status", "done", "--gen", "2"]);
    let waits = store.upsert("waits on the ready node", &[]);
    store.ok(&["link", &ready, &waits]);
    let spare = store.upsert("spare node", &[]);
    Fixture {
        store,
        ready,
        claimed,
        done,
        spare,
    }
}

/// One write per verb, each of which reaches the journal.
fn append_ops(f: &Fixture) -> Vec<(&'static str, Vec<String>)> {
    let me = actor(7);
    let other = actor(8);
    let ops: Vec<(&str, Vec<&str>)> = vec![
        (
            "upsert a new node",
            vec!["upsert", "--summary", "fresh node"],
        ),
        (
            "upsert merging fields",
            vec!["upsert", "--summary", "ready node", "--priority", "5"],
        ),
        ("link", vec!["link", &f.spare, &f.ready]),
        ("claim", vec!["claim", &f.ready, "--assignee", &other]),
        (
            "renew",
            vec!["renew", &f.claimed, "--actor", &me, "--ttl", "20m"],
        ),
        (
            "release",
            vec!["release", &f.claimed, "--actor", &me, "--gen", "2"],
        ),
        (
            "complete",
            vec!["complete", &f.claimed, "--status", "done", "--gen", "2"],
        ),
        (
            "cancel a todo node",
            vec!["complete", &f.spare, "--status", "cancelled", "--gen", "1"],
        ),
        ("reopen", vec!["reopen", &f.done]),
        ("claim-next", vec!["claim-next", "--assignee", &other]),
        ("reclaim every claim", vec!["reclaim", "--lease", "0"]),
        ("config", vec!["config", "max_held", "3"]),
    ];
    ops.into_iter()
        .map(|(name, args)| (name, args.into_iter().map(String::from).collect()))
        .collect()
}

/// Runs `args` on `s` with the crash point armed and asserts the process died by SIGKILL.
fn crash_at(s: &Store, point: &str, args: &[String]) -> Run {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = s.run_env(&args, &[("CLAIMDAG_CRASH_AT", point)]);
    assert_eq!(
        r.signal,
        Some(SIGKILL),
        "{args:?} with CLAIMDAG_CRASH_AT={point} was not killed: exit {:?}, {}",
        r.code,
        r.stderr
    );
    r
}

/// The oracle: `args` run to completion on a copy of `s`. Returns the state and history.
fn oracle(s: &Store, args: &[String]) -> (BTreeMap<String, Value>, Vec<String>) {
    let twin = Store::new();
    copy_dir(&s.dir, &twin.dir);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    twin.run(&args).ok();
    (state(&twin), history(&twin))
}

/// Did the killed write land? Asserts the store reads exactly as before it or as the oracle.
fn landed(
    s: &Store,
    before: &(BTreeMap<String, Value>, Vec<String>),
    after: &(BTreeMap<String, Value>, Vec<String>),
    what: &str,
) -> bool {
    let now = (state(s), history(s));
    if now == *after {
        true
    } else if now == *before {
        false
    } else {
        let changed: Vec<&String> = now
            .0
            .keys()
            .chain(after.0.keys())
            .filter(|k| now.0.get(*k) != after.0.get(*k) && now.0.get(*k) != before.0.get(*k))
            .collect();
        panic!(
            "{what}: the store reads neither as before the write nor as after it\n\
             nodes differing from both: {changed:?}\n\
             history now: {} events, before: {}, after: {}",
            now.1.len(),
            before.1.len(),
            after.1.len()
        );
    }
}

/// After a crash, a plain write succeeds and is there, and the store stays sound. Returns
/// the state after that write.
fn write_after(s: &Store, what: &str) -> BTreeMap<String, Value> {
    let events = history(s).len();
    let id = s.upsert(&format!("written after: {what}"), &[]);
    let now = state(s);
    assert!(now.contains_key(&id), "{what}: the next write is missing");
    assert_eq!(
        history(s).len(),
        events + 1,
        "{what}: history after the next write"
    );
    sound(s, what);
    now
}

#[test]
fn crash_points_on_the_append_path() {
    let mut landed_count: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    // Ids are minted from the nodes' fields, and the states compared leave times out: every
    // fixture reads as the probe, so the oracle of each write is computed once.
    let probe = fixture();
    let before = (state(&probe.store), history(&probe.store));
    let ops: Vec<_> = append_ops(&probe)
        .into_iter()
        .map(|(name, args)| {
            let after = oracle(&probe.store, &args);
            assert_ne!(
                before, after,
                "{name}: the write changes nothing to compare"
            );
            (name, args, after)
        })
        .collect();
    for point in APPEND_POINTS {
        for (name, args, after) in &ops {
            let f = fixture();
            let s = &f.store;
            let what = format!("{name} killed at {point}");
            assert_eq!(
                state(s),
                before.0,
                "{what}: the fixture differs from the probe"
            );
            let files = s.files();
            crash_at(s, point, args);
            sound(s, &what);
            let did = landed(s, &before, after, &what);
            if matches!(point, "before-append" | "mid-append") {
                // Nothing, or only a torn record, reached the journal: it must be dropped.
                assert!(
                    !did,
                    "{what}: a write that never reached the journal is there"
                );
                if point == "before-append" {
                    common::assert_files_eq(&files, &s.files(), &what);
                }
            }
            let e = landed_count.entry(point).or_default();
            if did {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
            // The fixture's committed writes are all still there.
            let now = write_after(s, &what);
            for id in [&f.ready, &f.claimed, &f.done, &f.spare] {
                assert!(now.contains_key(id), "{what}: {id} is gone");
            }
        }
    }
    for (point, (yes, no)) in &landed_count {
        eprintln!("{point}: {yes} killed writes landed, {no} did not");
    }
    let total: usize = landed_count.values().map(|(a, b)| a + b).sum();
    assert_eq!(total, APPEND_POINTS.len() * 12);
}

/// A store whose journal holds just under the compaction threshold. Most of it comes from a
/// few nodes with about 270 KiB of labels each (few writes, so that it is quick to build),
/// the rest from upserts with summaries of about 3 KiB. Any further write of more than 200
/// bytes compacts it.
fn near_threshold() -> (Store, Vec<String>) {
    const FULL: u64 = 3000;
    let s = Store::new();
    let target = COMPACT_MIN_BYTES - 200;
    let mut ids = Vec::new();
    let label = "l".repeat(240);
    while journal_used(&s) + 300_000 < target - 100_000 {
        let n = ids.len();
        let labels: Vec<String> = (0..1100).map(|i| format!("{n}-{i}-{label}")).collect();
        let summary = format!("bulk {n}");
        let mut args = vec!["upsert", "--summary", summary.as_str()];
        for l in &labels {
            args.push("--label");
            args.push(l);
        }
        ids.push(s.ok(&args).trim().to_string());
    }
    let write = |ids: &mut Vec<String>, len: u64| {
        let prefix = format!("filler {:04} ", ids.len());
        let summary = format!("{prefix}{}", "x".repeat(len as usize - prefix.len()));
        ids.push(s.upsert(&summary, &[]));
    };
    let used = journal_used(&s);
    write(&mut ids, FULL);
    // What a record adds to its summary, with a little room for longer numbers.
    let overhead = journal_used(&s) - used - FULL + 8;
    loop {
        let room = target - journal_used(&s);
        if room >= FULL + 2 * overhead + 20 {
            write(&mut ids, FULL);
        } else {
            write(&mut ids, room - overhead);
            break;
        }
    }
    let used = journal_used(&s);
    assert!(
        (COMPACT_MIN_BYTES - 400..=COMPACT_MIN_BYTES).contains(&used),
        "the journal holds {used} bytes, not just under the threshold"
    );
    assert!(!s.dir.join("history.jsonl").exists(), "compacted too early");
    (s, ids)
}

#[test]
fn crash_points_during_compaction() {
    let (template, ids) = near_threshold();
    let used = journal_used(&template);
    let other = actor(8);
    let more = format!("one more {}", "z".repeat(500));
    let ops: Vec<(&str, Vec<String>)> = vec![
        (
            "upsert",
            ["upsert", "--summary", &more].map(String::from).to_vec(),
        ),
        (
            "claim",
            ["claim", &ids[0], "--assignee", &other]
                .map(String::from)
                .to_vec(),
        ),
        (
            "cancel",
            ["complete", &ids[1], "--status", "cancelled", "--gen", "1"]
                .map(String::from)
                .to_vec(),
        ),
    ];
    // Every copy of the template reads the same: before and the oracles are computed once.
    let before = (state(&template), history(&template));
    let afters: Vec<_> = ops.iter().map(|(_, a)| oracle(&template, a)).collect();
    let mut iterations = 0;
    for point in COMPACT_POINTS {
        for ((name, args), after) in ops.iter().zip(&afters) {
            let s = Store::new();
            copy_dir(&template.dir, &s.dir);
            let what = format!("{name} killed at {point}");
            crash_at(&s, point, args);
            sound(&s, &what);
            // The write was committed to the journal before compaction began: a crash in
            // any step of the compaction leaves a store that reads as after the write.
            assert!(
                landed(&s, &before, after, &what),
                "{what}: a committed write was lost"
            );
            let mut now = write_after(&s, &what);
            // If that write did not compact the journal, keep writing until a compaction has
            // run to its end, then check again: the history holds every event once.
            if journal_used(&s) > 4096 {
                let events = history(&s).len();
                let mut extra = 0;
                while journal_used(&s) > 4096 && extra < 400 {
                    s.upsert(&format!("{what} {extra} {}", "y".repeat(4000)), &[]);
                    extra += 1;
                }
                assert!(journal_used(&s) <= 4096, "{what}: no compaction ran");
                let h = history(&s);
                assert_eq!(h.len(), events + extra, "{what}: history after compaction");
                sound(&s, &what);
                now = state(&s);
            }
            for id in &ids {
                assert!(now.contains_key(id), "{what}: {id} is gone");
            }
            iterations += 1;
        }
    }
    eprintln!(
        "compaction: {iterations} kills, {} per point, journal {used} bytes at the start",
        ops.len()
    );
}

/// What a looping writer knows about one of its nodes: the state its last successful write
/// left, and the state an unfinished (killed) write may have left instead.
#[derive(Debug, Clone, PartialEq)]
struct Known {
    status: &'static str,
    generation: u64,
}

/// One writer of the random-kill test.
struct Writer<'a> {
    s: &'a Store,
    me: String,
    rng: Rng,
    nodes: BTreeMap<String, Known>,
    kills: usize,
    spared: usize,
    labels: Vec<String>,
}

enum Outcome {
    Ok(String),
    Killed,
}

impl Writer<'_> {
    /// Runs one command, and with probability 1/2 sends SIGKILL after a random delay.
    fn run(&mut self, args: &[&str]) -> Outcome {
        let mut child = self
            .s
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        if self.rng.below(2) == 0 {
            let delay = self.rng.below(15_000);
            std::thread::sleep(Duration::from_micros(delay));
            let _ = child.kill();
        }
        let out = child.wait_with_output().expect("wait");
        let r = Run::from_output(args.iter().map(|s| s.to_string()).collect(), out);
        match (r.code, r.signal) {
            (Some(0), _) => {
                self.spared += 1;
                Outcome::Ok(r.stdout)
            }
            (_, Some(SIGKILL)) => {
                self.kills += 1;
                Outcome::Killed
            }
            _ => panic!("{} failed: exit {:?}: {}", r.shown_args(), r.code, r.stderr),
        }
    }

    /// After a kill: the store is sound and every node is as the writer knows it.
    fn verify(&self, pending: Option<(&str, &Known)>) {
        sound(self.s, "after a SIGKILL");
        let all = self.s.all();
        for (id, k) in &self.nodes {
            let n = all
                .get(id)
                .unwrap_or_else(|| panic!("{id}, upserted with success, is gone"));
            let now = (n["status"].as_str().unwrap_or(""), n["generation"].as_u64());
            let ok = now == (k.status, Some(k.generation))
                || pending
                    .is_some_and(|(p, pk)| p == id && now == (pk.status, Some(pk.generation)));
            assert!(ok, "{id}: known {k:?} (pending {pending:?}), store has {n}");
        }
    }

    fn show(&self, id: &str) -> Value {
        self.s.node(id)
    }

    /// One cycle: create a node, claim it, renew it, complete it.
    fn cycle(&mut self, i: usize) {
        let summary = format!("{} node {i}", &self.me[24..]);
        let labels: Vec<String> = self.labels.clone();
        let mut args = vec!["upsert", "--summary", summary.as_str()];
        for l in &labels {
            args.push("--label");
            args.push(l);
        }
        // Upsert until it reports success (it is idempotent: the same fields, the same id).
        let id = loop {
            match self.run(&args) {
                Outcome::Ok(out) => break out.trim().to_string(),
                Outcome::Killed => self.verify(None),
            }
        };
        let created = Known {
            status: "todo",
            generation: 1,
        };
        self.nodes.entry(id.clone()).or_insert(created);

        let claimed = Known {
            status: "claimed",
            generation: 2,
        };
        let me = self.me.clone();
        let g = loop {
            match self.run(&["claim", &id, "--assignee", &me]) {
                Outcome::Ok(out) => break parse_gen(&out),
                Outcome::Killed => {
                    self.verify(Some((&id, &claimed)));
                    let n = self.show(&id);
                    if n["status"] == "claimed" {
                        // The killed claim landed: the refusal of a retry would name us.
                        assert_eq!(n["holder"], me.as_str());
                        break n["generation"].as_u64().expect("generation");
                    }
                }
            }
        };
        assert_eq!(g, 2, "{id} was claimed before");
        self.nodes.insert(id.clone(), claimed.clone());

        match self.run(&["renew", &id, "--actor", &me, "--gen", "2"]) {
            Outcome::Ok(out) => assert_eq!(out, ""),
            Outcome::Killed => self.verify(None),
        }

        let done = Known {
            status: "done",
            generation: 2,
        };
        loop {
            match self.run(&["complete", &id, "--status", "done", "--gen", "2"]) {
                Outcome::Ok(_) => break,
                Outcome::Killed => {
                    self.verify(Some((&id, &done)));
                    if self.show(&id)["status"] == "done" {
                        break;
                    }
                }
            }
        }
        self.nodes.insert(id, done);
    }
}

const WRITERS: u64 = 2;
const CYCLES: usize = 30;

#[test]
fn random_sigkills_against_looping_writers() {
    let s = Store::new();
    let mut seed_rng = Rng::from_env("random SIGKILLs");
    let results: Vec<(String, BTreeMap<String, Known>, usize, usize)> =
        std::thread::scope(|scope| {
            let handles: Vec<_> = (1..=WRITERS)
                .map(|w| {
                    let s = &s;
                    let seed = seed_rng.next();
                    scope.spawn(move || loop_writer(s, w, seed))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("writer"))
                .collect()
        });

    sound(&s, "at the end");
    let all = s.all();
    let mut kills = 0;
    for (me, nodes, k, spared) in &results {
        eprintln!("writer {me}: {k} processes killed, {spared} ran to the end");
        kills += k;
        assert_eq!(nodes.len(), CYCLES);
        for id in nodes.keys() {
            let n = &all[id];
            assert_eq!(n["status"], "done", "{n}");
            assert_eq!(n["generation"], 2, "{n}");
            assert_eq!(n["completed_by"], me.as_str(), "{n}");
        }
    }
    assert_eq!(all.len(), CYCLES * WRITERS as usize);
    each_write_is_in_the_history_once(&s, all.len());
    let history_bytes = std::fs::metadata(s.dir.join("history.jsonl"))
        .map(|m| m.len())
        .unwrap_or(0);
    eprintln!("{kills} kills landed; history.jsonl holds {history_bytes} bytes");
    assert!(kills > 0, "no kill landed");
    assert!(history_bytes > 0, "the journal was never compacted");
}

/// Writer `w`: `CYCLES` cycles, then its check. Returns its actor, what it knows of its
/// nodes, and how many of its processes were killed and how many ran to the end.
fn loop_writer(s: &Store, w: u64, seed: u64) -> (String, BTreeMap<String, Known>, usize, usize) {
    let me = actor(0xa0 + w);
    // About 10 KiB of labels a node, so that the journal is compacted every hundred writes
    // or so and some kills land inside a compaction.
    let labels = (0..40)
        .map(|i| format!("w{w}-{i}-{}", "l".repeat(230)))
        .collect();
    let mut writer = Writer {
        s,
        me: me.clone(),
        rng: Rng::seeded(seed),
        nodes: BTreeMap::new(),
        kills: 0,
        spared: 0,
        labels,
    };
    for i in 0..CYCLES {
        writer.cycle(i);
    }
    writer.verify(None);
    (me, writer.nodes, writer.kills, writer.spared)
}

/// The history holds each write once: one create, one claim, one complete for each of the
/// store's `nodes` nodes.
fn each_write_is_in_the_history_once(s: &Store, nodes: usize) {
    let log = s.json(&["log"]);
    let log = log.as_array().expect("log");
    let mut seen = BTreeSet::new();
    for e in log {
        let key = format!(
            "{} {} {} {}",
            e["seq"], e["verb"], e["node"], e["generation"]
        );
        assert!(
            seen.insert(key.clone()),
            "event twice in the history: {key}"
        );
    }
    for verb in ["create", "claim", "complete"] {
        let n = log.iter().filter(|e| e["verb"] == verb).count();
        assert_eq!(n, nodes, "{verb} events");
    }
}
