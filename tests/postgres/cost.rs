//! What a write costs the server: it reads the rows of the nodes it touches, not the
//! store's, whatever plan the server's statistics lead to (schema version 9), and no more
//! the longer another session holds an old snapshot open (version 10).

use super::{pg, psql, schema_of};
use crate::common::flat_plan;
use claimdag::{Actor, Id, Status, Store, Upsert};
use std::path::Path;
use std::time::{Duration, Instant};

const NODES: usize = 2_000;
const CYCLES: usize = 40;

/// Rows read from `schema`'s nodes and history tables, by scans and through indexes, as the
/// server's statistics count them (a session reports its counts at the latest when it
/// ends).
fn key_reads(schema: &str) -> i64 {
    psql(&format!(
        "SELECT sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)) FROM pg_stat_user_tables \
         WHERE schemaname = '{schema}' AND relname IN ('nodes', 'history')"
    ))
    .parse()
    .expect("a count")
}

/// Waits until no session named `app` is left on the server.
fn ended(app: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while psql(&format!(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = '{app}'"
    )) != "0"
    {
        assert!(Instant::now() < deadline, "the session {app} did not end");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_write_reads_the_rows_it_touches_not_the_store() {
    let app = format!("claimdag-cost-{}", std::process::id());
    let (url, schema, _) = store_of(NODES, &app);
    ended(&app);
    let before = key_reads(&schema);
    {
        let store = Store::open(Some(Path::new(&url))).expect("open");
        let me = Actor::from_name("cost").expect("a name");
        for _ in 0..CYCLES {
            let (id, g) = store
                .claim_next("", me, None, None)
                .expect("claim_next")
                .expect("a ready node");
            store
                .complete(id, Status::Done, g, Some(me), None)
                .expect("complete");
        }
    }
    ended(&app);
    let per_write = (key_reads(&schema) - before) as f64 / (2 * CYCLES) as f64;
    // A write reads the rows of the nodes it changes (and the handle's first load reads
    // the store once: 25 a write here); a scan of the store at every write is thousands.
    assert!(
        per_write < 100.0,
        "a write read {per_write:.0} rows of a store of {NODES} nodes"
    );
}

/// Pages of `schema`'s tables and indexes the server looked at (from its cache or the
/// disk), as its statistics count them.
fn pages_read(schema: &str) -> i64 {
    psql(&format!(
        "SELECT sum(coalesce(heap_blks_hit, 0) + coalesce(heap_blks_read, 0) \
         + coalesce(idx_blks_hit, 0) + coalesce(idx_blks_read, 0)) \
         FROM pg_statio_user_tables WHERE schemaname = '{schema}'"
    ))
    .parse()
    .expect("a count")
}

/// [`pages_read`] of `schema`'s table `table` alone.
fn pages_read_of(schema: &str, table: &str) -> i64 {
    psql(&format!(
        "SELECT coalesce(heap_blks_hit, 0) + coalesce(heap_blks_read, 0) \
         + coalesce(idx_blks_hit, 0) + coalesce(idx_blks_read, 0) \
         FROM pg_statio_user_tables WHERE schemaname = '{schema}' AND relname = '{table}'"
    ))
    .parse()
    .expect("a count")
}

/// A store of `n` ready nodes (their ids in creation order) at a URL whose sessions are
/// named `app`.
fn store_of(n: usize, app: &str) -> (String, String, Vec<Id>) {
    let base = pg::fresh_url();
    let schema = schema_of(&base);
    let url = format!("{base}&application_name={app}");
    let store = Store::open(Some(Path::new(&url))).expect("open");
    store.set_setting("max_held", "0").expect("settings");
    let ids = store
        .import("", flat_plan(n, |i| format!("node {i}")))
        .expect("import")
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    drop(store);
    // The server's statistics know the table's size, as autovacuum soon would.
    psql(&format!("ANALYZE {schema}.nodes; ANALYZE {schema}.history"));
    (url, schema, ids)
}

/// Runs `writes` writes through one handle (a session of its own, ended before this
/// returns; `work` makes them), every request left for the workspace's leader when
/// `combined`. Answers the pages the server read a write.
fn pages_a_write(
    url: &str,
    app: &str,
    schema: &str,
    combined: bool,
    writes: usize,
    work: impl Fn(&Store, Actor),
) -> f64 {
    let before = pages_read(schema);
    {
        let store = Store::open(Some(Path::new(url))).expect("open");
        if combined {
            store.always_combine();
        }
        work(&store, Actor::from_name("cost").expect("a name"));
    }
    ended(app);
    (pages_read(schema) - before) as f64 / writes as f64
}

/// Claims and completes each of `nodes` ([`pages_a_write`]).
fn cycles(url: &str, app: &str, schema: &str, nodes: &[Id], combined: bool) -> f64 {
    pages_a_write(url, app, schema, combined, 2 * nodes.len(), |store, me| {
        for &id in nodes {
            let g = store.claim(id, me, None, None).expect("claim");
            store
                .complete(id, Status::Done, g, Some(me), None)
                .expect("complete");
        }
    })
}

/// Another session holding a snapshot open: it keeps every row version written after it
/// began, until it ends.
struct Snapshot {
    app: String,
    _psql: std::process::Child,
}

impl Snapshot {
    fn hold(schema: &str) -> Snapshot {
        let app = format!("claimdag-snapshot-{}-{schema}", std::process::id());
        let session = std::process::Command::new("psql")
            .arg(pg::url())
            .args(["-X", "-q", "-c"])
            .arg(format!(
                "BEGIN ISOLATION LEVEL REPEATABLE READ; \
                 SELECT count(*) FROM {schema}.nodes; SELECT pg_sleep(600); COMMIT;"
            ))
            .env("PGAPPNAME", &app)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("run psql");
        let deadline = Instant::now() + Duration::from_secs(30);
        while psql(&format!(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE application_name = '{app}' AND backend_xmin IS NOT NULL"
        )) != "1"
        {
            assert!(Instant::now() < deadline, "the snapshot was not taken");
            std::thread::sleep(Duration::from_millis(20));
        }
        Snapshot {
            app,
            _psql: session,
        }
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        psql(&format!(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE application_name = '{}'",
            self.app
        ));
    }
}

/// While a snapshot is held, every write leaves versions nothing can remove. A write must
/// not walk the versions earlier writes left: after 1,000 claims and completes of other
/// nodes, a claim and complete reads as many pages as it did at first, written the usual
/// way and left for the workspace's leader alike.
#[test]
fn a_held_snapshot_does_not_make_later_writes_read_more() {
    for combined in [false, true] {
        let app = format!("claimdag-held-{}-{combined}", std::process::id());
        let (url, schema, ids) = store_of(1_300, &app);
        let _held = Snapshot::hold(&schema);
        let first = cycles(&url, &app, &schema, &ids[..100], combined);
        cycles(&url, &app, &schema, &ids[100..1_200], combined);
        let last = cycles(&url, &app, &schema, &ids[1_200..], combined);
        eprintln!("combined: {combined}: pages read a write: {first:.1} at first, {last:.1} later");
        assert!(
            last <= first * 1.5 + 2.0,
            "combined: {combined}: {first:.1} pages read a write at first, {last:.1} after \
             1,100 more cycles under the snapshot"
        );
    }
}

/// Claims and hands back `id` `n` times ([`pages_a_write`]).
fn again(url: &str, app: &str, schema: &str, id: Id, n: usize, combined: bool) -> f64 {
    pages_a_write(url, app, schema, combined, 2 * n, |store, me| {
        for _ in 0..n {
            let g = store.claim(id, me, None, None).expect("claim");
            store.release(id, me, g).expect("release");
        }
    })
}

/// The same node written again and again while a snapshot is held (a lease renewed, a node
/// claimed and handed back in a loop): each write leaves a version of the node's row that
/// nothing can remove. A write must find the node's row without walking the versions the
/// writes before it left: after 1,000 more claims and hand-backs of that node, one reads as
/// many pages as at first, written the usual way and left for the leader alike.
#[test]
fn a_held_snapshot_does_not_make_writes_to_the_same_node_read_more() {
    for combined in [false, true] {
        let app = format!("claimdag-hot-{}-{combined}", std::process::id());
        let (url, schema, ids) = store_of(20, &app);
        let _held = Snapshot::hold(&schema);
        let first = again(&url, &app, &schema, ids[0], 50, combined);
        again(&url, &app, &schema, ids[0], 1_000, combined);
        let last = again(&url, &app, &schema, ids[0], 50, combined);
        eprintln!(
            "combined: {combined}: pages read a write to one node: {first:.1} at first, \
             {last:.1} later"
        );
        assert!(
            last <= first * 1.5 + 2.0,
            "combined: {combined}: {first:.1} pages read a write at first, {last:.1} after \
             1,000 more claims and hand-backs of the same node under the snapshot"
        );
    }
}

/// The pages (as `pages` counts them, every session's) read while `work` runs through
/// `store`. A session's counts reach the statistics (PostgreSQL 15 and later) when it ends
/// a transaction at least a second after it last reported: a read of the server's clock a
/// second after the work (counted too), so a handle that lives on can be measured.
fn pages_in_session(store: &Store, pages: impl Fn() -> i64, work: impl FnOnce()) -> i64 {
    let flushed = || {
        std::thread::sleep(Duration::from_millis(1_100));
        store.now().expect("the server's clock");
        pages()
    };
    let before = flushed();
    work();
    flushed() - before
}

/// `n` requests of ended sessions in `schema`'s workspace `ws`, made and then dropped.
fn made_and_dropped(schema: &str, ws: &str, n: usize) {
    psql(&format!(
        "INSERT INTO {schema}.asks (ws, pid, body) SELECT '{ws}', 0, '{{}}' \
         FROM generate_series(1, {n})"
    ));
    psql(&format!("DELETE FROM {schema}.asks WHERE pid = 0"));
}

/// A long-lived worker, its requests left for the workspace's leader (itself, alone), while
/// a snapshot is held: the table of waiting requests keeps every version of every request
/// (made, answered, dropped), and the server's statistics saw it empty when the session
/// planned its statements (as they see it after autovacuum emptied it). A write must reach
/// the requests it answers, its own and the ones waiting through their indexes, not read
/// the whole table or index: after 20,000 requests of other sessions and 1,100 more cycles,
/// a cycle reads as many pages as at first.
#[test]
fn a_long_lived_leader_reads_as_many_pages_a_write_under_a_held_snapshot() {
    let app = format!("claimdag-leader-{}", std::process::id());
    let (url, schema, ids) = store_of(1_300, &app);
    // As autovacuum leaves it once every request went: empty, and known to be.
    psql(&format!("VACUUM (ANALYZE) {schema}.asks"));
    let _held = Snapshot::hold(&schema);
    let store = Store::open(Some(Path::new(&url))).expect("open");
    store.always_combine();
    // Its first load, before anything is counted.
    store.now().expect("the first load");
    let me = Actor::from_name("leader").expect("a name");
    let run = |nodes: &[Id]| {
        for &id in nodes {
            let g = store.claim(id, me, None, None).expect("claim");
            store
                .complete(id, Status::Done, g, Some(me), None)
                .expect("complete");
        }
    };
    let per_write = |pages: i64, n: usize| pages as f64 / (2 * n) as f64;
    let first = per_write(
        pages_in_session(&store, || pages_read(&schema), || run(&ids[..100])),
        100,
    );
    // Requests of other sessions made and dropped meanwhile: they stay in the index of
    // waiting requests while the snapshot is held.
    made_and_dropped(&schema, "", 20_000);
    run(&ids[100..1_200]);
    let last = per_write(
        pages_in_session(&store, || pages_read(&schema), || run(&ids[1_200..])),
        100,
    );
    eprintln!("a long-lived leader: pages read a write: {first:.1} at first, {last:.1} later");
    assert!(
        last <= first * 1.5 + 2.0,
        "{first:.1} pages read a write at first, {last:.1} after 1,100 more cycles of the \
         same session under the snapshot"
    );
}

/// A new store (its schema) with one node in workspace `w`, claimed by an actor at a
/// generation, to be renewed in a loop.
fn renewed() -> (String, Store, Id, Actor, u64) {
    let base = pg::fresh_url();
    let schema = schema_of(&base);
    // Writes that do not wait for the disk: the counts are what is looked at.
    let url = format!("{base}&options=-c%20synchronous_commit%3Doff");
    let store = Store::open(Some(Path::new(&url))).expect("open");
    let id = store
        .upsert(Upsert {
            workspace: "w".into(),
            summary: "renewed".into(),
            ..Upsert::default()
        })
        .expect("upsert");
    let me = Actor::from_name("renewer").expect("a name");
    let g = store.claim(id, me, None, None).expect("claim");
    (schema, store, id, me, g)
}

/// As a leader's write records it: the newest write count of workspace `w` in `schema`
/// says leaders look for waiting requests from `from` (an SQL expression) up.
fn leader_passed(schema: &str, from: &str) {
    psql(&format!(
        "UPDATE {schema}.ws_writes SET asks_from = {from} \
          WHERE name = 'w' \
            AND wseq = (SELECT max(wseq) FROM {schema}.ws_writes WHERE name = 'w')"
    ));
}

/// A workspace's write counts are rows only added, and the old ones go 4,096 at a time: after
/// 8,400 writes the table holds the last 4,096 to 8,192 of them, the newest the count. The
/// requests of ended sessions that no leader looks at go with them.
#[test]
fn the_write_counts_of_a_workspace_stay_few() {
    let (schema, store, id, me, g) = renewed();
    // A request of a session that ended, numbered below where leaders look (it committed
    // after a leader passed its number): no leader takes it, and the trimming drops it.
    psql(&format!(
        "INSERT INTO {schema}.asks (id, ws, pid, at, body) \
         VALUES (1, 'w', 0, now() - interval '1 hour', '{{}}')"
    ));
    leader_passed(&schema, "5");
    for _ in 0..8_400 {
        store.renew(id, me, Some(g), None).expect("renew");
    }
    let rows = |sql: &str| {
        psql(&format!(
            "SELECT {sql} FROM {schema}.ws_writes WHERE name = 'w'"
        ))
    };
    assert_eq!(rows("max(wseq)"), "8402");
    let kept: i64 = rows("count(*)").parse().unwrap();
    assert!((4_096..=8_192).contains(&kept), "{kept} rows kept");
    assert_eq!(rows("min(wseq)"), "4096");
    assert_eq!(
        psql(&format!(
            "SELECT wseq FROM {schema}.ws_now WHERE name = 'w'"
        )),
        "8402"
    );
    assert_eq!(psql(&format!("SELECT count(*) FROM {schema}.asks")), "0");
    // The store reads as it was written.
    assert_eq!(store.get(id).expect("get").node.generation, g);
}

/// Every 4,096 writes a workspace's old write counts go, with the requests of ended
/// sessions below where leaders look. While a snapshot is held, every request ever made is
/// still in the index of waiting requests: a write that trims must look only among the
/// requests made since the writes it deletes, not walk all of them. Here 20,000 requests
/// were made and dropped before the first write the second trim deletes.
#[test]
fn the_write_that_trims_the_counts_reads_no_more_under_a_held_snapshot() {
    let (schema, store, id, me, g) = renewed();
    psql(&format!(
        "ALTER TABLE {schema}.asks SET (autovacuum_enabled = off)"
    ));
    let _held = Snapshot::hold(&schema);
    // 20,000 requests made and dropped while the snapshot is held, and a leader past them.
    made_and_dropped(&schema, "w", 20_000);
    leader_passed(
        &schema,
        &format!("(SELECT last_value + 1 FROM {schema}.asks_id_seq)"),
    );
    let count = || -> i64 {
        psql(&format!(
            "SELECT wseq FROM {schema}.ws_now WHERE name = 'w'"
        ))
        .parse()
        .expect("a count")
    };
    for _ in count()..12_286 {
        store.renew(id, me, Some(g), None).expect("renew");
    }
    let renew = || {
        store.renew(id, me, Some(g), None).expect("renew");
    };
    // The table of requests alone: a plain write does not touch it, the trim does, and
    // autovacuum (which could not remove a thing) is kept off it.
    let asks = || pages_read_of(&schema, "asks");
    let plain = pages_in_session(&store, asks, renew);
    let trims = pages_in_session(&store, asks, || {
        renew();
        assert_eq!(count(), 12_288, "this write trims");
    });
    eprintln!("pages of the requests read: {plain} by a write, {trims} by the write that trims");
    assert!(
        trims <= plain + 20,
        "the write that trims read {trims} pages of the requests, another {plain}"
    );
}

/// A session whose first committed write is one it leads (combined: in a fleet, a worker
/// whose earlier attempts under the workspace's lock wrote nothing) runs the tamper checks
/// first inside the leader's commit, which plans with sequential scans off. The one check
/// that can only scan (it reads the write counter, a sequence) was then planned at a cost
/// past `jit_above_cost`, and the server compiled it again at every later write of that
/// session, about 9 ms each. The server log (every plan, the nested ones too) shows no
/// statement compiled.
#[test]
fn a_leaders_first_commit_leaves_no_statement_the_server_compiles() {
    let (base, dir, _turn) = pg::fresh_own();
    let ids: Vec<Id> = {
        let maker = Store::open(Some(Path::new(&base))).expect("open");
        (0..6)
            .map(|i| {
                maker
                    .upsert(Upsert {
                        summary: format!("node {i}"),
                        ..Upsert::default()
                    })
                    .expect("upsert")
            })
            .collect()
    };
    // The server can compile (else nothing here could fail).
    assert_eq!(
        super::psql_at(pg::own_url(), "SELECT pg_jit_available()"),
        "t",
        "the test server has no JIT compiler"
    );
    let log = dir.join("server.log");
    let from = std::fs::metadata(&log).expect("the server's log").len() as usize;
    let url = format!(
        "{base}&options=-c%20jit%3Don\
         %20-c%20session_preload_libraries%3Dauto_explain\
         %20-c%20auto_explain.log_min_duration%3D0\
         %20-c%20auto_explain.log_nested_statements%3Don"
    );
    {
        let store = Store::open(Some(Path::new(&url))).expect("open");
        store.always_combine();
        // Loaded: its first write is then left for the workspace's leader, itself.
        store.now().expect("the first load");
        let me = Actor::from_name("leader").expect("a name");
        for &id in &ids {
            let g = store.claim(id, me, None, None).expect("claim");
            store
                .complete(id, Status::Done, g, Some(me), None)
                .expect("complete");
        }
    }
    let text = std::fs::read(&log).expect("the server's log");
    let text = String::from_utf8_lossy(&text[from..]);
    assert!(
        text.contains("commit_combined("),
        "no plan of the leader's commit was logged"
    );
    let compiled: Vec<&str> = text.lines().filter(|l| l.contains("JIT:")).collect();
    assert!(
        compiled.is_empty(),
        "the server compiled {} plans of the store's statements:\n{}",
        compiled.len(),
        text.chars().take(3000).collect::<String>()
    );
}
