//! `claimdag copy` moves a whole store between backends, history and archive included: a
//! directory to PostgreSQL and back reads the same, and `check` is clean on each copy.

use super::{cli, pg};
use crate::common::{actor, Store};

#[test]
fn copy_moves_a_whole_store_to_postgres_and_back() {
    let s = Store::new();
    let a = s.upsert("finished and archived", &[]);
    let b = s.upsert("claimed", &["--resource", "src/"]);
    let c = s.upsert("waits", &[]);
    s.ok(&["link", &b, &c]);
    s.claim(&a, &actor(1), &[]);
    s.ok(&[
        "complete",
        &a,
        "--status",
        "done",
        "--gen",
        "2",
        "--note",
        "shipped",
        "--output",
        r#"{"z": 1, "a": [2.5, "x"]}"#,
    ]);
    s.ok(&["archive", &a]);
    s.claim(&b, &actor(2), &["--ttl", "10m"]);
    // A checkpoint and a cancel request travel with the node.
    s.ok(&["renew", &b, "--actor", &actor(2), "--progress", "half way"]);
    s.ok(&["cancel", &b, "--reason", "stop here"]);
    s.ok(&["config", "max_attempts", "5"]);
    let dir = s.dir().to_string_lossy().into_owned();
    let url = pg::fresh_url();
    let out = cli(&dir, &["copy", "--from", &dir, "--to", &url])
        .ok()
        .to_string();
    assert!(out.starts_with("copied 2 live nodes, 1 archived"), "{out}");
    let back = s.scratch().join("back");
    let back = back.to_string_lossy().into_owned();
    cli(&dir, &["copy", "--from", &url, "--to", &back]).ok();
    for args in [
        vec!["--json", "list", "--all"],
        vec!["--json", "log"],
        vec!["--json", "config"],
        vec!["--json", "show", &a],
        vec!["--json", "show", &b],
        vec!["--json", "ready"],
    ] {
        let want = cli(&dir, &args).json();
        assert_eq!(cli(&url, &args).json(), want, "{args:?} on postgres");
        assert_eq!(
            cli(&back, &args).json(),
            want,
            "{args:?} back in a directory"
        );
    }
    // The output's text, key order included, is the same in every copy.
    let log = cli(&dir, &["log"]).ok().to_string();
    assert!(log.contains(r#"output={"z":1,"a":[2.5,"x"]}"#), "{log}");
    for store in [&url, &back] {
        assert_eq!(cli(store, &["log"]).ok(), log);
        assert!(cli(store, &["check"])
            .ok()
            .starts_with("ok: 2 live nodes, 1 archived"));
    }
    // The copies go on as the original would: the claimed node is still held.
    cli(&url, &["claim", &b, "--assignee", &actor(3)]).refused(4, "already claimed");
    // A destination that was written is refused, and left as it was.
    let r = cli(&dir, &["copy", "--from", &dir, "--to", &url]);
    r.refused(2, "not an empty store");
    let r = cli(&dir, &["copy", "--from", &url, "--to", &back]);
    r.refused(2, "not an empty store");
}

#[test]
fn copy_of_a_store_being_written_is_one_snapshot() {
    // The source's history is read late (held back on a slow link) while another client
    // writes: the copy holds the store as of one moment, nodes and history alike, and goes
    // on writing afterwards.
    let url = pg::fresh_url();
    let a = cli(&url, &["upsert", "--summary", "before the copy"])
        .ok()
        .trim()
        .to_string();
    cli(&url, &["claim", &a, "--assignee", &actor(1)]).ok();
    let slow_history = super::proxy::Proxy::start(
        super::server_port(),
        &[".history"],
        std::time::Duration::from_secs(3),
    );
    let source = slow_history.store_url(&url);
    let target = pg::fresh_url();
    let (s2, t2) = (source.clone(), target.clone());
    let copier = std::thread::spawn(move || cli(&s2, &["copy", "--from", &s2, "--to", &t2]));
    assert!(
        slow_history.wait_for_hits(1, std::time::Duration::from_secs(60)),
        "the copy read the history through the proxy"
    );
    // Meanwhile: a new node, and the claimed one finished.
    cli(&url, &["upsert", "--summary", "during the copy"]).ok();
    cli(&url, &["complete", &a, "--status", "done", "--gen", "2"]).ok();
    let copied = copier.join().unwrap();
    copied.ok();
    let check = cli(&target, &["check"]);
    assert!(
        check.ok().starts_with("ok: 1 live nodes"),
        "{}",
        check.stdout
    );
    // The copy is the store before those writes, and takes writes of its own.
    assert_eq!(
        cli(&target, &["--json", "show", &a]).json()["status"],
        "claimed"
    );
    cli(&target, &["complete", &a, "--status", "done", "--gen", "2"]).ok();
    cli(&target, &["upsert", "--summary", "after the copy"]).ok();
    assert!(cli(&target, &["check"])
        .ok()
        .starts_with("ok: 2 live nodes"));
}

#[test]
fn copy_from_a_store_that_does_not_exist_is_not_found() {
    let s = Store::new();
    let missing_schema = pg::fresh_url();
    let target = pg::fresh_url();
    let dir = s.dir().to_string_lossy().into_owned();
    cli(&dir, &["copy", "--from", &missing_schema, "--to", &target]).refused(3, "not found");
    let missing_dir = s.scratch().join("no-such-store");
    let missing_dir = missing_dir.to_string_lossy().into_owned();
    cli(&dir, &["copy", "--from", &missing_dir, "--to", &target]).refused(3, "not found");
    // Nothing was made at the target: the copy with the right source goes through.
    s.upsert("the real one", &[]);
    cli(&dir, &["copy", "--from", &dir, "--to", &target]).ok();
    assert!(cli(&target, &["check"])
        .ok()
        .starts_with("ok: 1 live nodes"));
}
