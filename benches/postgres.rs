//! The PostgreSQL backend side by side, in one run: claim + complete cycles per second for
//! 1, 4 and 16 workers (threads, one connection each, as separate hosts would have) at 1k
//! and 100k nodes, against a plain job queue on the same server (`SELECT ... FOR UPDATE SKIP
//! LOCKED` + `UPDATE`, as River and Oban claim: no DAG, no fence, no history), and against
//! the embedded store, with the server's durability as shipped (`fsync` and
//! `synchronous_commit` on) and, separately, off.
//!
//!     cargo bench --bench postgres -- [--quick] [--url URL]
//!
//! Without `--url` it starts a throwaway server with scripts/pg.sh. Prints a Markdown table
//! on stdout (and `pg<TAB>key<TAB>value` lines on stderr); it never fails on a time.

use claimdag::rules::{Plan, PlanNode};
use claimdag::store::{embedded::Tuning, SystemClock};
use claimdag::{Actor, Status, Store};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Args {
    quick: bool,
    url: Option<String>,
}

fn args() -> Args {
    let mut a = Args {
        quick: std::env::var("QUICK").is_ok_and(|v| !v.is_empty() && v != "0"),
        url: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "--quick" => a.quick = true,
            "--url" => a.url = it.next(),
            _ => {}
        }
    }
    a
}

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

/// Runs `workers` threads doing `cycle` for `secs`; returns cycles per second.
fn rate<S: Send + 'static>(
    workers: usize,
    secs: f64,
    setup: impl Fn(usize) -> S,
    cycle: impl Fn(&mut S, usize) -> bool + Send + Sync + 'static,
) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let cycle = Arc::new(cycle);
    let states: Vec<S> = (0..workers).map(&setup).collect();
    let start = Instant::now();
    let handles: Vec<_> = states
        .into_iter()
        .enumerate()
        .map(|(w, mut st)| {
            let (stop, done, cycle) = (stop.clone(), done.clone(), cycle.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if !cycle(&mut st, w) {
                        break;
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    // Until the time is up, or every worker ran out of work.
    let deadline = start + Duration::from_secs_f64(secs);
    while Instant::now() < deadline && handles.iter().any(|h| !h.is_finished()) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let elapsed = start.elapsed().as_secs_f64();
    let cycles = done.load(Ordering::Relaxed) as f64;
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        let _ = h.join();
    }
    cycles / elapsed
}

fn actor(w: usize) -> Actor {
    Actor::from_name(&format!("bench-{w}")).expect("name")
}

/// claim_next + complete, 2 durable writes, on a claimdag store.
fn ours(store: &Store, workers: usize, secs: f64) -> f64 {
    let s = store.clone();
    rate(
        workers,
        secs,
        move |_| s.clone(),
        |s, w| match s.claim_next("", actor(w), None, Some(600_000)) {
            Ok(Some((id, g))) => s
                .complete(id, Status::Done, g, Some(actor(w)), None)
                .is_ok(),
            _ => false,
        },
    )
}

fn pg_store(base: &str, schema: &str, nodes: usize, sync: bool) -> Store {
    let sep = if base.contains('?') { '&' } else { '?' };
    let mut url = format!("{base}{sep}schema={schema}");
    if !sync {
        url.push_str("&options=-c%20synchronous_commit%3Doff");
    }
    let s = Store::open(Some(Path::new(&url))).expect("open");
    s.set_setting("max_held", "0").expect("config");
    s.import("", plan(nodes)).expect("import");
    s
}

fn dir_store(dir: &Path, nodes: usize, sync: bool) -> Store {
    let _ = std::fs::remove_dir_all(dir);
    let s = Store::with(
        dir.to_path_buf(),
        Tuning {
            sync,
            ..Tuning::default()
        },
        Arc::new(SystemClock),
    );
    s.set_setting("max_held", "0").expect("config");
    s.import("", plan(nodes)).expect("import");
    s
}

/// The plain queue: claim with SKIP LOCKED and an UPDATE, then complete with an UPDATE,
/// each its own transaction (2 commits a cycle, as ours).
fn queue(base: &str, table: &str, nodes: usize, workers: usize, secs: f64, sync: bool) -> f64 {
    let connect = || {
        let mut c =
            postgres::Client::connect(&base_conninfo(base), postgres::NoTls).expect("connect");
        if !sync {
            c.batch_execute("SET synchronous_commit = off")
                .expect("set");
        }
        c
    };
    let mut c = connect();
    c.batch_execute(&format!(
        "DROP TABLE IF EXISTS {table}; CREATE TABLE {table} (id bigserial PRIMARY KEY, \
         state text NOT NULL, holder text, updated_at timestamptz); \
         INSERT INTO {table} (state) SELECT 'ready' FROM generate_series(1, {nodes}); \
         CREATE INDEX ON {table} (id) WHERE state = 'ready'; ANALYZE {table};"
    ))
    .expect("queue table");
    let claim = format!(
        "UPDATE {table} SET state = 'claimed', holder = $1, updated_at = now() WHERE id = \
         (SELECT id FROM {table} WHERE state = 'ready' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) \
         RETURNING id"
    );
    let complete = format!("UPDATE {table} SET state = 'done', updated_at = now() WHERE id = $1");
    rate(
        workers,
        secs,
        move |_| (connect(), claim.clone(), complete.clone()),
        |(c, claim, complete), w| {
            let me = format!("w{w}");
            match c.query_opt(claim.as_str(), &[&me]) {
                Ok(Some(row)) => {
                    let id: i64 = row.get(0);
                    c.execute(complete.as_str(), &[&id]).is_ok()
                }
                _ => false,
            }
        },
    )
}

/// The server's URL as libpq words the plain client reads (no claimdag parameters).
fn base_conninfo(base: &str) -> String {
    base.to_string()
}

fn set_fsync(base: &str, on: bool) {
    let mut c = postgres::Client::connect(base, postgres::NoTls).expect("connect");
    // ALTER SYSTEM cannot share a (simple-protocol) statement batch with anything.
    c.batch_execute(&format!(
        "ALTER SYSTEM SET fsync = {}",
        if on { "on" } else { "off" }
    ))
    .expect("fsync setting");
    c.batch_execute("SELECT pg_reload_conf()").expect("reload");
    std::thread::sleep(Duration::from_millis(300));
}

fn main() {
    let a = args();
    let (base, dir) = match a.url.clone() {
        Some(u) => (u, None),
        None => {
            let dir =
                std::env::temp_dir().join(format!("claimdag-bench-pg-{}", std::process::id()));
            let out = std::process::Command::new("bash")
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pg.sh"))
                .arg("start")
                .arg(&dir)
                .output()
                .expect("scripts/pg.sh");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            (
                String::from_utf8_lossy(&out.stdout).trim().to_string(),
                Some(dir),
            )
        }
    };
    let secs = if a.quick { 1.0 } else { 3.0 };
    let sizes: &[usize] = if a.quick { &[1_000] } else { &[1_000, 100_000] };
    let work: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-work/pg-embedded");
    println!("| durability | nodes | workers | ours on PostgreSQL (cycles/s) | plain queue (cycles/s) | ours / queue | embedded store (cycles/s) | PostgreSQL / embedded |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut n = 0;
    for sync in [true, false] {
        set_fsync(&base, sync);
        for &nodes in sizes {
            for workers in [1usize, 4, 16] {
                n += 1;
                let size = nodes;
                let ours_pg = {
                    let s = pg_store(&base, &format!("bench_{n}"), size, sync);
                    ours(&s, workers, secs)
                };
                let q = queue(
                    &base,
                    &format!("bench_queue_{n}"),
                    size,
                    workers,
                    secs,
                    sync,
                );
                let emb = {
                    let s = dir_store(&work, size, sync);
                    ours(&s, workers, secs)
                };
                let label = if sync { "fsync on" } else { "fsync off" };
                println!(
                    "| {label} | {size} | {workers} | {ours_pg:.0} | {q:.0} | {:.2}x | {emb:.0} | {:.2}x |",
                    ours_pg / q,
                    ours_pg / emb
                );
                eprintln!("pg\tcycles_per_s@{label}/{size}/{workers}\t{ours_pg:.1}\tqueue {q:.1} embedded {emb:.1}");
            }
        }
    }
    set_fsync(&base, true);
    if let Some(d) = dir {
        let _ = std::process::Command::new("bash")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pg.sh"))
            .arg("stop")
            .arg(&d)
            .status();
    }
}
