//! A loop over the crash points of the write path (`CLAIMDAG_CRASH_AT`), with random writes
//! on stores in random states. Each write is first run to completion on a copy of the store
//! (the oracle), then on the store with the crash point armed. After the kill the store
//! reads exactly as before the write when the crash came before the record was whole
//! (`before-append`, `mid-append`), and exactly as the oracle from `after-append` on (the
//! record is whole in the file: a crash of the process cannot take it back), including at
//! every step of a compaction. The next write succeeds and `check` passes.
//!
//! A few iterations a point in the normal run (crash.rs drives each point on fixed
//! writes); `CLAIMDAG_SOAK=1` (`make soak`) runs many more.

use crate::common::{self, actor, copy_dir, Rng, Run, Store};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

const SIGKILL: i32 = 9;
const APPEND_POINTS: [&str; 4] = ["before-append", "mid-append", "after-append", "after-sync"];
const COMPACT_POINTS: [&str; 4] = [
    "compact-after-history",
    "compact-before-rename",
    "compact-after-rename",
    "compact-before-truncate",
];
/// The journal is compacted once it holds more than this many bytes (the default tuning).
const COMPACT_MIN_BYTES: u64 = 1 << 20;
const JOURNAL_HEADER: u64 = "claimdag-journal 1\n".len() as u64;

fn soak() -> bool {
    std::env::var("CLAIMDAG_SOAK").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Iterations per crash point.
fn per_point() -> usize {
    if soak() {
        60
    } else {
        3
    }
}

/// Every node without the fields that depend on when a command ran, and the history
/// without times: what a killed write is compared on.
type Seen = (BTreeMap<String, Value>, Vec<String>);

fn seen(s: &Store) -> Seen {
    let nodes = s
        .json(&["list", "--all"])
        .as_array()
        .expect("list array")
        .iter()
        .map(|n| {
            let mut n = n.clone();
            let o = n.as_object_mut().expect("node object");
            for k in ["created_at", "updated_at", "claimed_at", "renewed_at"] {
                o.remove(k);
            }
            (n["id"].as_str().expect("id").to_string(), n)
        })
        .collect();
    let log = s
        .json(&["log"])
        .as_array()
        .expect("log array")
        .iter()
        .map(|e| {
            format!(
                "{} {} {} {} {} {}",
                e["seq"], e["verb"], e["node"], e["actor"], e["generation"], e["detail"]
            )
        })
        .collect();
    (nodes, log)
}

fn journal_used(s: &Store) -> u64 {
    crate::common::journal_used_len(&s.dir).saturating_sub(JOURNAL_HEADER)
}

/// `list` and `check` pass.
fn sound(s: &Store, what: &str) {
    let r = s.run(&["list"]);
    assert_eq!(r.code, Some(0), "{what}: list: {}", r.stderr);
    let r = s.run(&["check"]);
    assert_eq!(r.code, Some(0), "{what}: check: {}{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("ok"), "{what}: check: {}", r.stdout);
}

/// A random write that changes the store, given what it holds now. `None` when the pick
/// does not apply (the caller picks again).
fn random_write(rng: &mut Rng, s: &Store, n: usize, plan: &std::path::Path) -> Option<Vec<String>> {
    let nodes: Vec<Value> = s.all().into_values().collect();
    let pool = Pool::new(&nodes);
    let who = actor(1 + rng.below(3));
    let args: Vec<String> = match rng.below(15) {
        0 => new_node(rng, n),
        1 => reprioritise(rng, &pool)?,
        2 => {
            let todo = pool.with("todo");
            let (p, c) = (pick(rng, &pool.live)?, pick(rng, &todo)?);
            let mut a = vec!["link".into(), id(&p), id(&c)];
            if rng.below(2) == 0 {
                a.insert(1, "--soft".into());
            }
            a
        }
        k @ 3..=6 => lease_write(k, rng, &pool, who)?,
        k @ 7..=9 => finish_write(k, rng, &pool, n)?,
        10 => vec!["reopen".into(), id(&pick(rng, &pool.terminal())?)],
        11 => vec!["archive".into(), id(&pick(rng, &pool.terminal())?)],
        12 => vec!["unarchive".into(), id(&pick(rng, &pool.archived())?)],
        13 => {
            if pool.with("claimed").is_empty() {
                return None;
            }
            vec!["reclaim".into(), "--lease".into(), "0".into()]
        }
        _ => plan_write(rng, &pool, n, plan),
    };
    Some(args)
}

/// The store's nodes, as a random write picks among them.
struct Pool<'a> {
    nodes: &'a [Value],
    /// The nodes not archived.
    live: Vec<&'a Value>,
}

impl<'a> Pool<'a> {
    fn new(nodes: &'a [Value]) -> Pool<'a> {
        let live = nodes.iter().filter(|n| n["archived"] == false).collect();
        Pool { nodes, live }
    }

    /// The live nodes of status `st`.
    fn with(&self, st: &str) -> Vec<&'a Value> {
        self.live
            .iter()
            .copied()
            .filter(|n| n["status"] == st)
            .collect()
    }

    /// The live finished nodes.
    fn terminal(&self) -> Vec<&'a Value> {
        self.live
            .iter()
            .copied()
            .filter(|n| matches!(n["status"].as_str(), Some("done" | "failed" | "cancelled")))
            .collect()
    }

    /// The archived nodes.
    fn archived(&self) -> Vec<&'a Value> {
        self.nodes
            .iter()
            .filter(|n| n["archived"] == true)
            .collect()
    }
}

/// One of `v` at random; `None` when `v` is empty.
fn pick(rng: &mut Rng, v: &[&Value]) -> Option<Value> {
    (!v.is_empty()).then(|| v[rng.below(v.len() as u64) as usize].clone())
}

fn id(n: &Value) -> String {
    n["id"].as_str().expect("id").to_string()
}

fn gen(n: &Value) -> String {
    n["generation"].as_u64().expect("generation").to_string()
}

/// An upsert of a new node (write `n`), with up to three labels of growing length.
fn new_node(rng: &mut Rng, n: usize) -> Vec<String> {
    let mut a = vec!["upsert".into(), "--summary".into(), format!("written {n}")];
    for k in 0..rng.below(4) {
        a.extend([
            "--label".into(),
            format!("label {k} {}", "x".repeat(k as usize * 50)),
        ]);
    }
    a
}

/// An upsert of a live node again, with a new priority.
fn reprioritise(rng: &mut Rng, pool: &Pool) -> Option<Vec<String>> {
    let node = pick(rng, &pool.live)?;
    let summary = node["summary"].as_str().expect("summary").to_string();
    let prio = (1 + rng.below(9)).to_string();
    Some(vec![
        "upsert".into(),
        "--summary".into(),
        summary,
        "--priority".into(),
        prio,
    ])
}

/// Pick `k` of a random write: 3 claim, 4 claim-next (as `who`), 5 renew, 6 release (as the
/// holder).
fn lease_write(k: u64, rng: &mut Rng, pool: &Pool, who: String) -> Option<Vec<String>> {
    let args = match k {
        3 => {
            let node = pick(rng, &pool.with("todo"))?;
            vec![
                "claim".into(),
                id(&node),
                "--assignee".into(),
                who,
                "--ttl".into(),
                "1h".into(),
            ]
        }
        4 => vec![
            "claim-next".into(),
            "--assignee".into(),
            who,
            "--ttl".into(),
            "1h".into(),
        ],
        5 => {
            let node = pick(rng, &pool.with("claimed"))?;
            let holder = node["holder"].as_str().expect("holder").to_string();
            vec![
                "renew".into(),
                id(&node),
                "--actor".into(),
                holder,
                "--gen".into(),
                gen(&node),
                "--ttl".into(),
                "2h".into(),
            ]
        }
        _ => {
            let node = pick(rng, &pool.with("claimed"))?;
            let holder = node["holder"].as_str().expect("holder").to_string();
            vec![
                "release".into(),
                id(&node),
                "--actor".into(),
                holder,
                "--gen".into(),
                gen(&node),
            ]
        }
    };
    Some(args)
}

/// Pick `k` of a random write: 7 and 8 complete a claimed node with a note (write `n`), 9
/// cancels a todo node.
fn finish_write(k: u64, rng: &mut Rng, pool: &Pool, n: usize) -> Option<Vec<String>> {
    if k == 9 {
        let node = pick(rng, &pool.with("todo"))?;
        return Some(vec![
            "complete".into(),
            id(&node),
            "--status".into(),
            "cancelled".into(),
            "--gen".into(),
            gen(&node),
        ]);
    }
    let node = pick(rng, &pool.with("claimed"))?;
    let status = ["done", "failed", "cancelled"][rng.below(3) as usize];
    Some(vec![
        "complete".into(),
        id(&node),
        "--status".into(),
        status.into(),
        "--gen".into(),
        gen(&node),
        "--note".into(),
        format!("note {n}"),
    ])
}

/// An import of a plan of three nodes (write `n`), written to `plan`: one waiting on the
/// other two, maybe on a live node too.
fn plan_write(rng: &mut Rng, pool: &Pool, n: usize, plan: &std::path::Path) -> Vec<String> {
    let mut deps = vec![format!("\"a{n}\""), format!("\"b{n}\"")];
    if let Some(node) = pick(rng, &pool.live) {
        deps.push(format!("\"{}\"", id(&node)));
    }
    let text = format!(
        "{{\"nodes\": [{{\"key\": \"a{n}\", \"summary\": \"plan a {n}\"}}, \
         {{\"key\": \"b{n}\", \"summary\": \"plan b {n}\", \"priority\": 2}}, \
         {{\"key\": \"c{n}\", \"summary\": \"plan c {n}\", \"deps\": [{}]}}]}}",
        deps.join(", ")
    );
    std::fs::write(plan, text).expect("write plan");
    vec!["import".into(), plan.to_string_lossy().into_owned()]
}

/// Runs `args` with the crash point armed; asserts the process died by SIGKILL there.
fn crash_at(s: &Store, point: &str, args: &[String]) -> Run {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = s.run_env(&a, &[("CLAIMDAG_CRASH_AT", point)]);
    assert_eq!(
        r.signal,
        Some(SIGKILL),
        "{args:?} with CLAIMDAG_CRASH_AT={point} was not killed: exit {:?}, {}",
        r.code,
        r.stderr
    );
    r
}

/// Picks a random write that the oracle (a copy of `s`) accepts and that changes something
/// (a write that changes nothing, such as linking twice, appends nothing and so never
/// reaches a crash point); returns it and the oracle.
fn write_and_oracle(rng: &mut Rng, s: &Store, n: usize) -> (Vec<String>, Seen) {
    let plan = s.scratch().join("plan.json");
    let before = seen(s);
    for _ in 0..200 {
        let Some(args) = random_write(rng, s, n, &plan) else {
            continue;
        };
        let twin = Store::new();
        copy_dir(&s.dir, &twin.dir);
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        if twin.run(&a).code == Some(0) {
            let after = seen(&twin);
            if after != before {
                return (args, after);
            }
        }
    }
    panic!("no write applies to the store after 200 picks");
}

/// Asserts the store reads as `want` after `args` was killed at `point`.
fn reads_as(s: &Store, want: &Seen, other: &Seen, what: &str) {
    let now = seen(s);
    if now != *want {
        let differ: Vec<&String> = now
            .0
            .keys()
            .chain(want.0.keys())
            .filter(|k| now.0.get(*k) != want.0.get(*k))
            .collect();
        panic!(
            "{what}: the store does not read as it should ({}).\nnodes that differ: {differ:?}\n\
             history: {} events, expected {}",
            if now == *other {
                "it reads as the other outcome"
            } else {
                "it reads as neither outcome"
            },
            now.1.len(),
            want.1.len()
        );
    }
}

/// After a crash: a plain write succeeds and is there, its event once, `check` passes.
fn write_after(s: &Store, what: &str, n: usize) {
    let events = seen(s).1.len();
    let id = s.upsert(&format!("after the crash {n}"), &[]);
    let (nodes, log) = seen(s);
    assert!(nodes.contains_key(&id), "{what}: the next write is missing");
    assert_eq!(log.len(), events + 1, "{what}: events after the next write");
    let distinct: BTreeSet<&String> = log.iter().collect();
    assert_eq!(
        distinct.len(),
        log.len(),
        "{what}: an event is in the history twice"
    );
    sound(s, what);
}

#[test]
fn crash_points_on_random_writes_to_random_stores() {
    let mut rng = Rng::from_env("crash loop");
    let s = Store::new();
    for k in 0..6 {
        s.upsert(&format!("seed node {k}"), &[]);
    }
    s.ok(&["config", "max_held", "0"]);
    let mut n = 0;
    let mut landed: BTreeMap<&str, usize> = BTreeMap::new();
    for _ in 0..per_point() {
        for point in APPEND_POINTS {
            n += 1;
            let before = seen(&s);
            let (args, after) = write_and_oracle(&mut rng, &s, n);
            let what = format!("{args:?} killed at {point}");
            let files = s.files();
            crash_at(&s, point, &args);
            sound(&s, &what);
            if matches!(point, "before-append" | "mid-append") {
                reads_as(&s, &before, &after, &what);
                if point == "before-append" {
                    common::assert_files_eq(&files, &s.files(), &what);
                }
            } else {
                reads_as(&s, &after, &before, &what);
                *landed.entry(point).or_default() += 1;
            }
            // Half the time the next write follows at once (it cuts a torn tail off).
            if rng.below(2) == 0 {
                write_after(&s, &what, n);
            }
        }
    }
    eprintln!(
        "append path: {n} kills ({} per point), landed: {landed:?}; journal {} bytes",
        per_point(),
        journal_used(&s)
    );
}

/// A store whose journal holds between 100 and 20 bytes less than the compaction threshold,
/// with nodes in every state: any further write compacts it.
fn near_threshold() -> Store {
    let s = Store::new();
    let label = "l".repeat(240);
    let mut k = 0;
    while journal_used(&s) < COMPACT_MIN_BYTES - 300_000 {
        let labels: Vec<String> = (0..1000).map(|i| format!("{k}-{i}-{label}")).collect();
        let summary = format!("bulk {k}");
        let mut args = vec!["upsert", "--summary", summary.as_str()];
        for l in &labels {
            args.extend(["--label", l.as_str()]);
        }
        s.ok(&args);
        k += 1;
    }
    s.ok(&["config", "max_held", "0"]);
    let ids: Vec<String> = (0..6)
        .map(|i| s.upsert(&format!("small {i}"), &[]))
        .collect();
    s.ok(&["link", &ids[0], &ids[1]]);
    for (i, id) in ids.iter().enumerate().skip(2) {
        s.claim(id, &actor(i as u64), &["--ttl", "1h"]);
    }
    s.ok(&["complete", &ids[4], "--status", "done", "--gen", "2"]);
    s.ok(&["complete", &ids[5], "--status", "failed", "--gen", "2"]);
    s.ok(&["archive", &ids[5]]);
    // Fill to just under the threshold with summaries of a computed length: what a record
    // adds besides its summary is measured on each filler.
    let mut overhead = 500;
    for f in 0.. {
        let used = journal_used(&s);
        let room = COMPACT_MIN_BYTES - 60 - used;
        let len = match room {
            r if r > 8000 => 3000,
            r if r > 4000 => r / 2,
            r => r.saturating_sub(overhead),
        };
        let prefix = format!("filler {f:04} ");
        assert!(
            len as usize > prefix.len(),
            "cannot fill: {room} bytes left"
        );
        let summary = format!("{prefix}{}", "x".repeat(len as usize - prefix.len()));
        s.upsert(&summary, &[]);
        let now = journal_used(&s);
        overhead = now - used - len;
        let left = COMPACT_MIN_BYTES - now;
        if (20..100).contains(&left) {
            break;
        }
        assert!(
            left > 100,
            "overshot: {left} bytes left under the threshold"
        );
    }
    assert!(!s.dir.join("history.jsonl").exists(), "compacted too early");
    s
}

#[test]
fn compaction_crash_points_on_random_writes() {
    let mut rng = Rng::from_env("compaction crash loop");
    let template = near_threshold();
    let before = seen(&template);
    let mut n = 0;
    for _ in 0..per_point() {
        for point in COMPACT_POINTS {
            n += 1;
            let s = Store::new();
            copy_dir(&template.dir, &s.dir);
            let (args, after) = write_and_oracle(&mut rng, &s, n);
            let what = format!("{args:?} killed at {point}");
            crash_at(&s, point, &args);
            sound(&s, &what);
            // The write was committed before the compaction began.
            reads_as(&s, &after, &before, &what);
            // The next write compacts (again, or for the first time) and keeps every event
            // once; then the journal is short.
            write_after(&s, &what, n);
            assert!(
                journal_used(&s) < 64 * 1024,
                "{what}: the journal was not compacted after the crash ({} bytes)",
                journal_used(&s)
            );
            assert!(
                s.dir.join("history.jsonl").exists(),
                "{what}: no history file"
            );
        }
    }
    eprintln!(
        "compaction: {n} kills ({} per point) on a journal of {} bytes",
        per_point(),
        journal_used(&template)
    );
}
