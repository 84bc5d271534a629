//! Workspaces as PostgreSQL's unit of serialisation (schema version 7): a fleet in several
//! workspaces at once grants every node once, a history reader following the writes never
//! misses or repeats a line, a settings change is seen by every write ordered after it, and
//! a store of version 6 with data in two workspaces is migrated and goes on, and a store of
//! version 9 migrated while an older process is in the middle of a write keeps that write.

use super::{cli, pg, psql, schema_of};
use crate::common::{actor, parse_gen};
use claimdag::Store;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const SPACES: [&str; 3] = ["north", "south", "west"];
const PER_SPACE: usize = 60;
const WORKERS: u64 = 8;

/// What one worker of a workspace was granted: (workspace, worker, [(node, generation)]).
type Grants<'a> = (&'a str, u64, Vec<(String, u64)>);

fn import(url: &str, ws: &str, n: usize) {
    let plan: Vec<serde_json::Value> = (0..n)
        .map(|i| serde_json::json!({"key": format!("n{i}"), "summary": format!("{ws} node {i}")}))
        .collect();
    let file = std::env::temp_dir().join(format!(
        "claimdag-pg-spaces-{ws}-{}.json",
        std::process::id()
    ));
    std::fs::write(&file, serde_json::json!({ "nodes": plan }).to_string()).unwrap();
    cli(url, &["--workspace", ws, "import", &file.to_string_lossy()]).ok();
    let _ = std::fs::remove_file(&file);
}

/// One `claimdag` process after another in `ws`: claim-next, complete, until none is left.
fn worker(url: &str, ws: &str, me: &str) -> Vec<(String, u64)> {
    let mut grants = Vec::new();
    loop {
        let r = cli(url, &["--workspace", ws, "claim-next", "--assignee", me]);
        match r.code {
            Some(1) if r.stdout.is_empty() => return grants,
            Some(0) => {}
            _ => panic!("claim-next for {me} in {ws}: {:?} {}", r.code, r.stderr),
        }
        let id = r.stdout.split_whitespace().next().expect("id").to_string();
        let g = parse_gen(&r.stdout);
        grants.push((id.clone(), g));
        let gen = g.to_string();
        let args = [
            "--workspace",
            ws,
            "complete",
            &id,
            "--status",
            "done",
            "--gen",
            &gen,
            "--actor",
            me,
        ];
        cli(url, &args).ok();
    }
}

/// Follows the history as `watch` does until `stop`, then reads once more; answers every
/// line's (write, place) in the order they were read.
fn follow(url: String, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<Vec<(u64, u32)>> {
    std::thread::spawn(move || {
        let s = Store::open(Some(Path::new(&url))).expect("open");
        let mut at = 0;
        let mut seen = Vec::new();
        loop {
            let last = stop.load(Ordering::SeqCst);
            for l in s.history_since(at, None).expect("history") {
                at = at.max(l.seq);
                seen.push((l.seq, l.i));
            }
            if last {
                return seen;
            }
        }
    })
}

#[test]
fn eight_processes_in_each_of_three_workspaces_grant_every_node_once() {
    let url = pg::fresh_url();
    cli(&url, &["config", "max_held", "0"]).ok();
    for ws in SPACES {
        import(&url, ws, PER_SPACE);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let reader = follow(url.clone(), stop.clone());
    let all: Vec<Grants> = std::thread::scope(|s| {
        let handles: Vec<_> = SPACES
            .iter()
            .flat_map(|ws| (1..=WORKERS).map(move |w| (*ws, w)))
            .map(|(ws, w)| {
                let url = url.clone();
                s.spawn(move || (ws, w, worker(&url, ws, &actor(w))))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    stop.store(true, Ordering::SeqCst);
    let followed = reader.join().unwrap();
    let mut owner: BTreeMap<String, (&str, u64)> = BTreeMap::new();
    for (ws, w, grants) in &all {
        for (id, g) in grants {
            assert_eq!(*g, 2, "a first grant is generation 2");
            assert!(
                owner.insert(id.clone(), (ws, *w)).is_none(),
                "{id} granted twice"
            );
        }
    }
    assert_eq!(owner.len(), SPACES.len() * PER_SPACE, "every node granted");
    for ws in SPACES {
        let done = cli(&url, &["--workspace", ws, "--json", "list", "--terminal"]).json();
        let done = done.as_array().unwrap();
        assert_eq!(done.len(), PER_SPACE, "{ws}");
        for n in done {
            let id = n["id"].as_str().unwrap();
            assert_eq!(n["status"], "done");
            assert_eq!(owner[id].0, ws);
            assert_eq!(n["completed_by"], actor(owner[id].1));
        }
    }
    assert!(cli(&url, &["check"]).ok().starts_with("ok"));
    // The follower read every line once, in order, while the writes went on.
    let whole: Vec<(u64, u32)> = Store::open(Some(Path::new(&url)))
        .unwrap()
        .history(None)
        .unwrap()
        .iter()
        .map(|l| (l.seq, l.i))
        .collect();
    assert_eq!(followed, whole, "the follower saw the history as it is");
    // Each workspace's row counts its writes: imports, claims and completes.
    let schema = schema_of(&url);
    for ws in SPACES {
        let wseq = psql(&format!(
            "SELECT wseq FROM {schema}.ws_now WHERE name = '{ws}'"
        ));
        assert_eq!(wseq, (1 + 2 * PER_SPACE).to_string(), "{ws}");
    }
}

#[test]
fn a_settings_change_racing_writes_in_two_workspaces_reaches_every_later_write() {
    let url = pg::fresh_url();
    cli(&url, &["config", "max_held", "0"]).ok();
    cli(&url, &["config", "default_ttl", "99s"]).ok();
    for ws in ["east", "west"] {
        import(&url, ws, 150);
    }
    let claims: Vec<_> = ["east", "west"]
        .into_iter()
        .map(|ws| {
            let url = url.clone();
            std::thread::spawn(move || {
                let s = Store::open(Some(Path::new(&url))).unwrap();
                let me = claimdag::Actor::from_name("claimer").unwrap();
                while s.claim_next(ws, me, None, None).unwrap().is_some() {}
            })
        })
        .collect();
    let config = {
        let url = url.clone();
        std::thread::spawn(move || {
            let s = Store::open(Some(Path::new(&url))).unwrap();
            for t in 100..130 {
                s.set_setting("default_ttl", &format!("{t}s")).unwrap();
            }
        })
    };
    for h in claims {
        h.join().unwrap();
    }
    config.join().unwrap();
    // Every claim took the default lease in force at its place in the write order: the one
    // the last settings change numbered before it set.
    let schema = schema_of(&url);
    let configs: Vec<(i64, i64)> = psql(&format!(
        "SELECT h.seq, row_number() OVER (ORDER BY h.seq) FROM {schema}.history h \
         WHERE verb = 'config' ORDER BY h.seq"
    ))
    .lines()
    .map(|l| {
        let (a, b) = l.split_once('|').unwrap();
        (a.parse().unwrap(), b.parse().unwrap())
    })
    .collect();
    // The first two changes are max_held and the 99 s default, before any claim.
    let ttl_after = |seq: i64| -> i64 {
        let k = configs.iter().filter(|(c, _)| *c < seq).count() as i64;
        (97 + k) * 1000
    };
    let claims = psql(&format!(
        "SELECT seq, ttl_ms FROM {schema}.nodes WHERE status = 'claimed' ORDER BY seq"
    ));
    let mut seen = 0;
    for l in claims.lines() {
        let (seq, ttl) = l.split_once('|').unwrap();
        let (seq, ttl): (i64, i64) = (seq.parse().unwrap(), ttl.parse().unwrap());
        assert_eq!(ttl, ttl_after(seq), "the claim of write {seq}");
        seen += 1;
    }
    assert_eq!(seen, 300);
    assert!(cli(&url, &["check"]).ok().starts_with("ok"));
}

#[test]
fn a_version_6_store_with_two_workspaces_is_migrated_and_goes_on() {
    let url = pg::fresh_url();
    let schema = schema_of(&url);
    at_version(&schema, 6);
    let id = |n: u8| format!("{}{n}", "0".repeat(31));
    let node = |n: u8, ws: &str| {
        format!(
            "{{\"id\": \"{}\", \"workspace\": \"{ws}\", \"summary\": \"node {n} in [{ws}]\", \
             \"status\": \"todo\", \"generation\": 1, \"created_at\": 1, \"updated_at\": 1}}",
            id(n)
        )
    };
    let create = |n: u8| {
        format!(
            "{{\"at\": 1, \"verb\": \"create\", \"node\": \"{}\", \"generation\": 1}}",
            id(n)
        )
    };
    for (expected, (n, ws)) in [(1u8, ""), (2, "b"), (3, "b")].into_iter().enumerate() {
        psql(&format!(
            "SELECT * FROM {schema}.commit({expected}, '{{\"nodes\": [{}], \"events\": [{}]}}')",
            node(n, ws),
            create(n)
        ));
    }
    assert_eq!(psql(&format!("SELECT version FROM {schema}.store")), "6");
    // The first call migrates: the rows keep their workspaces and their history.
    let listed = cli(&url, &["--workspace", "b", "list"]).ok().to_string();
    assert!(
        listed.contains("node 2 in [b]") && listed.contains("node 3"),
        "{listed}"
    );
    assert_eq!(
        psql(&format!("SELECT version FROM {schema}.store")),
        latest()
    );
    assert_eq!(
        psql(&format!(
            "SELECT string_agg(name || '=' || wseq, ',' ORDER BY name) FROM {schema}.ws_now"
        )),
        "=1,b=3"
    );
    // Both workspaces take writes; the history goes on past the old writes' numbers.
    let r = cli(
        &url,
        &["--workspace", "b", "claim-next", "--assignee", &actor(1)],
    );
    assert_eq!(parse_gen(r.ok()), 2);
    let r = cli(&url, &["claim-next", "--assignee", &actor(1)]);
    assert!(r.ok().starts_with(&id(1)));
    let log = cli(&url, &["--json", "log"]).json();
    let seqs: Vec<u64> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5], "{log}");
    assert!(cli(&url, &["check"]).ok().starts_with("ok"));
}

/// A change making node `n` of the default workspace, as a version 7 to 9 `commit7` takes it.
fn v9_change(n: u8) -> String {
    let id = format!("{}{n}", "0".repeat(31));
    format!(
        "{{\"nodes\": [{{\"id\": \"{id}\", \"workspace\": \"\", \"summary\": \"node {n}\", \
         \"status\": \"todo\", \"generation\": 1, \"created_at\": 1, \"updated_at\": 1}}], \
         \"events\": [{{\"at\": 1, \"verb\": \"create\", \"node\": \"{id}\", \"generation\": 1}}]}}"
    )
}

#[test]
fn a_version_9_store_migrated_during_an_older_write_keeps_that_write() {
    // The older write makes a second node.
    migrated_during_an_older_write(9, v9_change(2), "ok: 2 live nodes");
}

/// Version 11 changes how a node's row is found and written: a write of version 10 that
/// changes a node while the store is migrated leaves it one row, found as the node.
#[test]
fn a_version_10_store_migrated_during_an_older_write_keeps_that_write() {
    // The older write renames the node.
    let id = format!("{}1", "0".repeat(31));
    let renamed = format!(
        "{{\"nodes\": [{{\"id\": \"{id}\", \"workspace\": \"\", \"summary\": \"renamed\", \
         \"status\": \"todo\", \"generation\": 1, \"created_at\": 1, \"updated_at\": 2}}]}}"
    );
    migrated_during_an_older_write(10, renamed, "ok: 1 live nodes");
}

/// A store of version `v` with one node, whose second write (`change`) a process of that
/// version is in the middle of when this claimdag migrates the store: the write is kept,
/// each node has one row, and `check` says `ok`.
fn migrated_during_an_older_write(v: usize, change: String, ok: &str) {
    let url = pg::fresh_url();
    let schema = schema_of(&url);
    at_version(&schema, v);
    let commit = |expected: u64, change: &str| {
        format!(
            "SELECT committed FROM {schema}.commit7('', {expected}, 0, {schema}.now_ms(), NULL, \
             '{change}')"
        )
    };
    psql(&format!("SELECT {schema}.ensure_ws('')"));
    assert_eq!(psql(&commit(0, &v9_change(1))), "t");
    // A process of version v in the middle of its second write: it holds the workspace's
    // row and has written its count and its node, not yet committed.
    let mut older = super::psql_meanwhile(&format!(
        "BEGIN; {}; SELECT pg_sleep(2); COMMIT;",
        commit(1, &change)
    ));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while psql(
        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(2)%' \
         AND state = 'active' AND pid <> pg_backend_pid()",
    ) != "1"
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the older write did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    // This claimdag's first call migrates the store meanwhile.
    let listed = cli(&url, &["list"]).ok().to_string();
    assert!(older.wait().expect("psql").success());
    assert_eq!(
        psql(&format!("SELECT version FROM {schema}.store")),
        latest()
    );
    assert_eq!(
        psql(&format!("SELECT wseq FROM {schema}.ws_now WHERE name = ''")),
        "2",
        "the count the older write made was kept ({listed})"
    );
    assert_eq!(
        psql(&format!(
            "SELECT count(*) - count(DISTINCT id) FROM {schema}.nodes"
        )),
        "0"
    );
    let checked = cli(&url, &["check"]).ok().to_string();
    assert!(checked.starts_with(ok), "{checked}");
    cli(&url, &["upsert", "--summary", "after the migration"]).ok();
    assert!(cli(&url, &["check"]).ok().starts_with("ok: "));
}

/// Makes store `schema` as a claimdag of schema version `v` made it: the first `v`
/// migrations, each recorded as the library records it.
pub fn at_version(schema: &str, v: usize) {
    for (i, m) in MIGRATIONS[..v].iter().enumerate() {
        psql(&m.replace("{schema}", schema));
        psql(&format!("UPDATE {schema}.store SET version = {}", i + 1));
    }
}

/// The schema version this claimdag brings a store to: one a migration.
pub fn latest() -> String {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/store/postgres/migrations");
    let migrations = std::fs::read_dir(dir).expect("the migrations").count();
    migrations.to_string()
}

/// Every migration's text, in order, as the claimdag of each version shipped it (with the
/// functions of that version, which a store of that version holds).
pub const MIGRATIONS: [&str; 16] = [
    include_str!("older/0001_init.sql"),
    include_str!("older/0002_commit_in_one_round_trip.sql"),
    include_str!("older/0003_clock_never_goes_back.sql"),
    include_str!("older/0004_never_build_on_tampering.sql"),
    include_str!("older/0005_notify_every_write.sql"),
    include_str!("older/0006_history_outputs.sql"),
    include_str!("older/0007_a_lock_per_workspace.sql"),
    include_str!("older/0008_combined_writes.sql"),
    include_str!("older/0009_planned_once.sql"),
    include_str!("older/0010_old_snapshots.sql"),
    include_str!("older/0011_node_versions.sql"),
    include_str!("older/0012_requests_by_index.sql"),
    include_str!("older/0013_answered_in_one_round_trip.sql"),
    include_str!("older/0014_nothing_compiled.sql"),
    include_str!("older/0015_who_acted.sql"),
    include_str!("older/0016_history_kept.sql"),
];
