//! The PostgreSQL backend side by side, in one run, with the server's durability as shipped
//! (`fsync` and `synchronous_commit` on) unless a table says otherwise. Every worker is a
//! thread with a store handle of its own (its own connection and cache, as separate hosts
//! would have).
//!
//! 1. Claim + complete cycles per second for 1, 4 and 16 workers at 1k and 100k nodes,
//!    against a plain job queue on the same server (`SELECT ... FOR UPDATE SKIP LOCKED` +
//!    `UPDATE`, as River and Oban claim: no DAG, no fence, no history) and against the
//!    embedded store; with durability on and, separately, off.
//! 2. 16 workers spread over 4 workspaces against 16 workers in one.
//! 3. 16 workers claiming 10 nodes a write (`claim_next_with`, a count) and finishing them in one
//!    (`complete_many`), in nodes per second, against the queue's single-item rate.
//! 4. A long run of 8 workers (10 minutes; 1 with `--quick`) while another connection holds
//!    a transaction (and its snapshot) open for the first half: the rate minute by minute,
//!    and the tables' sizes.
//!
//! Each worker's handle starts before its window as a long-lived worker starts, once: its
//! first load and its pick order (the time that took is printed). Each figure is printed
//! with its goal. It never fails on a time.
//!
//!     cargo bench --bench postgres -- [--quick] [--url URL] [--long SECONDS]
//!     cargo bench --bench postgres -- --one NODES WORKERS [--spaces K] [--count N]
//!                                     [--combine always|never]
//!                                                         (one run of ours; N a write;
//!                                                          the combined writes forced on
//!                                                          or off)
//!     cargo bench --bench postgres -- --only-long SECONDS                 (section 4 alone)
//!
//! Without `--url` it starts a throwaway server with scripts/pg.sh. Prints Markdown on
//! stdout (and `pg<TAB>key<TAB>value` lines on stderr).

#[path = "common/pg.rs"]
#[allow(dead_code)]
mod pg;

use claimdag::rules::{Finish, Plan, PlanNode};
use claimdag::store::{embedded::Tuning, SystemClock};
use claimdag::{Actor, ClaimNextOptions, Status, Store};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Args {
    quick: bool,
    url: Option<String>,
    long: Option<f64>,
    /// `--one NODES WORKERS`: only that run of ours, for a profiler.
    one: Option<(usize, usize)>,
    /// `--spaces K`: the workers of `--one` spread over K workspaces of NODES nodes each.
    spaces: usize,
    /// `--count N`: the workers of `--one` claim up to N nodes a write and finish them in one.
    count: u32,
    /// `--only-long SECONDS`: the long run alone.
    only_long: bool,
    /// `--combine always|never`: the workers of `--one` combine every request, or none.
    combine: Option<String>,
}

fn args() -> Args {
    let mut a = Args {
        quick: std::env::var("QUICK").is_ok_and(|v| !v.is_empty() && v != "0"),
        url: None,
        long: None,
        one: None,
        spaces: 1,
        count: 1,
        only_long: false,
        combine: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "--quick" => a.quick = true,
            "--url" => a.url = it.next(),
            "--long" => a.long = it.next().and_then(|s| s.parse().ok()),
            "--only-long" => {
                a.long = it.next().and_then(|s| s.parse().ok());
                a.only_long = true;
            }
            "--spaces" => a.spaces = it.next().and_then(|s| s.parse().ok()).unwrap_or(1),
            "--combine" => a.combine = it.next(),
            "--count" => a.count = it.next().and_then(|s| s.parse().ok()).unwrap_or(1),
            "--one" => {
                let n = it.next().and_then(|s| s.parse().ok());
                let w = it.next().and_then(|s| s.parse().ok());
                a.one = n.zip(w);
            }
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

/// Processor time, in clock ticks since boot, at a moment: the machine's busy time
/// (`/proc/stat`: user, nice, system, irq and softirq; not idle, iowait or time stolen by a
/// hypervisor) and this process's own (`/proc/self/stat`: the workers, the client side).
#[derive(Clone, Copy)]
struct Ticks {
    at: Instant,
    busy: u64,
    client: u64,
}

impl Ticks {
    fn now() -> Ticks {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let cpu: Vec<u64> = stat
            .lines()
            .next()
            .unwrap_or("")
            .split_whitespace()
            .skip(1)
            .take(7)
            .filter_map(|x| x.parse().ok())
            .collect();
        let busy = [0, 1, 2, 5, 6]
            .iter()
            .map(|&i| cpu.get(i).copied().unwrap_or(0))
            .sum();
        let own = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
        let rest = own.rsplit_once(')').map_or("", |(_, r)| r);
        let client = rest
            .split_whitespace()
            .skip(11)
            .take(2)
            .filter_map(|x| x.parse::<u64>().ok())
            .sum();
        Ticks {
            at: Instant::now(),
            busy,
            client,
        }
    }
}

/// The processors of the machine (the `cpuN` lines of `/proc/stat`, which the busy time
/// counts), at least 1.
fn processors() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let n = stat
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    n.max(1) as f64
}

/// Where the processors went in a window: the share of the machine busy, and milliseconds
/// of processor time an item took in this process (client) and elsewhere (mostly the server).
#[derive(Clone, Copy, Default)]
struct CpuUse {
    busy: f64,
    client_ms: f64,
    server_ms: f64,
}

impl CpuUse {
    fn between(a: Ticks, b: Ticks, items: f64) -> CpuUse {
        // Both files count in ticks of one processor.
        // SAFETY: sysconf reads a constant of the system.
        let tick_ms = 1000.0 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        let busy_ms = b.busy.saturating_sub(a.busy) as f64 * tick_ms;
        let client_ms = b.client.saturating_sub(a.client) as f64 * tick_ms;
        let wall_ms = (b.at - a.at).as_secs_f64() * 1000.0;
        let per = |ms: f64| if items > 0.0 { ms / items } else { 0.0 };
        CpuUse {
            busy: if wall_ms > 0.0 {
                busy_ms / (wall_ms * processors())
            } else {
                0.0
            },
            client_ms: per(client_ms),
            server_ms: per((busy_ms - client_ms).max(0.0)),
        }
    }

    /// For a table's cell.
    fn cell(&self) -> String {
        format!(
            "{:.0}% busy, {:.2} + {:.2} ms",
            self.busy * 100.0,
            self.client_ms,
            self.server_ms
        )
    }
}

/// Runs one thread per state doing `cycle` (which answers how many items it did, 0 when
/// out of work) for `secs`; returns items per second.
fn rate<S: Send + 'static>(
    states: Vec<S>,
    secs: f64,
    cycle: impl Fn(&mut S, usize) -> u64 + Send + Sync + 'static,
) -> f64 {
    rate_cpu(states, secs, cycle).0
}

/// [`rate`], and where the processors went meanwhile.
fn rate_cpu<S: Send + 'static>(
    states: Vec<S>,
    secs: f64,
    cycle: impl Fn(&mut S, usize) -> u64 + Send + Sync + 'static,
) -> (f64, CpuUse) {
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let handles = spawn(states, &stop, &done, cycle);
    let t0 = Ticks::now();
    let start = Instant::now();
    // Until the time is up, or every worker ran out of work.
    let deadline = start + Duration::from_secs_f64(secs);
    while Instant::now() < deadline && handles.iter().any(|h| !h.is_finished()) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let elapsed = start.elapsed().as_secs_f64();
    let items = done.load(Ordering::Relaxed) as f64;
    let cpu = CpuUse::between(t0, Ticks::now(), items);
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        let _ = h.join();
    }
    (items / elapsed, cpu)
}

fn spawn<S: Send + 'static>(
    states: Vec<S>,
    stop: &Arc<AtomicBool>,
    done: &Arc<AtomicU64>,
    cycle: impl Fn(&mut S, usize) -> u64 + Send + Sync + 'static,
) -> Vec<std::thread::JoinHandle<()>> {
    let cycle = Arc::new(cycle);
    states
        .into_iter()
        .enumerate()
        .map(|(w, mut st)| {
            let (stop, done, cycle) = (stop.clone(), done.clone(), cycle.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let n = cycle(&mut st, w);
                    if n == 0 {
                        break;
                    }
                    done.fetch_add(n, Ordering::Relaxed);
                }
            })
        })
        .collect()
}

fn actor(w: usize) -> Actor {
    Actor::from_name(&format!("bench-{w}")).expect("name")
}

/// A worker: a store handle of its own, with its cache loaded, and its workspace.
struct Worker {
    store: Store,
    workspace: String,
}

/// One handle per worker on `url`, worker `w` in workspace `spaces[w % spaces.len()]`
/// ([`started_workers`]).
fn workers(url: &str, n: usize, spaces: &[String]) -> Vec<Worker> {
    started_workers(url, n, spaces).0
}

/// [`workers`], and the mean time a handle took to start, in milliseconds. Each is started
/// as a long-lived worker starts, before any window: its cache loaded, and its pick order
/// built (a handle builds it the second time it picks, once in its life, and keeps it up
/// to date from then on).
fn started_workers(url: &str, n: usize, spaces: &[String]) -> (Vec<Worker>, f64) {
    let t = Instant::now();
    let all: Vec<Worker> = (0..n)
        .map(|w| {
            let store = Store::open(Some(Path::new(url))).expect("open");
            store.now().expect("first load");
            let workspace = spaces[w % spaces.len()].clone();
            for _ in 0..2 {
                store.next(&workspace, None).expect("first picks");
            }
            Worker { store, workspace }
        })
        .collect();
    let ms = t.elapsed().as_secs_f64() * 1000.0 / n.max(1) as f64;
    (all, ms)
}

/// claim_next + complete, 2 durable writes.
fn one_at_a_time(w: &mut Worker, i: usize) -> u64 {
    match w
        .store
        .claim_next(&w.workspace, actor(i), None, Some(600_000))
    {
        Ok(Some((id, g))) => w
            .store
            .complete(id, Status::Done, g, Some(actor(i)), None)
            .map_or(0, |_| 1),
        _ => 0,
    }
}

/// claim_next_with of up to `count` + complete_many, 2 durable writes for up to `count`
/// nodes.
fn many_at_a_time(w: &mut Worker, i: usize, count: u32) -> u64 {
    let pick = ClaimNextOptions {
        ttl_ms: Some(600_000),
        count: Some(count),
        ..ClaimNextOptions::default()
    };
    let got = match w.store.claim_next_with(&w.workspace, actor(i), pick) {
        Ok(g) if !g.is_empty() => g,
        _ => return 0,
    };
    let all: Vec<Finish> = got
        .iter()
        .map(|g| Finish {
            node: g.id,
            status: Status::Done,
            gen: g.generation,
            actor: Some(actor(i)),
            note: None,
            output: None,
            held: true,
        })
        .collect();
    w.store.complete_many(all).map_or(0, |d| d.len() as u64)
}

/// A new store in schema `schema` on `base`, with `nodes` ready nodes in each of `spaces`.
fn pg_store(base: &str, schema: &str, nodes: usize, spaces: &[String], sync: bool) -> String {
    let sep = if base.contains('?') { '&' } else { '?' };
    let mut url = format!("{base}{sep}schema={schema}");
    if !sync {
        url.push_str("&options=-c%20synchronous_commit%3Doff");
    }
    let s = Store::open(Some(Path::new(&url))).expect("open");
    s.set_setting("max_held", "0").expect("config");
    for ws in spaces {
        s.import(ws, plan(nodes)).expect("import");
    }
    // As autovacuum leaves the tables of a store that has run a while (and as the queue's
    // table is analyzed): not its first pass after the import inside a measured window.
    let mut c = postgres::Client::connect(base, postgres::NoTls).expect("connect");
    c.batch_execute(&format!(
        "VACUUM (ANALYZE) \"{schema}\".nodes, \"{schema}\".history"
    ))
    .expect("vacuum");
    url
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
fn queue(
    base: &str,
    table: &str,
    nodes: usize,
    workers: usize,
    secs: f64,
    sync: bool,
) -> (f64, CpuUse) {
    let connect = || {
        let mut c = postgres::Client::connect(base, postgres::NoTls).expect("connect");
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
    let states = (0..workers)
        .map(|_| (connect(), claim.clone(), complete.clone()))
        .collect();
    rate_cpu(states, secs, |(c, claim, complete), w| {
        let me = format!("w{w}");
        match c.query_opt(claim.as_str(), &[&me]) {
            Ok(Some(row)) => {
                let id: i64 = row.get(0);
                c.execute(complete.as_str(), &[&id]).map_or(0, |_| 1)
            }
            _ => 0,
        }
    })
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

fn goal(what: &str, figure: f64, goal: f64, unit: &str) {
    let verdict = if figure >= goal { "met" } else { "NOT met" };
    println!("| {what} | {figure:.2}{unit} | at least {goal:.2}{unit} | {verdict} |");
    eprintln!("pg\tgoal@{what}\t{figure:.3}\t{verdict}");
}

/// Rates of the first table: (durability, nodes, workers) -> (ours, queue).
/// The processors' use of each, too.
type Rates = std::collections::HashMap<(bool, usize, usize), (f64, f64, CpuUse, CpuUse)>;

fn cycles_table(base: &str, quick: bool, secs: f64, n: &mut usize) -> Rates {
    let sizes: &[usize] = if quick { &[1_000] } else { &[1_000, 100_000] };
    let work: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-work/pg-embedded");
    let one = [String::new()];
    let mut rates = Rates::new();
    let mut starts = Vec::new();
    println!("### Claim + complete cycles per second\n");
    println!("| durability | nodes | workers | ours on PostgreSQL (cycles/s) | processors (ours) | plain queue (cycles/s) | processors (queue) | ours / queue | embedded store (cycles/s) | PostgreSQL / embedded |");
    println!("|---|---:|---:|---:|---|---:|---|---:|---:|---:|");
    for sync in [true, false] {
        set_fsync(base, sync);
        for &size in sizes {
            for workers_n in [1usize, 4, 16] {
                *n += 1;
                let url = pg_store(base, &format!("bench_{n}"), size, &one, sync);
                let (handles, started) = started_workers(&url, workers_n, &one);
                let (ours, cpu) = rate_cpu(handles, secs, one_at_a_time);
                if sync && workers_n == 1 {
                    starts.push(format!("{size} nodes {started:.0} ms"));
                }
                let (q, qcpu) = queue(
                    base,
                    &format!("bench_queue_{n}"),
                    size,
                    workers_n,
                    secs,
                    sync,
                );
                let emb = {
                    let s = dir_store(&work, size, sync);
                    let states = (0..workers_n)
                        .map(|_| Worker {
                            store: s.clone(),
                            workspace: String::new(),
                        })
                        .collect();
                    rate(states, secs, one_at_a_time)
                };
                let label = if sync { "fsync on" } else { "fsync off" };
                println!(
                    "| {label} | {size} | {workers_n} | {ours:.0} | {} | {q:.0} | {} | {:.2}x | {emb:.0} | {:.2}x |",
                    cpu.cell(),
                    qcpu.cell(),
                    ours / q,
                    ours / emb
                );
                eprintln!("pg\tcycles_per_s@{label}/{size}/{workers_n}\t{ours:.1}\tqueue {q:.1} embedded {emb:.1}");
                rates.insert((sync, size, workers_n), (ours, q, cpu, qcpu));
            }
        }
    }
    set_fsync(base, true);
    println!(
        "\nEach worker's handle starts before the window, as a long-lived worker starts once: \
         its first load and its pick order (built at its second pick) took {}.\n",
        starts.join(", ")
    );
    rates
}

/// Section 4: a long run with an old snapshot held for its first half.
fn long_run(base: &str, secs: f64, n: &mut usize) {
    *n += 1;
    let schema = format!("bench_{n}");
    let one = [String::new()];
    let url = pg_store(base, &schema, 2_000, &one, true);
    println!("\n### A long run: 8 workers, a transaction held open for the first half\n");
    println!("Each cycle is claim_next + complete + reopen (3 writes), so the nodes never run out; the rate is cycles per second in each window.\n");
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let handles = spawn(workers(&url, 8, &one), &stop, &done, |w, i| {
        match w.store.claim_next("", actor(i), None, Some(600_000)) {
            Ok(Some((id, g))) => {
                let ok = w
                    .store
                    .complete(id, Status::Done, g, Some(actor(i)), None)
                    .is_ok()
                    && w.store.reopen(id, None).is_ok();
                u64::from(ok)
            }
            _ => 0,
        }
    });
    let mut holder = postgres::Client::connect(base, postgres::NoTls).expect("connect");
    holder
        .batch_execute(&format!(
            "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM \"{schema}\".history"
        ))
        .expect("old snapshot");
    let mut sizes = postgres::Client::connect(base, postgres::NoTls).expect("connect");
    let size_of = |c: &mut postgres::Client| -> String {
        let r = c
            .query_one(
                &format!(
                    "SELECT pg_total_relation_size('\"{schema}\".nodes'), \
                     pg_indexes_size('\"{schema}\".nodes'), \
                     pg_total_relation_size('\"{schema}\".history')"
                ),
                &[],
            )
            .expect("sizes");
        let (nodes, indexes, history): (i64, i64, i64) = (r.get(0), r.get(1), r.get(2));
        format!(
            "nodes {} KiB (indexes {} KiB), history {} KiB",
            nodes / 1024,
            indexes / 1024,
            history / 1024
        )
    };
    let window = if secs >= 300.0 { 60.0 } else { secs / 10.0 };
    println!("| window | cycles/s | processors: busy, ms a cycle (client + server) | old snapshot held | tables |");
    println!("|---|---:|---|---|---|");
    let start = Instant::now();
    let mut rates = Vec::new();
    let mut last = 0;
    let mut held = true;
    let mut k = 0;
    let mut ticks = Ticks::now();
    while start.elapsed().as_secs_f64() + 1e-3 < secs {
        k += 1;
        let until = start + Duration::from_secs_f64(window * k as f64);
        std::thread::sleep(until.saturating_duration_since(Instant::now()));
        let now = done.load(Ordering::Relaxed);
        let r = (now - last) as f64 / window;
        let at = Ticks::now();
        let cpu = CpuUse::between(ticks, at, (now - last) as f64);
        ticks = at;
        last = now;
        rates.push(r);
        println!(
            "| {:.0}-{:.0} s | {r:.0} | {} | {} | {} |",
            window * (k - 1) as f64,
            window * k as f64,
            cpu.cell(),
            if held { "yes" } else { "no" },
            size_of(&mut sizes)
        );
        eprintln!("pg\tlong_rate@{k}\t{r:.1}");
        if held && start.elapsed().as_secs_f64() >= secs / 2.0 {
            holder
                .batch_execute("COMMIT")
                .expect("end the old snapshot");
            held = false;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        let _ = h.join();
    }
    let (first, last) = (rates[0], rates[rates.len() - 1]);
    println!();
    println!("| goal | figure | goal | |\n|---|---:|---:|---|");
    goal(
        "long run: last window / first window",
        last / first,
        0.8,
        "x",
    );
}

fn main() {
    let a = args();
    let server =
        pg::server(a.url.clone(), "postgres").expect("a PostgreSQL server (scripts/pg.sh)");
    let base = server.url.clone();
    let secs = if a.quick { 1.0 } else { 3.0 };
    if let Some((nodes, w)) = a.one {
        let spaces: Vec<String> = if a.spaces > 1 {
            (0..a.spaces).map(|i| format!("ws{i}")).collect()
        } else {
            vec![String::new()]
        };
        let url = pg_store(&base, "bench_one", nodes, &spaces, true);
        let (handles, started) = started_workers(&url, w, &spaces);
        for h in &handles {
            match a.combine.as_deref() {
                Some("always") => h.store.always_combine(),
                Some("never") => h.store.never_combine(),
                _ => {}
            }
        }
        let count = a.count;
        let (r, cpu) = rate_cpu(handles, secs * 3.0, move |w, i| match count {
            0 | 1 => one_at_a_time(w, i),
            _ => many_at_a_time(w, i, count),
        });
        let unit = if count > 1 { "nodes" } else { "cycles" };
        println!(
            "{nodes} nodes, {w} workers over {} workspaces, combined writes {}: {r:.0} \
             {unit}/s (a handle started in {started:.1} ms; processors, client + server a \
             cycle: {})",
            spaces.len(),
            a.combine.as_deref().unwrap_or("as contention says"),
            cpu.cell()
        );
        return;
    }
    let mut n = 0;
    if a.only_long {
        long_run(&base, a.long.unwrap_or(600.0), &mut n);
        return;
    }
    let rates = cycles_table(&base, a.quick, secs, &mut n);

    // Section 2: 16 workers in 4 workspaces against 16 in one, 4k nodes either way.
    let four: Vec<String> = (0..4).map(|i| format!("ws{i}")).collect();
    let one = [String::new()];
    n += 1;
    let url = pg_store(&base, &format!("bench_{n}"), 1_000, &four, true);
    let (spread, spread_cpu) = rate_cpu(workers(&url, 16, &four), secs, one_at_a_time);
    n += 1;
    let url = pg_store(&base, &format!("bench_{n}"), 4_000, &one, true);
    let (single, single_cpu) = rate_cpu(workers(&url, 16, &one), secs, one_at_a_time);

    // Section 3: batches of 10.
    n += 1;
    let url = pg_store(&base, &format!("bench_{n}"), 20_000, &one, true);
    let (batched, batched_cpu) = rate_cpu(workers(&url, 16, &one), secs, |w, i| {
        many_at_a_time(w, i, 10)
    });
    let (_, queue16, _, queue16_cpu) = rates[&(true, 1_000, 16)];

    println!("\n### Workspaces and batches (fsync on, 16 workers)\n");
    println!("| run | nodes/s | processors: busy, ms a node (client + server) |\n|---|---:|---|");
    for (run, r, cpu) in [
        ("16 workers over 4 workspaces", spread, spread_cpu),
        ("16 workers in one workspace", single, single_cpu),
        (
            "16 workers, 10 a write (claim_next_many + complete_many)",
            batched,
            batched_cpu,
        ),
        (
            "plain queue, 16 workers, one at a time",
            queue16,
            queue16_cpu,
        ),
    ] {
        println!("| {run} | {r:.0} | {} |", cpu.cell());
    }
    // What the machine's processors allow the 4 workspaces at the 1 workspace's cost a
    // node: every processor busy.
    let cores = processors();
    let cost = single_cpu.client_ms + single_cpu.server_ms;
    if cost > 0.0 {
        println!(
            "\nAt the cost a node of 16 workers in one workspace ({cost:.2} ms of processor), \
             this machine's {cores:.0} processors allow at most {:.0} nodes/s: {:.2}x that \
             run, whatever the workspaces.",
            cores * 1000.0 / cost,
            cores * 1000.0 / cost / single
        );
    }
    eprintln!("pg\tworkspaces@4x4\t{spread:.1}\tone {single:.1}");
    eprintln!("pg\tbatch10@16\t{batched:.1}\tqueue {queue16:.1}");

    println!("\n### Goals\n");
    println!("| goal | figure | goal | |\n|---|---:|---:|---|");
    goal("4 workspaces / 1, 16 workers", spread / single, 3.0, "x");
    let (o16, q16, _, _) = rates[&(true, 1_000, 16)];
    goal("16 workers one at a time / queue", o16 / q16, 0.5, "x");
    let o4 = rates[&(true, 1_000, 4)].0;
    goal("16 workers / 4 workers (ours)", o16 / o4, 1.0, "x");
    goal(
        "10 a write / queue one at a time",
        batched / queue16,
        1.0,
        "x",
    );
    if !a.quick {
        for w in [1usize, 4, 16] {
            let small = rates[&(true, 1_000, w)].0;
            let big = rates[&(true, 100_000, w)].0;
            goal(
                &format!("100k / 1k nodes, {w} workers"),
                big / small,
                0.8,
                "x",
            );
        }
    }
    let long = a.long.unwrap_or(if a.quick { 60.0 } else { 600.0 });
    if long > 0.0 {
        long_run(&base, long, &mut n);
    }
}
