//! The history of a PostgreSQL store at a million lines (200,000 with `--quick`) against an
//! empty one, on a throwaway server:
//!
//! 1. `log NODE` (`Store::history` of one node), `log --since SEQ` and a follower's next
//!    read (`Store::history_next`) through the library, median time, with the goal for
//!    `log NODE` (at most 10 ms) beside;
//! 2. the plans the server ran for those reads and for what `serve`'s `/metrics` reads (its
//!    history follower at the head, the store's version, the catch-up of the state), as
//!    `EXPLAIN (ANALYZE, BUFFERS)` gives them (the `auto_explain` module, nested statements
//!    included): each plan's nodes, the lines it returned, the pages it touched and its time;
//! 3. the retention's passes at that size (`history_keep`): a pass that counts and moves,
//!    one that only moves, and the reads that then span the archive and the live lines.
//!
//! The lines are loaded straight into the table (`INSERT ... SELECT generate_series`), two
//! a write over 100,000 nodes, then vacuumed and analysed as autovacuum would; one node gets
//! three lines before them and three after. It prints Markdown and never fails on a time.
//!
//!     cargo bench --bench pg_history -- [--quick] [--url URL] [--lines N]

#[path = "common/pg.rs"]
#[allow(dead_code)]
mod pg;

use claimdag::store::HistoryCursor;
use claimdag::{Id, Status, Store, Upsert};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The goal for `log NODE` at a million lines.
const GOAL_LOG_NODE_MS: f64 = 10.0;

struct Args {
    quick: bool,
    url: Option<String>,
    lines: Option<u64>,
}

fn args() -> Args {
    let mut a = Args {
        quick: std::env::var("QUICK").is_ok_and(|v| !v.is_empty() && v != "0"),
        url: None,
        lines: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "--quick" => a.quick = true,
            "--url" => a.url = it.next(),
            "--lines" => a.lines = it.next().and_then(|s| s.parse().ok()),
            _ => {}
        }
    }
    a
}

/// A store with one node of six history lines, and `lines` more of other nodes between
/// its first three and its last three.
struct Fixture {
    schema: String,
    store: Store,
    node: Id,
    /// The write after which `log --since` reads (about 20 lines before the end).
    since: u64,
    /// A line in the middle of the history, where a follower that is behind stands.
    middle: (u64, u32),
}

impl Fixture {
    fn new(base: &str, name: &str, lines: u64) -> Fixture {
        let url = pg::schema(base, name);
        let schema = url.rsplit("schema=").next().unwrap().to_string();
        let store = Store::open(Some(Path::new(&url))).expect("open the store");
        let me = Id([3; 16]);
        let node = store
            .upsert(Upsert {
                summary: "the node read".into(),
                ..Default::default()
            })
            .expect("upsert");
        let cycle = |store: &Store| {
            let g = store.claim(node, me, None, None).expect("claim");
            store
                .complete(node, Status::Done, g, Some(me), None)
                .expect("complete");
        };
        cycle(&store);
        if lines > 0 {
            load(base, &schema, lines);
        }
        store.reopen(node, None).expect("reopen");
        cycle(&store);
        let all_seq = store.history_head().expect("head");
        let since = all_seq.saturating_sub(10);
        let half = (lines / 4).max(1); // write numbers: two lines a write
        Fixture {
            schema,
            store,
            node,
            since,
            middle: (half, 1),
        }
    }
}

/// `lines` lines of 100,000 other nodes, two a write, after the store's last write; then
/// the write counter past them, and a vacuum and analyse.
fn load(base: &str, schema: &str, lines: u64) {
    let mut c = postgres::Client::connect(base, postgres::NoTls).expect("connect");
    let t = Instant::now();
    c.batch_execute(&format!(
        "INSERT INTO {schema}.history (seq, i, at, verb, node, actor, generation, detail)
         SELECT w.last_value + 1 + g / 2, (g % 2)::int, \
                (extract(epoch FROM clock_timestamp()) * 1000)::bigint - {lines} + g, \
                CASE WHEN g % 2 = 0 THEN 'claim' ELSE 'complete' END, \
                md5(((g / 2) % 100000)::text), md5('actor' || (g % 16)::text), \
                2 + (g / 200000), CASE WHEN g % 2 = 1 THEN 'done' END
           FROM {schema}.writes w, generate_series(0, {lines} - 1) g;
         SELECT setval('{schema}.writes', (SELECT max(seq) FROM {schema}.history), true);"
    ))
    .expect("load the history");
    let loaded = t.elapsed().as_secs_f64();
    let t = Instant::now();
    c.batch_execute(&format!("VACUUM ANALYZE {schema}.history"))
        .expect("vacuum");
    println!(
        "Loaded {} lines in {loaded:.1} s (INSERT ... generate_series), vacuumed and analysed \
         in {:.1} s.\n",
        count(lines),
        t.elapsed().as_secs_f64()
    );
}

fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (k, ch) in s.chars().enumerate() {
        if k > 0 && (s.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// The median times of `a` and of `b`, in milliseconds, over `runs` calls of each taken in
/// turn (after two of each to warm up), and what the last calls answered.
fn timed_pair(
    runs: usize,
    a: impl Fn() -> usize,
    b: impl Fn() -> usize,
) -> ((f64, usize), (f64, usize)) {
    let time = |f: &dyn Fn() -> usize| {
        let t = Instant::now();
        let n = f();
        (t.elapsed().as_secs_f64() * 1e3, n)
    };
    let (_, _, _, _) = (a(), a(), b(), b());
    let (mut ta, mut tb, mut na, mut nb) = (Vec::new(), Vec::new(), 0, 0);
    for _ in 0..runs {
        let (t, got) = time(&a);
        ta.push(t);
        na = got;
        let (t, got) = time(&b);
        tb.push(t);
        nb = got;
    }
    ((median(ta), na), (median(tb), nb))
}

/// Section 1: the library's reads at both sizes.
fn library_reads(empty: &Fixture, full: &Fixture, lines: u64, runs: usize) {
    println!("### Reads through the library (median of {runs}, the two stores in turn)\n");
    println!(
        "| read | empty history (ms) | {} lines (ms) | lines returned (empty / full) | ratio | goal |",
        count(lines)
    );
    println!("|---|---:|---:|---:|---:|---|");
    type Read<'a> = (&'a str, Box<dyn Fn(&Fixture) -> usize>, &'a str);
    let reads: Vec<Read> = vec![
        (
            "`log NODE` (`Store::history`, one node)",
            Box::new(|f: &Fixture| f.store.history(Some(f.node)).unwrap().len()),
            "at most 10 ms",
        ),
        (
            "`log --all NODE` (archive and live)",
            Box::new(|f: &Fixture| f.store.history_archived(0, Some(f.node)).unwrap().len()),
            "",
        ),
        (
            "`log --since SEQ` (the last 10 writes)",
            Box::new(|f: &Fixture| f.store.history_since(f.since, None).unwrap().len()),
            "",
        ),
        (
            "a follower's next read at the end (`history_next`)",
            Box::new(|f: &Fixture| {
                let mut cur = HistoryCursor::after_write(f.since);
                f.store.history_next(&mut cur, 1000).unwrap().len()
            }),
            "",
        ),
        (
            "a follower behind: the next 1,000 lines from the middle",
            Box::new(|f: &Fixture| {
                let mut cur = HistoryCursor::after_write(f.middle.0);
                f.store.history_next(&mut cur, 1000).unwrap().len()
            }),
            "",
        ),
    ];
    for (what, read, goal) in &reads {
        let ((e, ne), (f, nf)) = timed_pair(runs, || read(empty), || read(full));
        let goal = if goal.is_empty() {
            String::new()
        } else {
            let within = if f <= GOAL_LOG_NODE_MS {
                "within"
            } else {
                "outside"
            };
            format!("{goal}: {within}")
        };
        println!(
            "| {what} | {e:.2} | {f:.2} | {ne} / {nf} | {:.2}x | {goal} |",
            f / e
        );
    }
    println!();
}

/// A session whose statements' plans, nested ones included, come back as notices
/// (`auto_explain` with ANALYZE and BUFFERS); `None` when the module cannot be loaded.
struct Explainer {
    client: postgres::Client,
    plans: Arc<Mutex<Vec<String>>>,
}

impl Explainer {
    fn new(base: &str) -> Option<Explainer> {
        let plans = Arc::new(Mutex::new(Vec::new()));
        let mut config: postgres::Config = base.parse().ok()?;
        let into = plans.clone();
        config.notice_callback(move |n| {
            if n.message().contains("plan:") {
                into.lock().unwrap().push(n.message().to_string());
            }
        });
        let mut client = config.connect(postgres::NoTls).ok()?;
        client
            .batch_execute(
                "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; \
                 SET auto_explain.log_analyze = on; SET auto_explain.log_buffers = on; \
                 SET auto_explain.log_nested_statements = on; SET client_min_messages = log",
            )
            .ok()?;
        Some(Explainer { client, plans })
    }

    /// Runs `sql` three times and answers the plans of its last run whose text holds
    /// `pick`.
    fn plans(&mut self, sql: &str, pick: &[&str]) -> Vec<Plan> {
        for _ in 0..3 {
            self.plans.lock().unwrap().clear();
            self.client.batch_execute(sql).expect("the read");
        }
        let got = std::mem::take(&mut *self.plans.lock().unwrap());
        got.iter()
            .filter(|p| pick.iter().any(|k| p.contains(k)))
            .map(|p| Plan::parse(p))
            .collect()
    }
}

/// One plan as `auto_explain` logged it.
struct Plan {
    ms: f64,
    /// Each node's indentation and name, in the plan's order.
    nodes: Vec<(usize, String)>,
    rows: String,
    buffers: String,
}

impl Plan {
    fn parse(text: &str) -> Plan {
        let ms = text
            .split("duration: ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN);
        let lines: Vec<&str> = text.lines().filter(|l| l.contains("(cost=")).collect();
        let nodes = lines
            .iter()
            .map(|l| {
                let depth = l.len() - l.trim_start().len();
                let l = l.trim_start().trim_start_matches("->").trim();
                (depth, l.split("  (cost=").next().unwrap_or(l).to_string())
            })
            .collect();
        let rows = lines
            .first()
            .and_then(|l| l.split("actual time=").nth(1))
            .and_then(|r| r.split("rows=").nth(1))
            .and_then(|r| r.split(' ').next())
            .unwrap_or("?")
            .to_string();
        let buffers = text
            .lines()
            .find(|l| l.trim_start().starts_with("Buffers:"))
            .map_or("none".to_string(), |l| {
                l.trim().trim_start_matches("Buffers: ").to_string()
            });
        Plan {
            ms,
            nodes,
            rows,
            buffers,
        }
    }
}

/// The nodes as a tree: each node, then its children in parentheses.
fn tree(nodes: &[(usize, String)]) -> String {
    fn under(nodes: &[(usize, String)], at: usize) -> (String, usize) {
        let (depth, name) = &nodes[at];
        let mut children = Vec::new();
        let mut next = at + 1;
        while next < nodes.len() && nodes[next].0 > *depth {
            let (child, after) = under(nodes, next);
            children.push(child);
            next = after;
        }
        if children.is_empty() {
            (name.clone(), next)
        } else {
            (format!("{name} ({})", children.join(", ")), next)
        }
    }
    let mut out = Vec::new();
    let mut at = 0;
    while at < nodes.len() {
        let (t, next) = under(nodes, at);
        out.push(t);
        at = next;
    }
    out.join("; ")
}

fn plan_row(what: &str, plans: &[Plan]) {
    if plans.is_empty() {
        println!("| {what} | (no plan logged) | | | |");
    }
    for p in plans {
        println!(
            "| {what} | {} | {} | {} | {:.3} |",
            tree(&p.nodes),
            p.rows,
            p.buffers,
            p.ms
        );
    }
}

/// Section 2: the plans of the reads (and the scrape's) on the full store.
fn plans(base: &str, f: &Fixture, label: &str) {
    let Some(mut x) = Explainer::new(base) else {
        println!("(auto_explain could not be loaded on this server: no plans)\n");
        return;
    };
    let s = &f.schema;
    let node = f.node.hex();
    let head = f.store.history_head().expect("head");
    let reads: Vec<(&str, String)> = vec![
        (
            "`log NODE`",
            format!("SELECT count(*) FROM {s}.history_lines(0, '{node}', false)"),
        ),
        (
            "`log --all NODE`",
            format!("SELECT count(*) FROM {s}.history_lines(0, '{node}', true)"),
        ),
        (
            "`log --since SEQ` (last 10 writes)",
            format!(
                "SELECT count(*) FROM {s}.history_lines({}, NULL, false)",
                f.since
            ),
        ),
        (
            "follower behind: next 1,000 from the middle",
            format!(
                "SELECT count(*) FROM {s}.history_from({}, {}, 1000)",
                f.middle.0, f.middle.1
            ),
        ),
        (
            "follower from the start: first 1,000",
            format!("SELECT count(*) FROM {s}.history_from(0, -1, 1000)"),
        ),
        (
            "`/metrics`: the history follower at the head",
            format!(
                "SELECT count(*) FROM {s}.history_from({head}, {}, {})",
                i32::MAX,
                i64::MAX
            ),
        ),
    ];
    println!("### Plans at {label} (auto_explain: ANALYZE, BUFFERS; nested statements)\n");
    println!(
        "| read | plan: each node, then what it reads (in parentheses) | rows | buffers | ms |"
    );
    println!("|---|---|---:|---|---:|");
    for (what, sql) in &reads {
        plan_row(what, &x.plans(sql, &["history h", "history_archive a"]));
    }
    plan_row(
        "`/metrics`: the store's version (`change_count`)",
        &x.plans(
            &format!("SELECT {s}.change_count()"),
            &["change_count", "ws_now"],
        ),
    );
    plan_row(
        "`/metrics`: the state's catch-up (`since_all`)",
        &x.plans(
            &format!("SELECT nodes FROM {s}.since_all('{{\"\": 1000000000}}', 0, false)"),
            &["json_agg(json_build_object"],
        ),
    );
    println!();
}

/// Section 3: retention passes on the full store: the setting made, passes forced one
/// after the other (each a write's time 10 s after the last).
fn passes(f: &Fixture, base: &str, lines: u64) {
    let s = &f.schema;
    let mut c = postgres::Client::connect(base, postgres::NoTls).expect("connect");
    let keep = 10_000;
    f.store
        .set_setting("history_keep", &keep.to_string())
        .expect("config");
    let mut at: i64 = c
        .query_one(&format!("SELECT passed_at FROM {s}.history_kept"), &[])
        .unwrap()
        .get(0);
    let mut pass = |c: &mut postgres::Client| {
        at += 10_000;
        let t = Instant::now();
        let moved: i64 = c
            .query_one(&format!("SELECT {s}.archive_history({at})"), &[])
            .unwrap()
            .get(0);
        (t.elapsed().as_secs_f64() * 1e3, moved)
    };
    let (mut catching, mut steady) = (Vec::new(), Vec::new());
    for _ in 0..40 {
        let uncounted: bool = c
            .query_one(
                &format!(
                    "SELECT EXISTS (SELECT 1 FROM {s}.history h, {s}.history_kept k \
                     WHERE (h.seq, h.i) > (k.counted_seq, k.counted_i))"
                ),
                &[],
            )
            .unwrap()
            .get(0);
        let (ms, moved) = pass(&mut c);
        if uncounted {
            catching.push((ms, moved));
        } else {
            steady.push((ms, moved));
        }
        if steady.len() >= 5 {
            break;
        }
    }
    println!(
        "### Retention passes at {} lines (`history_keep {keep}`)\n",
        count(lines)
    );
    println!("| pass | passes | lines moved a pass | ms a pass (median) |");
    println!("|---|---:|---:|---:|");
    for (what, v) in [
        ("counts up to 65,536 lines, then moves", &catching),
        ("everything counted: only moves", &steady),
    ] {
        if v.is_empty() {
            continue;
        }
        let ms = median(v.iter().map(|p| p.0).collect());
        let moved = median(v.iter().map(|p| p.1 as f64).collect());
        println!("| {what} | {} | {moved:.0} | {ms:.1} |", v.len());
    }
    let archived: i64 = c
        .query_one(&format!("SELECT count(*) FROM {s}.history_archive"), &[])
        .unwrap()
        .get(0);
    println!(
        "\n{} lines in `history_archive` after them; a write that runs a pass answers once \
         it is done, and no other write or read waits for it.\n",
        count(archived as u64)
    );
}

fn main() {
    let a = args();
    let lines = a.lines.unwrap_or(if a.quick { 200_000 } else { 1_000_000 });
    let runs = if a.quick { 15 } else { 41 };
    let server = pg::server(a.url.clone(), "history").expect("a PostgreSQL server");
    let base = server.url.clone();
    println!(
        "## The history on PostgreSQL: reads at {} lines\n",
        count(lines)
    );
    let empty = Fixture::new(&base, "hist_empty", 0);
    let full = Fixture::new(&base, "hist_full", lines);
    library_reads(&empty, &full, lines, runs);
    plans(&base, &full, &format!("{} lines", count(lines)));
    passes(&full, &base, lines);
    plans(&base, &full, "the same store, part of it archived");
    if a.url.is_some() {
        let mut c = postgres::Client::connect(&base, postgres::NoTls).expect("connect");
        for f in [&empty, &full] {
            let _ = c.batch_execute(&format!("DROP SCHEMA {} CASCADE", f.schema));
        }
    }
}
