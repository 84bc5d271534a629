//! Every door survives its connection. A Rust handle's next call after its connections were
//! killed, and after the server was restarted as after a crash, reconnects and works (the
//! Python module and the MCP server: tests/python/test_postgres.py; C: tests/c/run.sh;
//! `work` and leases: faults.rs). A write whose connection dies mid-commit is `io` (its
//! outcome unknown), and a read afterwards finds it whole or not at all, never half.

use super::proxy::Proxy;
use super::{cli, pg, server_port};
use crate::common::actor;
use claimdag::{Actor, Code, Status, Store, Upsert};

fn upsert(s: &Store, summary: &str) -> claimdag::Id {
    s.upsert(Upsert {
        summary: summary.into(),
        ..Upsert::default()
    })
    .expect("upsert")
}

#[test]
fn a_rust_handle_reconnects_after_killed_connections_and_a_restart() {
    let (url, _, _turn) = pg::fresh_own();
    let s = Store::open(Some(std::path::Path::new(&url))).expect("open");
    let me = Actor::from_name("door").unwrap();
    let a = upsert(&s, "before the faults");
    for (fault, what) in [
        (
            pg::kill_own_connections as fn(),
            "its connections were killed",
        ),
        (pg::restart_own as fn(), "the server restarted"),
    ] {
        fault();
        // The first call may find its connection gone: it reconnects and answers.
        let n = s
            .get(a)
            .unwrap_or_else(|e| panic!("a read after {what}: {e}"));
        assert_eq!(n.node.id, a);
        let b = upsert(&s, &format!("after {what}"));
        let g = s
            .claim(b, me, None, None)
            .unwrap_or_else(|e| panic!("a claim after {what}: {e}"));
        s.complete(b, Status::Done, g, Some(me), None)
            .unwrap_or_else(|e| panic!("a complete after {what}: {e}"));
        // Again, with a write as the first call.
        fault();
        upsert(&s, &format!("a write first after {what}"));
    }
    assert_eq!(s.check().unwrap().problems, Vec::<String>::new());
}

/// The texts of the message that commits a write.
const COMMIT: &[&str] = &[".commit("];

#[test]
fn a_write_cut_mid_commit_is_io_and_reads_back_whole_or_not_at_all() {
    let url = pg::fresh_url();
    let a = cli(
        &url,
        &["upsert", "--summary", "claimed over a link that breaks"],
    )
    .ok()
    .trim()
    .to_string();
    let b = cli(&url, &["upsert", "--summary", "claimed by the library"])
        .ok()
        .trim()
        .to_string();
    let proxy = Proxy::cutting(server_port(), COMMIT);
    let cut = proxy.store_url(&url);
    let me = actor(5);
    // The command: the link dies after the commit was sent, before its answer.
    let r = cli(&cut, &["--json", "claim", &a, "--assignee", &me]);
    assert_eq!(r.code, Some(Code::Io.exit_code()), "{}", r.stderr);
    let err: serde_json::Value = serde_json::from_str(&r.stderr).expect("a JSON error");
    assert_eq!(err["error"]["code"], "io", "{}", r.stderr);
    // The library, the same.
    let s = Store::open(Some(std::path::Path::new(&cut))).expect("open through the proxy");
    let other = actor(6);
    let who = claimdag::Id::from_hex(other.as_bytes()).unwrap();
    let id = claimdag::Id::from_hex(b.as_bytes()).unwrap();
    let e = s.claim(id, who, None, None).expect_err("the link was cut");
    assert_eq!(e.code(), Code::Io, "{e}");
    assert!(
        proxy.hits() >= 2,
        "the commit went out {} times",
        proxy.hits()
    );
    // Read directly: each claim is there whole (generation 2, the holder, its event) or not
    // at all (generation 1, no holder, no event).
    for (node, me) in [(&a, &me), (&b, &other)] {
        let shown = cli(&url, &["--json", "show", node]).json();
        let events = cli(&url, &["--json", "log", node]).json();
        let claims = events
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["verb"] == "claim")
            .count();
        match shown["generation"].as_u64() {
            Some(2) => {
                assert_eq!(shown["holder"], me.as_str());
                assert_eq!(claims, 1, "{node}: granted without its event");
            }
            Some(1) => {
                assert!(shown["holder"].is_null());
                assert_eq!(claims, 0, "{node}: an event without the grant");
            }
            other => panic!("{node}: generation {other:?}"),
        }
    }
    assert!(cli(&url, &["check"]).ok().starts_with("ok"));
}
