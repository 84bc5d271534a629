//! Tables changed by hand with SQL: `check` reads everything back and reports each change
//! that breaks the store (exit 6), and a write never builds on one that would break the
//! fence (a generation granted twice).

use super::{cli, pg, psql, schema_of};
use crate::common::actor;

/// A store with a node claimed at generation 2 (returned with the schema and the URL), and a
/// second node done.
fn claimed_store() -> (String, String, String, String) {
    let url = pg::fresh_url();
    let a = cli(&url, &["upsert", "--summary", "claimed at two"])
        .ok()
        .trim()
        .to_string();
    let b = cli(&url, &["upsert", "--summary", "done at two"])
        .ok()
        .trim()
        .to_string();
    cli(&url, &["config", "max_held", "0"]).ok();
    cli(&url, &["claim", &a, "--assignee", &actor(1)]).ok();
    cli(&url, &["claim", &b, "--assignee", &actor(1)]).ok();
    cli(&url, &["complete", &b, "--status", "done", "--gen", "2"]).ok();
    assert!(cli(&url, &["check"]).ok().starts_with("ok: 2 live nodes"));
    let schema = schema_of(&url);
    (url, schema, a, b)
}

fn check_reports(url: &str, phrase: &str) {
    let r = cli(url, &["check"]);
    assert_eq!(r.code, Some(6), "check: {}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(phrase) || r.stderr.contains(phrase),
        "check lacks {phrase:?}: {}{}",
        r.stdout,
        r.stderr
    );
}

#[test]
fn a_deleted_node_row_is_reported_and_never_granted_again() {
    let (url, schema, a, _) = claimed_store();
    psql(&format!("DELETE FROM {schema}.nodes WHERE id = '{a}'"));
    check_reports(&url, &a);
    // Upserting the same summary again would make the node anew at generation 1, and the
    // next claim would grant generation 2 a second time: refused, nothing written.
    let seq = psql(&format!("SELECT {schema}.change_count()"));
    cli(&url, &["upsert", "--summary", "claimed at two"]).refused(6, "corrupt");
    assert_eq!(psql(&format!("SELECT {schema}.change_count()")), seq);
    assert_eq!(
        psql(&format!(
            "SELECT count(*) FROM {schema}.nodes WHERE id = '{a}'"
        )),
        "0"
    );
    // The old holder's complete at generation 2 is not accepted.
    let r = cli(&url, &["complete", &a, "--status", "done", "--gen", "2"]);
    assert_ne!(r.code, Some(0), "{}", r.stdout);
}

/// The same when the node's whole history was moved to the archive (`history_keep`): the
/// archive still says the node was made.
#[test]
fn a_deleted_node_row_whose_history_was_archived_is_never_granted_again() {
    let (url, schema, a, _) = claimed_store();
    cli(&url, &["config", "history_keep", "1"]).ok();
    assert_eq!(
        psql(&format!(
            "SELECT count(*) FROM {schema}.history WHERE node = '{a}'"
        )),
        "0"
    );
    psql(&format!("DELETE FROM {schema}.nodes WHERE id = '{a}'"));
    check_reports(&url, &a);
    let seq = psql(&format!("SELECT {schema}.change_count()"));
    cli(&url, &["upsert", "--summary", "claimed at two"]).refused(6, "corrupt");
    assert_eq!(psql(&format!("SELECT {schema}.change_count()")), seq);
}

/// A node has one row: a second one added by hand (here the claimed node as it was at
/// generation 1, newer by its write number) is reported, and a handle that loads the store
/// refuses to write on it.
#[test]
fn a_second_row_for_a_node_is_reported_and_refuses_writes_as_corrupt() {
    let (url, schema, a, _) = claimed_store();
    psql(&format!(
        "CREATE TEMP TABLE again AS SELECT * FROM {schema}.nodes WHERE id = '{a}'; \
         UPDATE again SET seq = seq + 1000, generation = 1, status = 'todo', holder = NULL, \
         body = body || '{{\"generation\": 1, \"status\": \"todo\", \"holder\": null}}'; \
         INSERT INTO {schema}.nodes SELECT * FROM again"
    ));
    check_reports(&url, &format!("node {a} has two rows"));
    let seq = psql(&format!("SELECT count(*) FROM {schema}.history"));
    cli(&url, &["claim", &a, "--assignee", &actor(2)]).refused(6, "corrupt");
    cli(&url, &["upsert", "--summary", "one more"]).refused(6, "corrupt");
    assert_eq!(psql(&format!("SELECT count(*) FROM {schema}.history")), seq);
    assert_eq!(
        psql(&format!(
            "SELECT count(*) FROM {schema}.nodes WHERE id = '{a}'"
        )),
        "2"
    );
}

/// A workspace's count moved back (its newest row of `ws_writes` deleted) or gone (every
/// row deleted, read as write 0): its node rows are past it.
#[test]
fn a_workspace_count_moved_back_or_deleted_is_reported_and_refuses_writes_as_corrupt() {
    for rows in [
        "(y.name, y.wseq) IN (SELECT name, wseq FROM {schema}.ws_now)",
        "true",
    ] {
        let (url, schema, _, _) = claimed_store();
        let rows = rows.replace("{schema}", &schema);
        psql(&format!("DELETE FROM {schema}.ws_writes y WHERE {rows}"));
        check_reports(&url, "write");
        let seq = psql(&format!("SELECT count(*) FROM {schema}.history"));
        let r = cli(&url, &["upsert", "--summary", "one more"]);
        r.refused(6, "corrupt");
        assert_eq!(psql(&format!("SELECT count(*) FROM {schema}.history")), seq);
    }
}

/// A workspace's row in `ws` only carries its lock. Deleted by hand, a handle loading the
/// store sees node rows past its count and refuses (`check` reports it); a handle that
/// loaded before makes the row again at its next write and goes on from the counts in
/// `ws_writes`, which are whole.
#[test]
fn a_deleted_workspace_row_is_reported_or_made_again_never_built_on_wrongly() {
    use claimdag::{Status, Store};
    let (url, schema, a, _) = claimed_store();
    let store = Store::open(Some(std::path::Path::new(&url))).expect("open");
    let a = claimdag::Id::parse(&a, "id").unwrap();
    assert_eq!(store.get(a).expect("get").node.status, Status::Claimed);
    let count = psql(&format!("SELECT wseq FROM {schema}.ws_now"));
    psql(&format!("DELETE FROM {schema}.ws"));
    check_reports(&url, "write");
    store
        .complete(a, Status::Done, 2, None, None)
        .expect("complete");
    let after: u64 = psql(&format!("SELECT wseq FROM {schema}.ws_now"))
        .parse()
        .unwrap();
    assert_eq!(after, count.parse::<u64>().unwrap() + 1);
    assert!(cli(&url, &["check"]).ok().starts_with("ok: 2 live nodes"));
}

#[test]
fn a_write_counter_moved_back_is_reported_and_refuses_writes_as_corrupt() {
    let (url, schema, _, _) = claimed_store();
    psql(&format!(
        "SELECT setval('{schema}.writes', (SELECT last_value - 1 FROM {schema}.writes))"
    ));
    check_reports(&url, "write counter");
    let r = cli(&url, &["upsert", "--summary", "one more"]);
    r.refused(6, "corrupt");
}

#[test]
fn a_deleted_complete_event_is_reported() {
    let (url, schema, _, b) = claimed_store();
    psql(&format!(
        "DELETE FROM {schema}.history WHERE node = '{b}' AND verb = 'complete'"
    ));
    check_reports(&url, &b);
}

#[test]
fn columns_that_disagree_with_the_body_are_reported_and_refuse_writes() {
    for (column, value) in [
        ("status", "'todo'"),
        ("generation", "1"),
        ("holder", "NULL"),
    ] {
        let (url, schema, a, _) = claimed_store();
        psql(&format!(
            "UPDATE {schema}.nodes SET {column} = {value} WHERE id = '{a}'"
        ));
        check_reports(&url, &a);
        cli(&url, &["upsert", "--summary", "one more"]).refused(6, "corrupt");
    }
}

/// A handle that loaded the store before the tables were changed by hand (a long-running
/// worker) never reads the rows again: the server refuses its write instead, as `corrupt`,
/// and nothing is written.
#[test]
fn a_handle_that_loaded_before_the_tampering_is_refused_by_the_server() {
    use claimdag::{Code, Status, Store};
    type Tamper = fn(&str, &str) -> String;
    let cases: [(&str, Tamper); 5] = [
        ("columns", |schema, a| {
            format!("UPDATE {schema}.nodes SET holder = NULL, status = 'todo' WHERE id = '{a}'")
        }),
        ("wseq", |schema, _| {
            format!("DELETE FROM {schema}.ws_writes y WHERE (y.name, y.wseq) IN (SELECT name, wseq FROM {schema}.ws_now)")
        }),
        ("counts deleted", |schema, _| {
            format!("DELETE FROM {schema}.ws_writes")
        }),
        ("counter", |schema, _| {
            format!(
                "SELECT setval('{schema}.writes', (SELECT last_value - 1 FROM {schema}.writes))"
            )
        }),
        ("deleted", |schema, a| {
            format!("DELETE FROM {schema}.nodes WHERE id = '{a}'")
        }),
    ];
    for (what, tamper) in cases {
        let (url, schema, a, _) = claimed_store();
        let store = Store::open(Some(std::path::Path::new(&url))).expect("open");
        let a = claimdag::Id::parse(&a, "id").unwrap();
        let node = store.get(a).expect("get").node;
        assert_eq!(node.status, Status::Claimed);
        psql(&tamper(&schema, &a.hex()));
        let seq = psql(&format!("SELECT {schema}.change_count()"));
        let history = psql(&format!("SELECT count(*) FROM {schema}.history"));
        // The cached node is still claimed at generation 2: its holder's complete would
        // write the row anew (deleted), or over columns that say otherwise, or as a write
        // whose number the history already holds.
        let e = store
            .complete(a, Status::Done, 2, None, None)
            .expect_err(what);
        assert_eq!(e.code(), Code::Corrupt, "{what}: {e}");
        assert!(e.to_string().contains("by hand"), "{what}: {e}");
        assert_eq!(
            psql(&format!("SELECT {schema}.change_count()")),
            seq,
            "{what}"
        );
        let after = psql(&format!("SELECT count(*) FROM {schema}.history"));
        assert_eq!(after, history, "{what}");
    }
}
