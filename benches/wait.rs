//! Waiting for work, side by side in one run: how soon a waiting worker in another process
//! gets the node a `complete` made ready, and what waiting costs in CPU while nothing
//! happens, for `claim-next --wait` (the store wakes the waiter) against the loop users
//! write without it (`claim_next`, then sleep 10 ms, again), on the directory store and on
//! PostgreSQL; and 8 worker processes draining 1,000 nodes whose readiness trickles in
//! (250 layers of 4, each layer waiting on the one before), both ways.
//!
//!     cargo bench --bench wait -- [--quick] [--url URL]
//!
//! Workers are processes: this program started again in a worker mode, holding one store
//! handle, as a harness's worker would. Without `--url` a throwaway PostgreSQL server is
//! started with scripts/pg.sh. Prints a Markdown table on stdout; it never fails on a time.

#[path = "common/pg.rs"]
mod pg;

use claimdag::rules::{Plan, PlanNode};
use claimdag::{Actor, ClaimNextOptions, Id, Status, Store};
use pg::{schema, server};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The polling loop's sleep between tries.
const POLL: Duration = Duration::from_millis(10);

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Wait,
    Poll,
}

impl Mode {
    fn arg(self) -> &'static str {
        match self {
            Mode::Wait => "wait",
            Mode::Poll => "poll",
        }
    }
    fn label(self) -> &'static str {
        match self {
            Mode::Wait => "`claim_next` with a wait",
            Mode::Poll => "polling loop, 10 ms sleep",
        }
    }
}

fn open(dir: &str) -> Store {
    Store::open(Some(Path::new(dir))).expect("open the store")
}

/// One claim, by `mode`; `None` when `budget` ran out first.
fn claim_one(store: &Store, me: Actor, mode: Mode, budget: Duration) -> Option<(Id, u64)> {
    match mode {
        Mode::Wait => {
            let wait = budget.into();
            let got = store
                .claim_next_with(
                    "",
                    me,
                    ClaimNextOptions {
                        wait,
                        ..Default::default()
                    },
                )
                .expect("claim_next_with");
            got.first().map(|g| (g.id, g.generation))
        }
        Mode::Poll => {
            let end = Instant::now() + budget;
            loop {
                if let Some(c) = store.claim_next("", me, None, None).expect("claim_next") {
                    return Some(c);
                }
                if Instant::now() >= end {
                    return None;
                }
                std::thread::sleep(POLL);
            }
        }
    }
}

/// The worker modes: `once` claims one node and prints it; `drain` claims and completes
/// until no node is left to do.
fn child(what: &str, mode: Mode, dir: &str, who: &str) {
    let store = open(dir);
    let me = Actor::from_name(who).expect("actor");
    // Loaded and ready to wait.
    println!("ready");
    std::io::stdout().flush().ok();
    match what {
        "once" => {
            if let Some((id, g)) = claim_one(&store, me, mode, Duration::from_secs(120)) {
                println!("{id} {g}");
            }
        }
        _ => loop {
            match claim_one(&store, me, mode, Duration::from_millis(500)) {
                Some((id, g)) => store
                    .complete(id, Status::Done, g, Some(me), None)
                    .expect("complete"),
                None => {
                    let left = claimdag::ListFilter {
                        status: Some("todo".into()),
                        ..claimdag::ListFilter::default()
                    };
                    if store.list(&left).expect("list").is_empty() {
                        return;
                    }
                }
            }
        },
    }
}

fn spawn(
    what: &str,
    mode: Mode,
    dir: &str,
    who: &str,
) -> (Child, BufReader<std::process::ChildStdout>) {
    let mut c = Command::new(std::env::current_exe().expect("this program"))
        .args(["--child", what, mode.arg(), dir, who])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start a worker");
    let mut out = BufReader::new(c.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("the worker starts");
    assert_eq!(line.trim(), "ready");
    (c, out)
}

/// CPU seconds a process has used so far (user + system), from /proc.
fn cpu_s(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or_default();
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = f.get(11).and_then(|u| u.parse::<f64>().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    // SAFETY: sysconf has no preconditions.
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// CPU seconds of every waited-for child so far.
fn children_cpu_s() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn pct(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Wake-up latency: per round, a node waits on one the bench holds; a worker process waits
/// for work; the bench completes its node; the time from that `complete` returning to the
/// worker printing its claim. Median and p99 in ms.
fn wake(dir: &str, mode: Mode, rounds: usize) -> (f64, f64) {
    let store = open(dir);
    let lead = Actor::from_name("lead").unwrap();
    let mut ms = Vec::new();
    for r in 0..rounds {
        let a = store
            .upsert(claimdag::Upsert {
                summary: format!("{} first {r}", mode.arg()),
                ..claimdag::Upsert::default()
            })
            .unwrap();
        let b = store
            .upsert(claimdag::Upsert {
                summary: format!("{} then {r}", mode.arg()),
                ..claimdag::Upsert::default()
            })
            .unwrap();
        store.link(a, b, false).unwrap();
        let g = store.claim(a, lead, None, None).unwrap();
        let (mut c, mut out) = spawn("once", mode, dir, &format!("{}-w{r}", mode.arg()));
        // Let it settle into its wait.
        std::thread::sleep(Duration::from_millis(150));
        store
            .complete(a, Status::Done, g, Some(lead), None)
            .unwrap();
        let t0 = Instant::now();
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
        assert!(line.starts_with(&b.hex()), "the worker got {line}");
        c.wait().unwrap();
    }
    (pct(ms.clone(), 0.5), pct(ms, 0.99))
}

/// CPU seconds per second of 8 idle workers (nothing ready, a claim held), measured over
/// `secs` after they settled.
fn idle_cpu(dir: &str, mode: Mode, secs: f64) -> f64 {
    let store = open(dir);
    let lead = Actor::from_name("lead").unwrap();
    let n = store
        .upsert(claimdag::Upsert {
            summary: format!("held while idle {}", mode.arg()),
            ..claimdag::Upsert::default()
        })
        .unwrap();
    let g = store.claim(n, lead, None, Some(600_000)).unwrap();
    let kids: Vec<_> = (0..8)
        .map(|k| spawn("once", mode, dir, &format!("{}-idle{k}", mode.arg())))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let before: f64 = kids.iter().map(|(c, _)| cpu_s(c.id())).sum();
    std::thread::sleep(Duration::from_secs_f64(secs));
    let after: f64 = kids.iter().map(|(c, _)| cpu_s(c.id())).sum();
    for (mut c, _) in kids {
        let _ = c.kill();
        let _ = c.wait();
    }
    store
        .complete(n, Status::Done, g, Some(lead), None)
        .unwrap();
    (after - before) / secs
}

/// 8 workers drain 1,000 nodes in 250 layers of 4: wall seconds and CPU seconds.
fn drain(dir: &str, mode: Mode) -> (f64, f64) {
    let store = open(dir);
    let mut nodes = Vec::new();
    for layer in 0..250 {
        for k in 0..4 {
            let deps = if layer == 0 {
                Vec::new()
            } else {
                (0..4).map(|j| format!("l{}n{j}", layer - 1)).collect()
            };
            nodes.push(PlanNode {
                key: format!("l{layer}n{k}"),
                summary: format!("{} layer {layer} node {k}", mode.arg()),
                deps,
                ..PlanNode::default()
            });
        }
    }
    store.import("", Plan { nodes }).unwrap();
    let cpu0 = children_cpu_s();
    let t0 = Instant::now();
    let kids: Vec<_> = (0..8)
        .map(|k| spawn("drain", mode, dir, &format!("d{k}")))
        .collect();
    for (mut c, _) in kids {
        c.wait().unwrap();
    }
    (t0.elapsed().as_secs_f64(), children_cpu_s() - cpu0)
}

/// The median round trip of the cheapest call to the server (the store's version).
fn round_trip_ms(url: &str) -> f64 {
    let s = open(url);
    let mut v = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        s.version().unwrap();
        v.push(t.elapsed().as_secs_f64() * 1e3);
    }
    pct(v, 0.5)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        let mode = if args[2] == "wait" {
            Mode::Wait
        } else {
            Mode::Poll
        };
        child(&args[1], mode, &args[3], &args[4]);
        return;
    }
    let quick = args.iter().any(|a| a == "--quick")
        || std::env::var("QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
    let url = args
        .iter()
        .position(|a| a == "--url")
        .and_then(|i| args.get(i + 1).cloned());
    let rounds = if quick { 15 } else { 40 };
    let idle_secs = if quick { 2.0 } else { 4.0 };
    let tmp = tempfile::tempdir().expect("temporary directory");
    let dir = |name: &str| tmp.path().join(name).to_string_lossy().into_owned();
    let pg = server(url, "wait");

    println!(
        "| measure | {} | {} | ratio |",
        Mode::Wait.label(),
        Mode::Poll.label()
    );
    println!("| --- | ---: | ---: | ---: |");
    let row = |what: &str, w: f64, p: f64, unit: &str, digits: usize| {
        let ratio = if w > 0.0 {
            format!("{:.1}x", p / w)
        } else {
            "no CPU at all".into()
        };
        println!("| {what} | {w:.digits$} {unit} | {p:.digits$} {unit} | {ratio} |");
    };
    for (name, target) in [
        ("directory store", Some(dir("wake"))),
        ("PostgreSQL", pg.as_ref().map(|s| schema(&s.url, "wake"))),
    ] {
        let Some(target) = target else {
            println!("| {name}: not measured (no PostgreSQL server could be started) | | | |");
            continue;
        };
        let (wm, wp) = wake(&target, Mode::Wait, rounds);
        let (pm, pp) = wake(&target, Mode::Poll, rounds);
        row(
            &format!("{name}: wake-up, complete to claim in another process, median"),
            wm,
            pm,
            "ms",
            2,
        );
        row(&format!("{name}: the same, p99"), wp, pp, "ms", 2);
        if name == "PostgreSQL" {
            println!(
                "| PostgreSQL: the server's round trip (median) | {:.2} ms | | |",
                round_trip_ms(&target)
            );
        }
        let wi = idle_cpu(&target, Mode::Wait, idle_secs);
        let pi = idle_cpu(&target, Mode::Poll, idle_secs);
        row(
            &format!("{name}: CPU of 8 idle workers (CPU seconds per second)"),
            wi,
            pi,
            "s/s",
            3,
        );
    }
    let (wt, wc) = drain(&dir("drain-wait"), Mode::Wait);
    let (pt, pc) = drain(&dir("drain-poll"), Mode::Poll);
    row(
        "directory store: 8 workers drain 1,000 nodes in layers of 4, wall time",
        wt,
        pt,
        "s",
        2,
    );
    row(
        "directory store: the same, CPU seconds of all workers",
        wc,
        pc,
        "s",
        2,
    );
    drop(pg);
}
