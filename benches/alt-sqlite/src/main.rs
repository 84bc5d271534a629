//! The SQLite alternative: the design of SQLite-based claim stores. One table of nodes (the
//! fields a claim touches), one of dependencies, one of history; every write is one
//! `BEGIN IMMEDIATE` transaction that hands back expired claims, checks the node, its
//! prerequisites and the actor's live claims, updates the row and appends a history row.
//! `journal_mode=WAL`, `synchronous=FULL` (the WAL is fsynced at every commit); the
//! comparison without fsync uses `synchronous=OFF`. `claim-next` picks the first ready node
//! by priority and age through an index (no critical paths).
//!
//!     claimdag-bench-sqlite [--quick] [--work DIR] [--sizes 1000,10000]
//!
//! Prints `sqlite<TAB>key<TAB>value<TAB>note` lines with the keys of benches/store.rs, and
//! `sqlite-min` lines for the least a claim table must write (minimal.rs).

#[path = "../../common/mod.rs"]
mod common;
mod minimal;

use common::{emit, median, note, vm_kib, Floor, Series};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SYSTEM: &str = "sqlite";
const TTL_MS: i64 = 900_000;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS nodes (
    id BLOB PRIMARY KEY,
    seq INTEGER NOT NULL,
    workspace TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL DEFAULT 'task',
    summary TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'todo',
    generation INTEGER NOT NULL DEFAULT 1,
    holder BLOB,
    attempts INTEGER NOT NULL DEFAULT 0,
    claimed_at INTEGER,
    renewed_at INTEGER,
    ttl_ms INTEGER,
    priority INTEGER NOT NULL DEFAULT 0,
    completed_by BLOB,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS deps (
    child BLOB NOT NULL,
    parent BLOB NOT NULL,
    PRIMARY KEY (child, parent)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS nodes_ready ON nodes (status, priority DESC, seq);
CREATE INDEX IF NOT EXISTS nodes_holder ON nodes (holder) WHERE holder IS NOT NULL;
CREATE TABLE IF NOT EXISTS history (
    seq INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    verb TEXT NOT NULL,
    node BLOB,
    actor BLOB,
    generation INTEGER
);
";

type Id = [u8; 16];

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A node id spread like a hash, as ours are.
fn node_id(i: u64) -> Id {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&mix(i).to_be_bytes());
    b[8..].copy_from_slice(&mix(i ^ 0x5555).to_be_bytes());
    b
}

fn actor(n: u64) -> Id {
    let mut b = [0u8; 16];
    b[8..].copy_from_slice(&n.to_be_bytes());
    b
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn open(path: &Path, sync: bool) -> Connection {
    connect(path, sync, SCHEMA)
}

/// A connection in WAL mode, `synchronous=FULL` (or `OFF`), with `schema` made.
fn connect(path: &Path, sync: bool, schema: &str) -> Connection {
    let c = Connection::open(path).expect("open");
    c.busy_timeout(Duration::from_secs(120)).expect("timeout");
    let mode: String = c
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .expect("wal");
    assert_eq!(mode, "wal");
    c.pragma_update(None, "synchronous", if sync { "FULL" } else { "OFF" })
        .expect("synchronous");
    c.execute_batch(schema).expect("schema");
    c
}

fn import(c: &mut Connection, n: usize) {
    let tx = c.transaction().expect("begin");
    {
        let now = now_ms();
        let mut ins = tx
            .prepare(
                "INSERT INTO nodes (id, seq, summary, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?4)",
            )
            .expect("prepare");
        let mut hist = tx
            .prepare(
                "INSERT INTO history (at, verb, node, generation) VALUES (?1, 'create', ?2, 1)",
            )
            .expect("prepare");
        for i in 0..n {
            let id = node_id(i as u64);
            ins.execute(params![id, i as i64, format!("bench node {i}"), now])
                .expect("insert");
            hist.execute(params![now, id]).expect("history");
        }
    }
    tx.commit().expect("commit");
}

/// Every write first hands back expired claims.
fn expire(tx: &rusqlite::Transaction<'_>, now: i64) {
    tx.prepare_cached(
        "UPDATE nodes SET status = 'todo', holder = NULL, generation = generation + 1,
             updated_at = ?1
         WHERE status = 'claimed' AND renewed_at + ttl_ms <= ?1",
    )
    .expect("prepare")
    .execute(params![now])
    .expect("expire");
}

fn grant(tx: &rusqlite::Transaction<'_>, id: &Id, who: &Id, now: i64) -> i64 {
    let busy: i64 = tx
        .prepare_cached("SELECT count(*) FROM nodes WHERE holder = ?1 AND status = 'claimed'")
        .expect("prepare")
        .query_row(params![who], |r| r.get(0))
        .expect("busy");
    assert_eq!(busy, 0, "the actor already holds a claim");
    let gen: i64 = tx
        .prepare_cached(
            "UPDATE nodes SET status = 'claimed', holder = ?2, generation = generation + 1,
                 attempts = attempts + 1, claimed_at = ?3, renewed_at = ?3, ttl_ms = ?4,
                 updated_at = ?3
             WHERE id = ?1 RETURNING generation",
        )
        .expect("prepare")
        .query_row(params![id, who, now, TTL_MS], |r| r.get(0))
        .expect("update");
    tx.prepare_cached(
        "INSERT INTO history (at, verb, node, actor, generation) VALUES (?1, 'claim', ?2, ?3, ?4)",
    )
    .expect("prepare")
    .execute(params![now, id, who, gen])
    .expect("history");
    gen
}

fn claim(c: &mut Connection, id: &Id, who: &Id) -> i64 {
    let now = now_ms();
    let tx = c
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .expect("begin");
    expire(&tx, now);
    let status: String = tx
        .prepare_cached("SELECT status FROM nodes WHERE id = ?1")
        .expect("prepare")
        .query_row(params![id], |r| r.get(0))
        .expect("node");
    assert_eq!(status, "todo", "claimable");
    let waiting: bool = tx
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM deps d JOIN nodes p ON p.id = d.parent
                            WHERE d.child = ?1 AND p.status <> 'done')",
        )
        .expect("prepare")
        .query_row(params![id], |r| r.get(0))
        .expect("deps");
    assert!(!waiting, "ready");
    let gen = grant(&tx, id, who, now);
    tx.commit().expect("commit");
    gen
}

fn claim_next(c: &mut Connection, who: &Id) -> Option<(Id, i64)> {
    let now = now_ms();
    let tx = c
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .expect("begin");
    expire(&tx, now);
    let id: Option<Id> = tx
        .prepare_cached(
            "SELECT id FROM nodes n WHERE status = 'todo'
               AND NOT EXISTS (SELECT 1 FROM deps d JOIN nodes p ON p.id = d.parent
                               WHERE d.child = n.id AND p.status <> 'done')
             ORDER BY priority DESC, seq LIMIT 1",
        )
        .expect("prepare")
        .query_row([], |r| r.get(0))
        .optional()
        .expect("pick");
    let out = id.map(|id| (id, grant(&tx, &id, who, now)));
    tx.commit().expect("commit");
    out
}

fn complete(c: &mut Connection, id: &Id, gen: i64, who: &Id) {
    let now = now_ms();
    let tx = c
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .expect("begin");
    expire(&tx, now);
    let (status, g, holder): (String, i64, Option<Id>) = tx
        .prepare_cached("SELECT status, generation, holder FROM nodes WHERE id = ?1")
        .expect("prepare")
        .query_row(params![id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("node");
    assert!(
        status == "claimed" && g == gen && holder.as_ref() == Some(who),
        "live claim"
    );
    tx.prepare_cached(
        "UPDATE nodes SET status = 'done', completed_by = holder, holder = NULL, updated_at = ?2
         WHERE id = ?1",
    )
    .expect("prepare")
    .execute(params![id, now])
    .expect("update");
    tx.prepare_cached(
        "INSERT INTO history (at, verb, node, actor, generation)
         VALUES (?1, 'complete', ?2, ?3, ?4)",
    )
    .expect("prepare")
    .execute(params![now, id, who, gen])
    .expect("history");
    tx.commit().expect("commit");
}

fn claims(c: &mut Connection, from: usize, s: &Series, floor: Option<&mut Floor>) -> f64 {
    let mut floor = floor;
    median(s.run_paired(
        |_| {
            if let Some(f) = floor.as_deref_mut() {
                f.once();
            }
        },
        |i| {
            let k = (from + i) as u64;
            claim(c, &node_id(k), &actor(1_000 + k));
        },
    ))
}

fn cycles(c: &mut Connection, from: usize, s: &Series, floor: Option<&mut Floor>) -> (f64, f64) {
    let who = actor(1);
    let mut floor = floor;
    let us = s.run_paired(
        |_| {
            if let Some(f) = floor.as_deref_mut() {
                f.once();
            }
        },
        |i| {
            let id = node_id((from + i) as u64);
            let g = claim(c, &id, &who);
            complete(c, &id, g, &who);
        },
    );
    let per_s = us.len() as f64 / (us.iter().sum::<f64>() / 1e6);
    (median(us), per_s)
}

/// claim-next + complete cycles (the pick by index, then the claim and the completion).
fn next_cycles(c: &mut Connection, s: &Series) -> f64 {
    let who = actor(2);
    median(s.run(|_| {
        let (id, g) = claim_next(c, &who).expect("a ready node");
        complete(c, &id, g, &who);
    }))
}

fn db_path(dir: &Path) -> PathBuf {
    dir.join("claims.db")
}

fn fresh(dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("mkdir");
    dir.to_path_buf()
}

/// A fresh process opens the database and finds the next ready node.
fn child_load(dir: &Path) {
    let before = vm_kib("VmRSS");
    let t = Instant::now();
    let c = open(&db_path(dir), true);
    let _: Option<Id> = c
        .query_row(
            "SELECT id FROM nodes WHERE status = 'todo' ORDER BY priority DESC, seq LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()
        .expect("query");
    let ms = t.elapsed().as_secs_f64() * 1e3;
    println!("{ms} {before} {} {}", vm_kib("VmRSS"), vm_kib("VmHWM"));
}

fn load_in_child(dir: &Path, n: usize, runs: usize) -> (f64, f64, f64) {
    let exe = std::env::current_exe().expect("current_exe");
    let (mut ms, mut rss, mut hwm) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let out = Command::new(&exe)
            .arg("--child-load")
            .arg(dir)
            .stderr(Stdio::inherit())
            .output()
            .expect("spawn");
        assert!(out.status.success(), "loader failed");
        let v: Vec<f64> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(|x| x.parse().expect("number"))
            .collect();
        ms.push(v[0]);
        rss.push((v[2] - v[1]) * 1024.0 / n as f64);
        hwm.push((v[3] - v[1]) * 1024.0 / n as f64);
    }
    (median(ms), median(rss), median(hwm))
}

fn child_drain(dir: &Path, who: u64) {
    let mut c = open(&db_path(dir), true);
    let me = actor(who);
    let mut done = 0u64;
    while let Some((id, g)) = claim_next(&mut c, &me) {
        complete(&mut c, &id, g, &me);
        done += 1;
    }
    println!("{done}");
}

fn drain(work: &Path, procs: usize, n: usize) -> f64 {
    let dir = fresh(&work.join(format!("sqlite-drain{procs}")));
    import(&mut open(&db_path(&dir), true), n);
    let exe = std::env::current_exe().expect("current_exe");
    let t = Instant::now();
    let kids: Vec<_> = (0..procs)
        .map(|k| {
            Command::new(&exe)
                .arg("--child-drain")
                .arg(&dir)
                .arg((100 + k).to_string())
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn worker")
        })
        .collect();
    let mut total = 0u64;
    for k in kids {
        let out = k.wait_with_output().expect("worker");
        assert!(out.status.success(), "worker failed");
        total += String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse::<u64>()
            .expect("count");
    }
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(total, n as u64, "every node drained once");
    let _ = std::fs::remove_dir_all(&dir);
    2.0 * n as f64 / secs
}

/// `threads` threads of one process, each with its own connection (a SQLite connection is
/// one thread's), drain `n` ready nodes: writes per second.
fn threads_drain(work: &Path, threads: usize, n: usize) -> f64 {
    let dir = fresh(&work.join(format!("sqlite-threads{threads}")));
    let db = db_path(&dir);
    import(&mut open(&db, true), n);
    let rate = common::threaded_drain(threads, n, |k| {
        let mut c = open(&db, true);
        let me = actor(100 + k as u64);
        let mut done = 0u64;
        while let Some((id, g)) = claim_next(&mut c, &me) {
            complete(&mut c, &id, g, &me);
            done += 1;
        }
        done
    });
    let _ = std::fs::remove_dir_all(&dir);
    rate
}

fn size(work: &Path, n: usize, quick: bool) {
    let label = common::count(n);
    let dir = fresh(&work.join(format!("sqlite-{label}")));
    let path = db_path(&dir);
    let mut c = open(&path, true);
    note(&format!("sqlite: inserting {n} nodes in one transaction"));
    let t = Instant::now();
    import(&mut c, n);
    emit(
        SYSTEM,
        &format!("import_s@{label}"),
        t.elapsed().as_secs_f64(),
        "",
    );
    let max = if quick { 50 } else { 200 }.min(n / 4);
    let s = Series::new(max, Duration::from_secs(if quick { 2 } else { 5 }));
    note(&format!("sqlite: durable writes at {n} nodes"));
    let mut floor = Floor::new(&work.join("floor"));
    let cl = claims(&mut c, 0, &s, Some(&mut floor));
    emit(SYSTEM, &format!("claim_us@{label}"), cl, "median");
    let (cy, per_s) = cycles(&mut c, max, &s, Some(&mut floor));
    emit(SYSTEM, &format!("cycle_us@{label}"), cy, "median");
    emit(SYSTEM, &format!("cycles_per_s@{label}"), per_s, "");
    emit(
        SYSTEM,
        &format!("floor_us@{label}"),
        floor.done(),
        "median, paired",
    );
    drop(c);
    let mut c = open(&path, false);
    note(&format!("sqlite: writes with synchronous=OFF at {n} nodes"));
    emit(
        SYSTEM,
        &format!("claim_nosync_us@{label}"),
        claims(&mut c, 2 * max, &s, None),
        "median",
    );
    let (cy, _) = cycles(&mut c, 3 * max, &s, None);
    emit(SYSTEM, &format!("cycle_nosync_us@{label}"), cy, "median");
    let next = Series::new(
        ((n - 4 * max) / 2).min(max),
        Duration::from_secs(if quick { 2 } else { 5 }),
    );
    let ny = next_cycles(&mut c, &next);
    emit(
        SYSTEM,
        &format!("next_cycle_nosync_us@{label}"),
        ny,
        "median",
    );
    drop(c);
    let mut c = open(&path, true);
    let ny = next_cycles(&mut c, &next);
    emit(SYSTEM, &format!("next_cycle_us@{label}"), ny, "median");
    drop(c);
    let (ms, rss, hwm) = load_in_child(&dir, n, if quick { 1 } else { 3 });
    emit(
        SYSTEM,
        &format!("load_ms@{label}"),
        ms,
        "open + first query",
    );
    emit(
        SYSTEM,
        &format!("rss_b_per_node@{label}"),
        rss,
        "pages on demand",
    );
    emit(
        SYSTEM,
        &format!("hwm_b_per_node@{label}"),
        hwm,
        "pages on demand",
    );
    let bytes: u64 = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0);
    emit(
        SYSTEM,
        &format!("disk_b_per_node@{label}"),
        bytes as f64 / n as f64,
        "",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    if let Some(dir) = arg("--child-load") {
        return child_load(Path::new(&dir));
    }
    if let Some(dir) = arg("--child-drain") {
        let who = args.last().and_then(|x| x.parse().ok()).unwrap_or(1);
        return child_drain(Path::new(&dir), who);
    }
    let quick = args.iter().any(|a| a == "--quick") || common::quick_env();
    let work = PathBuf::from(arg("--work").unwrap_or_else(|| "target/bench-work".into()));
    std::fs::create_dir_all(&work).expect("work directory");
    let sizes: Vec<usize> = match arg("--sizes") {
        Some(s) => s.split(',').map(|x| x.parse().expect("size")).collect(),
        None if quick => vec![1_000, 10_000, 100_000],
        None => vec![1_000, 10_000, 100_000, 1_000_000],
    };
    for n in sizes {
        size(&work, n, quick);
        minimal::size(&work, n, &common::count(n), quick);
    }
    note("sqlite: 4 processes draining 1,000 nodes");
    let runs = if quick { 1 } else { 3 };
    let rates = (0..runs).map(|_| drain(&work, 4, 1_000)).collect();
    emit(SYSTEM, "lib_drain4_wps", median(rates), "median");
    note("sqlite: 8 threads, a connection each, draining 1,000 nodes");
    let rates = (0..runs).map(|_| threads_drain(&work, 8, 1_000)).collect();
    emit(SYSTEM, "lib_threads8_wps", median(rates), "median");
}
