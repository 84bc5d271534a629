//! The history at scale on the directory store. A store whose history holds 1M events (1,000
//! nodes claimed and released again and again, after a first node got its 11 events)
//! against one whose history is nearly empty:
//! `claimdag log NODE` and `claimdag log --since SEQ` as processes (time and peak memory),
//! and `Store::history` of one node in process. Then retention: 1M events written over 30
//! days of a simulated clock with `history_keep 7d`, and how many days of history stay in
//! live (uncompressed) segments.
//!
//!     cargo bench --bench history -- [--quick] [--cli target/release/claimdag]
//!
//! `--quick` writes 200k events instead of 1M. Prints Markdown tables on stdout with the
//! goals beside the figures; it never fails on a time.

use claimdag::store::{embedded::Tuning, Clock};
use claimdag::{Actor, Id, Store, Upsert};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

const DAY_MS: u64 = 86_400_000;

/// A clock the bench moves.
struct Simulated(AtomicU64);

impl Clock for Simulated {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// A store of 1,001 nodes whose history grows to `events`: the first node is claimed and
/// released 5 times, then the others again and again, the clock moving `step_ms` a write.
/// Returns the store and its first node.
fn grown(dir: &Path, events: u64, step_ms: u64, keep: Option<&str>) -> (Store, Id) {
    let _ = std::fs::remove_dir_all(dir);
    let clock = Arc::new(Simulated(AtomicU64::new(1_700_000_000_000)));
    let tuning = Tuning {
        sync: false,
        ..Tuning::default()
    };
    let store = Store::with(dir.to_path_buf(), tuning, clock.clone());
    if let Some(k) = keep {
        store.set_setting("history_keep", k).expect("history_keep");
    }
    let ids: Vec<Id> = (0..1001)
        .map(|i| {
            store
                .upsert(Upsert {
                    summary: format!("node {i}"),
                    ..Upsert::default()
                })
                .expect("upsert")
        })
        .collect();
    let me = Actor::from_name("bench").expect("actor");
    let mut written = ids.len() as u64;
    let t = Instant::now();
    while written < events {
        let id = match written - ids.len() as u64 {
            k if k < 10 => ids[0],
            k => ids[1 + (k / 2) as usize % (ids.len() - 1)],
        };
        let g = store.claim(id, me, None, None).expect("claim");
        clock.0.fetch_add(step_ms, Ordering::Relaxed);
        store.release(id, me, g).expect("release");
        clock.0.fetch_add(step_ms, Ordering::Relaxed);
        written += 2;
        if written.is_multiple_of(200_000) {
            eprintln!(
                "history bench: {written} events in {:.0} s",
                t.elapsed().as_secs_f64()
            );
        }
    }
    (store, ids[0])
}

/// Milliseconds and peak resident kilobytes of one run of the command.
#[allow(clippy::zombie_processes)] // reaped by wait4, which also gives its peak memory
fn run(cli: &str, args: &[&str]) -> (f64, i64) {
    let t = Instant::now();
    let child = std::process::Command::new(cli)
        .args(args)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("run claimdag");
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our child's; status and usage are valid for writes.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert!(pid > 0 && status == 0, "claimdag {args:?} failed");
    (t.elapsed().as_secs_f64() * 1e3, usage.ru_maxrss)
}

/// Median time and the largest peak memory of `n` runs.
fn runs(cli: &str, args: &[&str], n: usize) -> (f64, i64) {
    let got: Vec<(f64, i64)> = (0..n).map(|_| run(cli, args)).collect();
    (
        median(got.iter().map(|g| g.0).collect()),
        got.iter().map(|g| g.1).max().unwrap_or(0),
    )
}

struct Reads {
    log_node: (f64, i64),
    log_since: (f64, i64),
    in_process_us: f64,
}

fn reads(cli: &str, store: &Store, dir: &Path, node: Id) -> Reads {
    let d = dir.to_str().expect("path");
    let hex = node.hex();
    let head = store.version().expect("version");
    let since = head.saturating_sub(10).to_string();
    let log_node = runs(cli, &["--dir", d, "log", &hex], 15);
    let log_since = runs(cli, &["--dir", d, "log", "--since", &since], 15);
    let fresh = Store::open(Some(dir)).expect("open");
    let in_process_us = median(
        (0..50)
            .map(|_| {
                let t = Instant::now();
                let h = fresh.history(Some(node)).expect("history");
                assert!(!h.is_empty());
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect(),
    );
    Reads {
        log_node,
        log_since,
        in_process_us,
    }
}

/// Bytes in the files directly in `dir` whose names end with `ext`.
fn bytes_in(dir: &Path, ext: &str) -> u64 {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().ends_with(ext))
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// The `at` of the first line of the oldest live segment (or of the file being written).
fn oldest_live_at(dir: &Path) -> u64 {
    let mut segs: Vec<PathBuf> = std::fs::read_dir(dir.join("history"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect()
        })
        .unwrap_or_default();
    segs.sort();
    let first = segs
        .first()
        .cloned()
        .unwrap_or_else(|| dir.join("history.jsonl"));
    let text = std::fs::read_to_string(first).expect("segment");
    let line: serde_json::Value =
        serde_json::from_str(text.lines().next().expect("a line")).expect("json");
    line["at"].as_u64().expect("at")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let cli = args
        .iter()
        .position(|a| a == "--cli")
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| "target/release/claimdag".into());
    let events: u64 = if quick { 200_000 } else { 1_000_000 };
    let work = PathBuf::from("target/bench-work/history");
    std::fs::create_dir_all(&work).expect("work dir");

    let (small, first) = grown(&work.join("empty"), 1011, 1000, None);
    let empty = reads(&cli, &small, &work.join("empty"), first);
    let (big, first) = grown(&work.join("long"), events, 1000, None);
    let long = reads(&cli, &big, &work.join("long"), first);
    println!("### The history at {events} events\n");
    println!(
        "`log NODE` of a node with 11 events, written first; then 1,000 other nodes claimed \
         and released until the history holds {events} events; the same reads on a \
         history of 1,011. Medians of 15 runs of the command (its start-up included), the \
         peak resident memory of the largest.\n"
    );
    println!("| read | 1,011 events | {events} events | ratio | goal |");
    println!("| --- | ---: | ---: | ---: | --- |");
    let row = |what: &str, a: (f64, i64), b: (f64, i64), goal: &str| {
        println!(
            "| {what} | {:.2} ms, {:.1} MB | {:.2} ms, {:.1} MB | {:.2}x | {goal} |",
            a.0,
            a.1 as f64 / 1024.0,
            b.0,
            b.1 as f64 / 1024.0,
            b.0 / a.0
        );
    };
    row(
        "`claimdag log NODE`",
        empty.log_node,
        long.log_node,
        "at most 10 ms and 20 MB",
    );
    row(
        "`claimdag log --since HEAD-10`",
        empty.log_since,
        long.log_since,
        "what it prints",
    );
    println!(
        "| `Store::history(Some(node))` in process | {:.0} us | {:.0} us | {:.2}x | |",
        empty.in_process_us,
        long.in_process_us,
        long.in_process_us / empty.in_process_us
    );

    // Retention: the same number of events over 30 simulated days, keeping 7.
    let step = 30 * DAY_MS / events;
    let dir = work.join("keep");
    let (kept, _) = grown(&dir, events, step, Some("7d"));
    let now = kept.now().expect("now");
    let live_days = (now - oldest_live_at(&dir)) as f64 / DAY_MS as f64;
    let live = bytes_in(&dir.join("history"), ".jsonl") + bytes_in(&dir, "history.jsonl");
    let archived = bytes_in(&dir.join("history").join("archive"), ".jsonl.gz");
    println!("\n### Retention: `history_keep 7d`, {events} events over 30 simulated days\n");
    println!("| measure | value | goal |");
    println!("| --- | ---: | --- |");
    println!("| days of history in live segments | {live_days:.2} | at most 8 |");
    println!(
        "| live segments (uncompressed) | {:.1} MB | |",
        live as f64 / 1e6
    );
    println!("| archive (gzip) | {:.1} MB | |", archived as f64 / 1e6);
    let all = kept.history_archived(0, None).expect("log --all").len();
    println!("| events `log --all` reads | {all} | all {events} |");
}
