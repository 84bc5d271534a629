//! Command-line measurements: one `claim` at 4,096 nodes (each run a fresh process claiming a
//! different node as a different actor), process start, one read, and 4 and 8 processes
//! draining 1,000 nodes with `claim-next` + `complete` loops; on our `claimdag` and, when
//! given, on the public claimdag 0.8 command (whose verbs and output for these steps match:
//! `claim ID --assignee A`, `claim-next --assignee A` printing `<id>  gen=<g>`, and
//! `complete ID --actor A --gen G`; it has no bulk import, so its store is made with one
//! `upsert` process per node).
//!
//!     cargo bench --bench cli -- --ours target/release/claimdag [--v08 PATH | --v08-missing WHY]
//!                                [--work DIR] [--quick]
//!
//! Only the child process is timed: from spawn to exit. Results on stdout, one a line:
//! `system<TAB>key<TAB>value<TAB>note`. It never fails on a time.

mod common;

use common::{emit, median, missing, note};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::Ordering::SeqCst;
use std::time::Instant;

const CLAIM_AT: usize = 4_096;
const DRAIN_NODES: usize = 1_000;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Ours,
    V08,
}

#[derive(Clone)]
struct Cli {
    kind: Kind,
    bin: PathBuf,
    system: &'static str,
}

fn actor(n: usize) -> String {
    format!("{n:032x}")
}

impl Cli {
    fn cmd(&self, dir: &Path) -> Command {
        let mut c = Command::new(&self.bin);
        c.env_remove("CLAIMDAG_WORKSPACE")
            .env_remove("CLAIMDAG_DIR")
            .arg("--dir")
            .arg(dir)
            .stdin(Stdio::null());
        c
    }

    /// Runs one command; returns its wall time in ms (spawn to exit) and its output.
    fn timed(&self, mut c: Command) -> (f64, Output) {
        let t = Instant::now();
        let out = c.output().expect("spawn the command");
        (t.elapsed().as_secs_f64() * 1e3, out)
    }

    fn claim(&self, dir: &Path, id: &str, who: usize) -> Command {
        let mut c = self.cmd(dir);
        c.args(["claim", id, "--assignee", &actor(who)]);
        c
    }

    fn read(&self, dir: &Path, id: &str) -> Command {
        let mut c = self.cmd(dir);
        c.args([
            match self.kind {
                Kind::Ours => "show",
                Kind::V08 => "get",
            },
            id,
        ]);
        c
    }

    fn claim_next(&self, dir: &Path, who: usize) -> Command {
        let mut c = self.cmd(dir);
        c.args(["claim-next", "--assignee", &actor(who)]);
        c
    }

    fn complete(&self, dir: &Path, id: &str, gen: &str, who: usize) -> Command {
        let mut c = self.cmd(dir);
        c.args(["complete", id, "--actor", &actor(who), "--gen", gen]);
        if self.kind == Kind::Ours {
            c.args(["--status", "done"]);
        }
        c
    }

    /// Creates `n` nodes: ours with one `import`, 0.8 with one `upsert` each (it has no bulk
    /// verb). Returns the ids and the seconds it took.
    fn create(&self, dir: &Path, n: usize, from: usize, work: &Path) -> (Vec<String>, f64) {
        match self.kind {
            Kind::Ours => {
                let plan = work.join(format!("plan-{n}.json"));
                let nodes: Vec<String> = (from..from + n)
                    .map(|i| format!("{{\"key\":\"n{i}\",\"summary\":\"bench node {i}\"}}"))
                    .collect();
                std::fs::write(&plan, format!("{{\"nodes\":[{}]}}", nodes.join(",")))
                    .expect("write plan");
                let mut c = self.cmd(dir);
                c.arg("import").arg(&plan);
                let (ms, out) = self.timed(c);
                check(&out, "import");
                let _ = std::fs::remove_file(&plan);
                let ids = String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .filter_map(|l| l.split_whitespace().next().map(str::to_string))
                    .collect();
                (ids, ms / 1e3)
            }
            Kind::V08 => {
                let mut ids = Vec::with_capacity(n);
                let mut total = 0.0;
                for i in from..from + n {
                    let mut c = self.cmd(dir);
                    c.args(["upsert", "--summary", &format!("bench node {i}")]);
                    let (ms, out) = self.timed(c);
                    check(&out, "upsert");
                    total += ms;
                    ids.push(String::from_utf8_lossy(&out.stdout).trim().to_string());
                }
                (ids, total / 1e3)
            }
        }
    }
}

fn check(out: &Output, what: &str) {
    if !out.status.success() {
        panic!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        if e.file_type().expect("type").is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
        }
    }
}

/// `procs` worker loops, each a sequence of `claim-next` and `complete` processes, drain the
/// store at `dir`: writes per second (two a node).
fn drain(cli: &Cli, dir: &Path, procs: usize, nodes: usize) -> f64 {
    let t = Instant::now();
    let done: usize = std::thread::scope(|s| {
        let workers: Vec<_> = (0..procs)
            .map(|k| {
                let who = 100 + k;
                s.spawn(move || {
                    let mut done = 0;
                    loop {
                        let out = cli.claim_next(dir, who).output().expect("claim-next");
                        if !out.status.success() {
                            break;
                        }
                        let text = String::from_utf8_lossy(&out.stdout).to_string();
                        let mut words = text.split_whitespace();
                        let id = words.next().expect("id").to_string();
                        let gen = words
                            .next()
                            .and_then(|g| g.strip_prefix("gen="))
                            .expect("gen=")
                            .to_string();
                        let out = cli
                            .complete(dir, &id, &gen, who)
                            .output()
                            .expect("complete");
                        check(&out, "complete");
                        done += 1;
                    }
                    done
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("worker")).sum()
    });
    let secs = t.elapsed().as_secs_f64();
    if done != nodes {
        note(&format!(
            "{}: drain finished {done} of {nodes} nodes",
            cli.system
        ));
    }
    2.0 * done as f64 / secs
}

/// The ceiling of a 4-process drain on this machine: the same loops, each step spawning
/// `/bin/true` instead of a `claimdag` process (two a node): steps per second.
fn drain_ceiling(procs: usize, nodes: usize) -> f64 {
    let left = std::sync::atomic::AtomicUsize::new(nodes);
    let t = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..procs {
            s.spawn(|| {
                while left
                    .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1))
                    .is_ok()
                {
                    for _ in 0..2 {
                        let st = Command::new("/bin/true").status().expect("/bin/true");
                        assert!(st.success());
                    }
                }
            });
        }
    });
    2.0 * nodes as f64 / t.elapsed().as_secs_f64()
}

/// A CLI process costs what it touches: `claim`, `show` and
/// `list --status claimed` on stores of 1,000 and 100,000 nodes, ours only (claimdag 0.8
/// has no bulk import: 100,000 upsert processes would take the run).
fn by_size(cli: &Cli, work: &Path, runs: usize) {
    for (n, label) in [(1_000, "1k"), (100_000, "100k")] {
        note(&format!(
            "ours: claim, show, list --status claimed at {label} nodes"
        ));
        let dir = work.join(format!("cli-size-{label}"));
        let _ = std::fs::remove_dir_all(&dir);
        let (ids, _) = cli.create(&dir, n, 0, work);
        let (mut claim, mut show, mut list) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..runs {
            let (ms, out) = cli.timed(cli.claim(&dir, &ids[i], 2_000 + i));
            check(&out, "claim");
            claim.push(ms);
            let (ms, out) = cli.timed(cli.read(&dir, &ids[n - 1 - i]));
            check(&out, "show");
            show.push(ms);
            let mut c = cli.cmd(&dir);
            c.args(["list", "--status", "claimed"]);
            let (ms, out) = cli.timed(c);
            check(&out, "list");
            list.push(ms);
        }
        emit(
            cli.system,
            &format!("cli_claim_ms@{label}"),
            median(claim),
            "median",
        );
        emit(
            cli.system,
            &format!("cli_show_ms@{label}"),
            median(show),
            "median",
        );
        emit(
            cli.system,
            &format!("cli_list_claimed_ms@{label}"),
            median(list),
            "median",
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// One command with its stores made: the seed of 4,096 nodes to claim in and a copy of
/// its first 1,000 nodes to drain.
struct Prepared {
    cli: Cli,
    root: PathBuf,
    seed: PathBuf,
    seed1000: PathBuf,
    ids: Vec<String>,
}

fn prepare(cli: &Cli, work: &Path) -> Prepared {
    let sys = cli.system;
    let root = work.join(format!("cli-{sys}"));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).expect("mkdir");
    note(&format!(
        "{sys}: creating {DRAIN_NODES} then {CLAIM_AT} nodes"
    ));
    let seed = root.join("seed");
    let (mut ids, s1) = cli.create(&seed, DRAIN_NODES, 0, &root);
    let seed1000 = root.join("seed-1000");
    copy_dir(&seed, &seed1000);
    if cli.kind == Kind::Ours {
        // One import of the whole plan, as a user would make it.
        let _ = std::fs::remove_dir_all(&seed);
        let (all, s) = cli.create(&seed, CLAIM_AT, 0, &root);
        ids = all;
        emit(sys, "cli_import_s@4096", s, "");
    } else {
        let (more, s2) = cli.create(&seed, CLAIM_AT - DRAIN_NODES, DRAIN_NODES, &root);
        ids.extend(more);
        emit(
            sys,
            "cli_import_s@4096",
            s1 + s2,
            "4,096 upsert processes: no bulk verb",
        );
    }
    assert_eq!(ids.len(), CLAIM_AT, "ids");
    Prepared {
        cli: cli.clone(),
        root,
        seed,
        seed1000,
        ids,
    }
}

/// Every system's samples are taken in turn (ours, then 0.8, then ours again ...), so that a
/// change in the machine's load touches both alike.
fn bench(systems: &[Cli], work: &Path, runs: usize, drains: usize) {
    let all: Vec<Prepared> = systems.iter().map(|c| prepare(c, work)).collect();
    note(&format!(
        "process start, {runs} reads and {runs} claims at {CLAIM_AT} nodes, in turn"
    ));
    let mut start = vec![Vec::new(); all.len()];
    let mut reads = vec![Vec::new(); all.len()];
    let mut claims = vec![Vec::new(); all.len()];
    let mut any = Vec::new();
    for i in 0..runs {
        any.push(all[0].cli.timed(Command::new("/bin/true")).0);
        for (k, p) in all.iter().enumerate() {
            let mut c = Command::new(&p.cli.bin);
            c.arg("--version").stdout(Stdio::null());
            start[k].push(p.cli.timed(c).0);
            let (ms, out) = p.cli.timed(p.cli.read(&p.seed, &p.ids[CLAIM_AT - 1 - i]));
            check(&out, "read");
            reads[k].push(ms);
            let (ms, out) = p.cli.timed(p.cli.claim(&p.seed, &p.ids[i], 1_000 + i));
            check(&out, "claim");
            claims[k].push(ms);
        }
    }
    emit(all[0].cli.system, "cli_true_ms", median(any), "median");
    for (k, p) in all.iter().enumerate() {
        let sys = p.cli.system;
        emit(sys, "cli_start_ms", median(start[k].clone()), "median");
        emit(sys, "cli_read_ms@4096", median(reads[k].clone()), "median");
        emit(
            sys,
            "cli_claim_ms@4096",
            median(claims[k].clone()),
            "median",
        );
    }
    for procs in [4, 8] {
        note(&format!(
            "{procs} processes draining {DRAIN_NODES} nodes, {drains} times each, in turn"
        ));
        let mut rates = vec![Vec::new(); all.len()];
        let mut ceiling = Vec::new();
        for _ in 0..drains {
            for (k, p) in all.iter().enumerate() {
                let dir = p.root.join(format!("drain-{procs}"));
                copy_dir(&p.seed1000, &dir);
                rates[k].push(drain(&p.cli, &dir, procs, DRAIN_NODES));
            }
            ceiling.push(drain_ceiling(procs, DRAIN_NODES));
        }
        emit(
            all[0].cli.system,
            &format!("cli_drain{procs}_ceiling_wps"),
            median(ceiling),
            "median; each step /bin/true",
        );
        for (k, p) in all.iter().enumerate() {
            emit(
                p.cli.system,
                &format!("cli_drain{procs}_wps"),
                median(rates[k].clone()),
                "median",
            );
        }
    }
    by_size(&all[0].cli, work, runs);
    for p in &all {
        if p.cli.kind == Kind::Ours {
            note("ours: importing 100,000 nodes");
            let dir = p.root.join("import-100k");
            let (_, s) = p.cli.create(&dir, 100_000, 0, &p.root);
            emit(p.cli.system, "cli_import_s@100k", s, "");
        }
        let _ = std::fs::remove_dir_all(&p.root);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let quick = args.iter().any(|a| a == "--quick") || common::quick_env();
    let work = PathBuf::from(arg("--work").unwrap_or_else(|| "target/bench-work".into()));
    std::fs::create_dir_all(&work).expect("work directory");
    let runs = if quick { 20 } else { 30 };
    let drains = if quick { 1 } else { 3 };
    let ours = arg("--ours").unwrap_or_else(|| "target/release/claimdag".into());
    let mut systems = vec![Cli {
        kind: Kind::Ours,
        bin: ours.into(),
        system: "ours",
    }];
    match (arg("--v08"), arg("--v08-missing")) {
        (Some(bin), _) => systems.push(Cli {
            kind: Kind::V08,
            bin: bin.into(),
            system: "v08",
        }),
        (None, why) => {
            let why = why.unwrap_or_else(|| "not installed".into());
            for key in [
                "cli_start_ms",
                "cli_import_s@4096",
                "cli_read_ms@4096",
                "cli_claim_ms@4096",
                "cli_drain4_wps",
                "cli_drain8_wps",
            ] {
                missing("v08", key, &why);
            }
        }
    }
    bench(&systems, &work, runs, drains);
}
