//! In-process measurements of the embedded store: the cost of one durable write against one
//! bare `fdatasync`, claim+complete cycles per second, import time, load time after a
//! restart and resident memory per node, at several store sizes; and four processes draining
//! a store through the library.
//!
//!     cargo bench --bench store -- [--quick] [--work DIR] [--sizes 1000,10000]
//!
//! `make bench` runs it through scripts/bench.sh. Results go to stdout, one a line:
//! `ours<TAB>key<TAB>value<TAB>note`; progress goes to stderr. It never fails on a time.
//! Stores are made under `--work` (default `target/bench-work`), which must be on the
//! filesystem being measured.

mod common;

use claimdag::rules::{Plan, PlanNode};
use claimdag::store::{embedded::Tuning, SystemClock};
use claimdag::{Actor, Id, Status, Store};
use common::{emit, median, note, pair_ratio, vm_kib, Floor, Series};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SYSTEM: &str = "ours";

fn actor(n: u64) -> Actor {
    let mut b = [0u8; 16];
    b[8..].copy_from_slice(&n.to_be_bytes());
    Id(b)
}

/// A flat plan: `n` independent nodes, all ready.
fn plan(n: usize) -> Plan {
    Plan {
        nodes: (0..n)
            .map(|i| PlanNode {
                key: format!("n{i}"),
                summary: format!("bench node {i}"),
                ..PlanNode::default()
            })
            .collect(),
    }
}

fn open(dir: &Path, sync: bool) -> Store {
    Store::with(
        dir.to_path_buf(),
        Tuning {
            sync,
            ..Tuning::default()
        },
        Arc::new(SystemClock),
    )
}

fn fresh(dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    dir.to_path_buf()
}

/// Claims of different nodes by different actors, from node `from` on, each after one floor
/// sample when a floor is given (the disk is shared: pairing keeps the ratio honest).
/// Returns each claim's time in µs.
fn claims(
    store: &Store,
    ids: &[Id],
    from: usize,
    s: &Series,
    floor: Option<&mut Floor>,
) -> Vec<f64> {
    let mut floor = floor;
    s.run_paired(
        |_| {
            if let Some(f) = floor.as_deref_mut() {
                f.once();
            }
        },
        |i| {
            store
                .claim(ids[from + i], actor(1_000 + (from + i) as u64), None, None)
                .expect("claim");
        },
    )
}

/// claim + complete cycles by one actor, from node `from` on, paired as [`claims`] are.
/// Returns each cycle's time in µs.
fn cycles(
    store: &Store,
    ids: &[Id],
    from: usize,
    s: &Series,
    floor: Option<&mut Floor>,
) -> Vec<f64> {
    let who = actor(1);
    let mut floor = floor;
    s.run_paired(
        |_| {
            if let Some(f) = floor.as_deref_mut() {
                f.once();
            }
        },
        |i| {
            let id = ids[from + i];
            let g = store.claim(id, who, None, None).expect("claim");
            store
                .complete(id, Status::Done, g, Some(who), None)
                .expect("complete");
        },
    )
}

/// claim-next + complete cycles by one actor (the store picks the node: on a flat plan, the
/// oldest ready one). Returns each cycle's time in µs.
fn next_cycles(store: &Store, s: &Series) -> Vec<f64> {
    let who = actor(2);
    s.run(|_| {
        let (id, g) = store
            .claim_next("", who, None, None)
            .expect("claim_next")
            .expect("a ready node");
        store
            .complete(id, Status::Done, g, Some(who), None)
            .expect("complete");
    })
}

/// A fresh process loads the store: (load ms, VmRSS before, after, VmHWM) in KiB.
fn child_load(dir: &Path, expect: usize) {
    let before = vm_kib("VmRSS");
    let t = Instant::now();
    let store = open(dir, true);
    let n = store.inspect(|s, _| s.len()).expect("read");
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let after = vm_kib("VmRSS");
    let hwm = vm_kib("VmHWM");
    assert_eq!(n, expect, "node count");
    // What the first call that needs every node (a `list`) adds.
    let t = Instant::now();
    let all = store.inspect(|s, _| s.nodes().len()).expect("read");
    let all_ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(all, expect, "node count");
    let (after_all, hwm_all) = (vm_kib("VmRSS"), vm_kib("VmHWM"));
    println!("{ms} {before} {after} {hwm} {all_ms} {after_all} {hwm_all}");
}

/// A fresh process loads the store and picks once, as a `claimdag next` does: (the pick's
/// ms, VmRSS before the load, VmHWM after the pick) in KiB.
fn child_pick(dir: &Path, expect: usize) {
    let before = vm_kib("VmRSS");
    let store = open(dir, true);
    let n = store.inspect(|s, _| s.len()).expect("read");
    assert_eq!(n, expect, "node count");
    let t = Instant::now();
    let _ = store.next("", None).expect("next");
    let ms = t.elapsed().as_secs_f64() * 1e3;
    println!("{ms} {before} {}", vm_kib("VmHWM"));
}

/// What a fresh process pays to load a store (medians over runs).
struct Load {
    /// Open and read the state: what a process that looks nodes up by id pays.
    ms: f64,
    /// Then decode every node (the first `list`).
    all_ms: f64,
    /// In another fresh process: the first pick by critical path after the load (from the
    /// pick order the snapshot stores), and that process's peak resident bytes per node.
    pick_ms: f64,
    pick_hwm: f64,
    /// Resident bytes per node after the load, and after every node is decoded.
    rss: f64,
    rss_all: f64,
    /// Peak resident bytes per node.
    hwm: f64,
}

fn load_in_child(dir: &Path, n: usize, runs: usize) -> Load {
    let exe = std::env::current_exe().expect("current_exe");
    let mut v: Vec<Vec<f64>> = vec![Vec::new(); 7];
    let child = |mode: &str| -> Vec<f64> {
        let out = Command::new(&exe)
            .arg(mode)
            .arg(dir)
            .arg(n.to_string())
            .stderr(Stdio::inherit())
            .output()
            .expect("spawn loader");
        assert!(out.status.success(), "loader failed");
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(|x| x.parse().expect("number"))
            .collect()
    };
    for _ in 0..runs {
        let x = child("--child-load");
        let per_node = |kib: f64, from: f64| (kib - from) * 1024.0 / n as f64;
        v[0].push(x[0]);
        v[1].push(x[4]);
        v[2].push(per_node(x[2], x[1]));
        v[3].push(per_node(x[5], x[1]));
        v[4].push(per_node(x[6], x[1]));
        let p = child("--child-pick");
        v[5].push(p[0]);
        v[6].push(per_node(p[2], p[1]));
    }
    let mut m = v.into_iter().map(median);
    let mut next = || m.next().unwrap_or(0.0);
    Load {
        ms: next(),
        all_ms: next(),
        rss: next(),
        rss_all: next(),
        hwm: next(),
        pick_ms: next(),
        pick_hwm: next(),
    }
}

/// A worker process: claim-next + complete until nothing is ready; prints how many.
fn child_drain(dir: &Path, who: u64) {
    let store = open(dir, true);
    let me = actor(who);
    let mut done = 0u64;
    while let Some((id, g)) = store.claim_next("", me, None, None).expect("claim_next") {
        store
            .complete(id, Status::Done, g, Some(me), None)
            .expect("complete");
        done += 1;
    }
    println!("{done}");
}

/// `procs` processes drain a store of `n` ready nodes: writes per second (2 per node).
fn drain(work: &Path, procs: usize, n: usize) -> f64 {
    let dir = fresh(&work.join(format!("ours-drain{procs}")));
    open(&dir, true).import("", plan(n)).expect("import");
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

/// `threads` threads share one `Store` and drain `n` ready nodes: writes per second.
fn threads_drain(work: &Path, threads: usize, n: usize) -> f64 {
    let dir = fresh(&work.join(format!("ours-threads{threads}")));
    let store = open(&dir, true);
    store.import("", plan(n)).expect("import");
    let rate = common::threaded_drain(threads, n, |k| {
        let me = actor(100 + k as u64);
        let mut done = 0u64;
        while let Some((id, g)) = store.claim_next("", me, None, None).expect("next") {
            store
                .complete(id, Status::Done, g, Some(me), None)
                .expect("complete");
            done += 1;
        }
        done
    });
    let _ = std::fs::remove_dir_all(&dir);
    rate
}

fn size(work: &Path, n: usize, quick: bool) {
    let label = common::count(n);
    let dir = fresh(&work.join(format!("ours-{label}")));
    let store = open(&dir, true);
    note(&format!("ours: importing {n} nodes"));
    let plan = plan(n);
    let t = Instant::now();
    let ids: Vec<Id> = store
        .import("", plan)
        .expect("import")
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    emit(
        SYSTEM,
        &format!("import_s@{label}"),
        t.elapsed().as_secs_f64(),
        "",
    );
    // Each series uses nodes of its own: n / 4 at most.
    let max = if quick { 50 } else { 200 }.min(n / 4);
    let budget = Duration::from_secs(if quick { 2 } else { 5 });
    let s = Series::new(max, budget);
    note(&format!("ours: durable writes at {n} nodes"));
    let mut floor = Floor::with_overwrite(&work.join("floor"));
    let c = claims(&store, &ids, 0, &s, Some(&mut floor));
    let cf = pair_ratio(&c, floor.samples(), 1.0);
    // The same claims against a write over blocks the file already has: the floor of a
    // journal that writes into its own space.
    let over = floor.over_samples()[..c.len()].to_vec();
    emit(
        SYSTEM,
        &format!("claim_over_floor_x@{label}"),
        pair_ratio(&c, &over, 1.0),
        "median",
    );
    emit(
        SYSTEM,
        &format!("floor_over_us@{label}"),
        median(over),
        "median, paired",
    );
    let cy = cycles(&store, &ids, max, &s, Some(&mut floor));
    let cyf = pair_ratio(&cy, &floor.samples()[c.len()..], 2.0);
    let per_s = cy.len() as f64 / (cy.iter().sum::<f64>() / 1e6);
    emit(SYSTEM, &format!("claim_us@{label}"), median(c), "median");
    emit(SYSTEM, &format!("claim_floor_x@{label}"), cf, "median");
    emit(SYSTEM, &format!("cycle_us@{label}"), median(cy), "median");
    emit(SYSTEM, &format!("cycle_floor_x@{label}"), cyf, "median");
    emit(SYSTEM, &format!("cycles_per_s@{label}"), per_s, "");
    emit(
        SYSTEM,
        &format!("floor_us@{label}"),
        floor.done(),
        "median, paired",
    );
    drop(store);
    let store = open(&dir, false);
    note(&format!("ours: writes without fdatasync at {n} nodes"));
    let c = claims(&store, &ids, 2 * max, &s, None);
    emit(
        SYSTEM,
        &format!("claim_nosync_us@{label}"),
        median(c),
        "median",
    );
    let cy = cycles(&store, &ids, 3 * max, &s, None);
    emit(
        SYSTEM,
        &format!("cycle_nosync_us@{label}"),
        median(cy),
        "median",
    );
    // The store picks: what is left after the four series above, half each.
    let next = Series::new(((n - 4 * max) / 2).min(max), budget);
    note(&format!("ours: claim-next + complete at {n} nodes"));
    let ny = next_cycles(&store, &next);
    emit(
        SYSTEM,
        &format!("next_cycle_nosync_us@{label}"),
        median(ny),
        "median",
    );
    drop(store);
    let store = open(&dir, true);
    let ny = next_cycles(&store, &next);
    emit(
        SYSTEM,
        &format!("next_cycle_us@{label}"),
        median(ny),
        "median",
    );
    drop(store);
    note(&format!("ours: loading {n} nodes in a fresh process"));
    let runs = if n >= 1_000_000 || quick { 1 } else { 3 };
    let l = load_in_child(&dir, n, runs);
    emit(SYSTEM, &format!("load_ms@{label}"), l.ms, "");
    emit(SYSTEM, &format!("load_all_ms@{label}"), l.all_ms, "");
    emit(SYSTEM, &format!("first_pick_ms@{label}"), l.pick_ms, "");
    emit(
        SYSTEM,
        &format!("pick_hwm_b_per_node@{label}"),
        l.pick_hwm,
        "",
    );
    emit(SYSTEM, &format!("rss_lazy_b_per_node@{label}"), l.rss, "");
    emit(SYSTEM, &format!("rss_b_per_node@{label}"), l.rss_all, "");
    emit(SYSTEM, &format!("hwm_b_per_node@{label}"), l.hwm, "");
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

/// The journal over a long run: `writes` claims and releases (sync off: this measures disk
/// use and compaction, not the disk's latency) cycling over 1,000 nodes. Prints the
/// journal's largest size on disk, the store's size at the end, how many compactions ran
/// and what the write that ran one took.
fn churn(work: &Path, writes: usize) {
    use std::os::unix::fs::MetadataExt;
    let label = common::count(writes);
    let dir = fresh(&work.join("ours-churn"));
    let store = open(&dir, false);
    let ids: Vec<Id> = store
        .import("", plan(1_000))
        .expect("import")
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    note(&format!("ours: {writes} writes with compaction"));
    let snapshot_id = || std::fs::metadata(dir.join("snapshot.json")).map_or(0, |m| m.ino());
    let (mut journal_max, mut last) = (0u64, snapshot_id());
    let mut compactions = Vec::new();
    let (who, mut gen) = (actor(3), 0);
    for w in 0..writes {
        let id = ids[(w / 2) % ids.len()];
        let t = Instant::now();
        if w % 2 == 0 {
            gen = store.claim(id, who, None, None).expect("claim");
        } else {
            store.release(id, who, gen).expect("release");
        }
        let took = t.elapsed().as_secs_f64() * 1e3;
        let now = snapshot_id();
        if now != last {
            compactions.push(took);
            last = now;
        }
        if w % 64 == 0 {
            // Blocks the journal holds, its reserve included.
            let j = std::fs::metadata(dir.join("journal")).map_or(0, |m| m.blocks() * 512);
            journal_max = journal_max.max(j);
        }
    }
    let total: u64 = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.blocks() * 512)
                .sum()
        })
        .unwrap_or(0);
    emit(
        SYSTEM,
        &format!("journal_max_kib@{label}w"),
        journal_max as f64 / 1024.0,
        "",
    );
    emit(
        SYSTEM,
        &format!("store_mib@{label}w"),
        total as f64 / (1 << 20) as f64,
        "",
    );
    emit(
        SYSTEM,
        &format!("compactions@{label}w"),
        compactions.len() as f64,
        "",
    );
    emit(
        SYSTEM,
        &format!("compaction_ms@{label}w"),
        median(compactions),
        "median, the write that ran it",
    );
    drop(store);
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
    if let Some(dir) = arg("--child-pick") {
        let n = args.last().and_then(|x| x.parse().ok()).unwrap_or(0);
        return child_pick(Path::new(&dir), n);
    }
    if let Some(dir) = arg("--child-load") {
        let n = args.last().and_then(|x| x.parse().ok()).unwrap_or(0);
        return child_load(Path::new(&dir), n);
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
    note("ours: bare append + fdatasync of 300 bytes");
    let mut floor = Floor::new(&work.join("floor"));
    Series::new(if quick { 100 } else { 300 }, Duration::from_secs(5)).run(|_| floor.once());
    emit(SYSTEM, "floor_us", floor.done(), "median");
    for n in sizes {
        size(&work, n, quick);
    }
    note("ours: 4 processes draining 1,000 nodes through the library");
    let runs = if quick { 1 } else { 3 };
    let rates = (0..runs).map(|_| drain(&work, 4, 1_000)).collect();
    emit(SYSTEM, "lib_drain4_wps", median(rates), "median");
    note("ours: 8 threads on one Store draining 1,000 nodes");
    let rates = (0..runs).map(|_| threads_drain(&work, 8, 1_000)).collect();
    emit(SYSTEM, "lib_threads8_wps", median(rates), "median");
    churn(&work, if quick { 100_000 } else { 1_000_000 });
}
