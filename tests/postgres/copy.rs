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
        "complete", &a, "--status", "done", "--gen", "2", "--note", "shipped",
    ]);
    s.ok(&["archive", &a]);
    s.claim(&b, &actor(2), &["--ttl", "10m"]);
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
    for store in [&url, &back] {
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
