//! What a write costs the server (schema version 9): it reads the rows of the nodes it
//! touches, not the store's, whatever plan the server's statistics lead to.

use super::{pg, psql, schema_of};
use claimdag::rules::{Plan, PlanNode};
use claimdag::{Actor, Status, Store};
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
    let base = pg::fresh_url();
    let schema = schema_of(&base);
    let app = format!("claimdag-cost-{}", std::process::id());
    let url = format!("{base}&application_name={app}");
    {
        let store = Store::open(Some(Path::new(&url))).expect("open");
        store.set_setting("max_held", "0").expect("settings");
        let plan = Plan {
            nodes: (0..NODES)
                .map(|i| PlanNode {
                    key: format!("n{i}"),
                    summary: format!("node {i}"),
                    ..PlanNode::default()
                })
                .collect(),
        };
        store.import("", plan).expect("import");
    }
    // The server's statistics know the table's size, as autovacuum soon would.
    psql(&format!("ANALYZE {schema}.nodes; ANALYZE {schema}.history"));
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
