//! Every error code of SPEC section 4 the CLI can produce: the message phrase, the exit code,
//! the `--json` error object with its context fields, and store files left byte for byte
//! as they were after every refused write.

use crate::common::{self, actor, Store};
use serde_json::Value;

/// A store with one ready node.
fn one_node() -> (Store, String) {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    (s, a)
}

#[test]
fn not_found_exits_3() {
    let (s, a) = one_node();
    let missing = "0000000000000000000000000000dead";
    let e = s.refused(&["show", missing], 3, "not found", "not_found");
    assert_eq!(e["node"], missing);
    s.refused(&["show", "deadbeef"], 3, "not found", "not_found");
    s.refused(
        &["claim", missing, "--assignee", &actor(1)],
        3,
        "not found",
        "not_found",
    );
    s.refused(&["link", missing, &a], 3, "not found", "not_found");
    s.refused(&["link", &a, missing], 3, "not found", "not_found");
    s.refused(
        &["upsert", "--summary", "child", "--parent", missing],
        3,
        "not found",
        "not_found",
    );
    let b = s.upsert("reject a manifest with no header", &[]);
    // Unlinking from a node that does not exist.
    s.refused(&["unlink", missing, &b], 3, "not found", "not_found");
    s.refused(&["unlink", &a, missing], 3, "not found", "not_found");
}

#[test]
fn unlinking_a_link_that_is_not_there_is_a_no_op() {
    let (s, a) = one_node();
    let b = s.upsert("reject a manifest with no header", &[]);
    let before = s.files();
    assert_eq!(s.ok(&["unlink", &a, &b]), "");
    assert_eq!(s.files(), before, "a no-op unlink writes nothing");
    s.ok(&["link", &a, &b]);
    s.ok(&["unlink", &a, &b]);
    let after = s.files();
    // Retried, as a plan that is run twice retries it: still fine, still nothing written.
    s.ok(&["unlink", &a, &b]);
    assert_eq!(s.files(), after);
}

#[test]
fn already_claimed_exits_4_and_names_holder_and_generation() {
    let (s, a) = one_node();
    let me = actor(7);
    assert_eq!(s.claim(&a, &me, &[]), 2);
    for who in [actor(8), me.clone()] {
        let e = s.refused(
            &["claim", &a, "--assignee", &who],
            4,
            "already claimed",
            "already_claimed",
        );
        assert_eq!(e["holder"], me.as_str());
        assert_eq!(e["generation"], 2);
        assert_eq!(e["node"], a.as_str());
    }
}

#[test]
fn assignee_busy_exits_4_with_the_default_max_held_of_one() {
    let (s, a) = one_node();
    let b = s.upsert("reject a manifest with no header", &[]);
    let me = actor(7);
    s.claim(&a, &me, &[]);
    let e = s.refused(
        &["claim", &b, "--assignee", &me],
        4,
        "already holds",
        "assignee_busy",
    );
    assert_eq!(e["node"], b.as_str());
    // The error names the claim the actor already holds, so an agent can find its place.
    assert_eq!(e["held"], serde_json::json!([a]));
    assert!(e["message"].as_str().unwrap().contains(&a));
    let e = s.refused(
        &["claim-next", "--assignee", &me],
        4,
        "already holds",
        "assignee_busy",
    );
    assert_eq!(e["held"], serde_json::json!([a]));
}

#[test]
fn not_ready_exits_4() {
    let (s, a) = one_node();
    let b = s.upsert("reject a manifest with no header", &[]);
    s.ok(&["link", &a, &b]);
    let e = s.refused(
        &["claim", &b, "--assignee", &actor(7)],
        4,
        "not ready",
        "not_ready",
    );
    assert_eq!(e["node"], b.as_str());
    assert!(
        e["message"].as_str().unwrap_or_default().contains(&a),
        "the message names the prerequisite: {e}"
    );
}

#[test]
fn attempts_exhausted_exits_4() {
    let s = Store::new();
    let a = s.upsert("flaky step", &["--max-attempts", "1"]);
    let me = actor(7);
    assert_eq!(s.claim(&a, &me, &[]), 2);
    assert_eq!(
        s.ok(&["release", &a, "--actor", &me, "--gen", "2"]),
        "gen=3\n"
    );
    let e = s.refused(
        &["claim", &a, "--assignee", &me],
        4,
        "attempts exhausted",
        "attempts_exhausted",
    );
    assert_eq!(e["node"], a.as_str());
    let n = s.node(&a);
    assert_eq!(n["status"], "todo");
    assert_eq!(n["display"], "parked");
    assert_eq!(n["ready"], false);
    assert_eq!(n["attempts"], 1);
}

#[test]
fn resource_conflict_exits_4_and_names_the_holder() {
    let s = Store::new();
    let dir = s.upsert("rewrite the parser", &["--resource", "src/"]);
    let file = s.upsert("fix one parser bug", &["--resource", "src/parser.rs"]);
    let me = actor(7);
    let you = actor(8);
    assert_eq!(s.claim(&dir, &me, &[]), 2);
    let e = s.refused(
        &["claim", &file, "--assignee", &you],
        4,
        "resource",
        "resource_conflict",
    );
    assert_eq!(e["holder"], me.as_str());
    assert_eq!(e["generation"], 2);
    assert_eq!(e["node"], file.as_str());
    // The other way round too: the file first, then the directory.
    s.ok(&["complete", &dir, "--status", "done", "--gen", "2"]);
    let dir2 = s.upsert("move the parser", &["--resource", "src/"]);
    assert_eq!(s.claim(&file, &you, &[]), 2);
    s.refused(
        &["claim", &dir2, "--assignee", &me],
        4,
        "resource",
        "resource_conflict",
    );
}

#[test]
fn not_claimed_exits_4() {
    let (s, a) = one_node();
    let me = actor(7);
    s.refused(
        &["renew", &a, "--actor", &me],
        4,
        "not claimed",
        "not_claimed",
    );
    s.refused(
        &["release", &a, "--actor", &me, "--gen", "1"],
        4,
        "not claimed",
        "not_claimed",
    );
    s.refused(
        &["complete", &a, "--status", "done", "--gen", "1"],
        4,
        "not claimed",
        "not_claimed",
    );
}

#[test]
fn terminal_exits_4() {
    let (s, a) = one_node();
    let me = actor(7);
    s.claim(&a, &me, &[]);
    s.ok(&["complete", &a, "--status", "done", "--gen", "2"]);
    s.refused(&["claim", &a, "--assignee", &me], 4, "terminal", "terminal");
    s.refused(
        &["complete", &a, "--status", "failed", "--gen", "2"],
        4,
        "terminal",
        "terminal",
    );
    s.refused(&["renew", &a, "--actor", &me], 4, "terminal", "terminal");
    let b = s.upsert("reject a manifest with no header", &[]);
    // A finished node cannot gain a prerequisite.
    s.refused(&["link", &b, &a], 4, "terminal", "terminal");
}

#[test]
fn stale_generation_exits_5() {
    let (s, a) = one_node();
    let me = actor(7);
    s.refused(
        &["claim", &a, "--assignee", &me, "--gen", "5"],
        5,
        "stale generation",
        "stale_generation",
    );
    s.claim(&a, &me, &[]);
    let e = s.refused(
        &["complete", &a, "--status", "done", "--gen", "1"],
        5,
        "stale generation",
        "stale_generation",
    );
    assert_eq!(e["generation"], 2);
    assert_eq!(e["node"], a.as_str());
    s.refused(
        &["renew", &a, "--actor", &me, "--gen", "1"],
        5,
        "stale generation",
        "stale_generation",
    );
    s.refused(
        &["release", &a, "--actor", &me, "--gen", "3"],
        5,
        "stale generation",
        "stale_generation",
    );
    s.ok(&["complete", &a, "--status", "done", "--gen", "2"]);
    s.refused(
        &["reopen", &a, "--gen", "1"],
        5,
        "stale generation",
        "stale_generation",
    );
}

#[test]
fn not_holder_exits_5_and_names_the_holder() {
    let (s, a) = one_node();
    let me = actor(7);
    let other = actor(8);
    s.claim(&a, &me, &[]);
    let e = s.refused(
        &[
            "complete", &a, "--status", "done", "--gen", "2", "--actor", &other,
        ],
        5,
        "not the holder",
        "not_holder",
    );
    assert_eq!(e["holder"], me.as_str());
    assert_eq!(e["generation"], 2);
    assert_eq!(e["node"], a.as_str());
    s.refused(
        &["renew", &a, "--actor", &other],
        5,
        "not the holder",
        "not_holder",
    );
    s.refused(
        &["release", &a, "--actor", &other, "--gen", "2"],
        5,
        "not the holder",
        "not_holder",
    );
}

#[test]
fn cycle_exits_2() {
    let (s, a) = one_node();
    let b = s.upsert("reject a manifest with no header", &[]);
    s.refused(&["link", &a, &a], 2, "cycle", "cycle");
    s.ok(&["link", &a, &b]);
    s.refused(&["link", &b, &a], 2, "cycle", "cycle");
}

#[test]
fn invalid_input_exits_2() {
    let (s, a) = one_node();
    for (args, phrase) in [
        (vec!["claim", a.as_str(), "--assignee", "xyz"], "assignee"),
        (
            vec!["claim", a.as_str(), "--assignee", &"g".repeat(32)],
            "assignee",
        ),
        (vec!["show", "xyz"], "node"),
        (vec!["show", "nothexatall"], "node"),
        (vec!["upsert", "--summary", ""], "summary"),
        (vec!["upsert", "--summary", "  \n\t "], "summary"),
        (vec!["upsert", "--summary", &"x".repeat(4097)], "summary"),
        (vec!["upsert", "--summary", "s", "--kind", "BAD"], "kind"),
        (vec!["upsert", "--summary", "s", "--kind", ""], "kind"),
        (
            vec!["upsert", "--summary", "s", "--kind", &"k".repeat(33)],
            "kind",
        ),
        (
            vec!["claim", a.as_str(), "--assignee", &actor(1), "--ttl", "5x"],
            "duration",
        ),
        (
            vec!["claim", a.as_str(), "--assignee", &actor(1), "--ttl=-5s"],
            "duration",
        ),
        (vec!["reclaim", "--lease", "1.5s"], "duration"),
        (
            vec!["complete", a.as_str(), "--status", "finished", "--gen", "1"],
            "status",
        ),
    ] {
        let e = s.refused(&args, 2, phrase, "invalid_input");
        assert!(e.get("holder").is_none(), "{e}");
    }
    // A lease that would overflow the clock is invalid input too.
    s.refused(
        &[
            "claim",
            &a,
            "--assignee",
            &actor(1),
            "--ttl",
            "18446744073709551000ms",
        ],
        2,
        "overflows",
        "invalid_input",
    );
    assert_eq!(s.node(&a)["generation"], 1);
}

#[test]
fn corrupt_exits_6() {
    let (s, a) = one_node();
    std::fs::write(s.dir.join("snapshot.json"), b"\x00garbage{{{").expect("write");
    let e = s.refused(&["list"], 6, "corrupt", "corrupt");
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("snapshot.json"),
        "{e}"
    );
    s.refused(&["show", &a], 6, "corrupt", "corrupt");
    s.refused(&["upsert", "--summary", "more"], 6, "corrupt", "corrupt");
}

#[test]
fn io_exits_7_when_the_store_is_a_regular_file() {
    let s = Store::new();
    let file = s.scratch().join("not-a-dir");
    std::fs::write(&file, b"plain file\n").expect("write");
    let path = file.to_string_lossy().into_owned();
    for args in [
        vec!["list"],
        vec!["show", "0000000000000000000000000000dead"],
        vec!["upsert", "--summary", "x"],
        vec!["check"],
    ] {
        let mut all = vec!["--dir", path.as_str()];
        all.extend_from_slice(&args);
        let r = common::command().args(&all).output().expect("run");
        let r = common::Run::from_output(all.iter().map(|s| s.to_string()).collect(), r);
        r.refused(7, &path);
        assert!(r.stderr.starts_with("error: "), "{}", r.stderr);
        let mut j = vec!["--json"];
        j.extend_from_slice(&all);
        let r = common::command().args(&j).output().expect("run");
        let r = common::Run::from_output(j.iter().map(|s| s.to_string()).collect(), r);
        assert_eq!(r.code, Some(7), "{}", r.stderr);
        let e = r.error_json();
        assert_eq!(e["code"], "io");
        assert!(
            e["message"].as_str().unwrap_or_default().contains(&path),
            "{e}"
        );
        assert_eq!(std::fs::read(&file).expect("read"), b"plain file\n");
    }
}

#[test]
fn usage_errors_exit_2() {
    let (s, a) = one_node();
    let before = s.files();
    for args in [
        vec!["frobnicate"],
        vec!["claim", a.as_str()],
        vec!["claim", a.as_str(), "--assignee", &actor(1), "--gen", "two"],
        vec!["list", "--bogus"],
        vec!["upsert"],
        vec!["complete", a.as_str(), "--status", "done"],
    ] {
        let r = s.run(&args);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
        assert!(r.stderr.starts_with("error: "), "{args:?}: {}", r.stderr);
        assert_eq!(r.stdout, "");
    }
    // No verb at all is a usage error too.
    let r = common::command().output().expect("run");
    assert_eq!(r.status.code(), Some(2));
    common::assert_files_eq(&before, &s.files(), "usage errors");
}

#[test]
fn json_errors_are_one_object_on_stderr_and_nothing_on_stdout() {
    let (s, a) = one_node();
    let me = actor(7);
    s.claim(&a, &me, &[]);
    let r = s.run(&["--json", "claim", &a, "--assignee", &actor(8)]);
    assert_eq!(r.code, Some(4));
    assert_eq!(r.stdout, "");
    let whole: Value = serde_json::from_str(r.stderr.trim()).expect("one JSON object");
    assert_eq!(whole.as_object().map(|o| o.len()), Some(1), "{whole}");
    assert_eq!(whole["error"]["code"], "already_claimed");
}
