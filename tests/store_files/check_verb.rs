//! `check`: a sound store exits 0 and says `ok`; a hand-edited snapshot with a cycle, a holder
//! on a todo node, a prerequisite that does not exist or a generation the history does not
//! account for exits 6 naming the problem; a garbled snapshot exits 6 with `corrupt`. Check
//! never changes a file.
//!
//! The stores are built through the binary, then the journal is folded into `snapshot.json`
//! (as a compaction would), so every node is in the one file a test edits.

use crate::common::{self, actor, Run, Store};
use serde_json::{json, Value};

/// A store with a chain a -> b, a claimed node c, a done node d, all in the snapshot.
struct Built {
    s: Store,
    a: String,
    b: String,
    c: String,
    d: String,
}

fn built() -> Built {
    let s = Store::new();
    let a = s.upsert("first", &[]);
    let b = s.upsert("second, waits on first", &[]);
    let c = s.upsert("claimed", &[]);
    let d = s.upsert("done", &["--parent", &a]);
    s.ok(&["link", &a, &b]);
    s.claim(&c, &actor(1), &["--ttl", "1h"]);
    s.finish(&d, "done");
    let listed = s.ok(&["list", "--all"]);
    s.fold_journal();
    assert_eq!(
        std::fs::read(s.dir().join("journal")).expect("journal"),
        common::JOURNAL_HEADER
    );
    assert_eq!(
        s.snapshot()["nodes"].as_array().map(|n| n.len()),
        Some(4),
        "every node is in the snapshot"
    );
    assert_eq!(
        s.ok(&["list", "--all"]),
        listed,
        "the fold changed the store"
    );
    Built { s, a, b, c, d }
}

/// Runs `check` and `check --json`; asserts neither changed a file.
fn check(s: &Store) -> (Run, Run) {
    let before = s.files();
    let text = s.run(&["check"]);
    let json = s.run(&["--json", "check"]);
    common::assert_files_eq(&before, &s.files(), "check");
    (text, json)
}

/// Asserts check found problems (exit 6) and that one problem line contains every part.
fn found(s: &Store, parts: &[&str]) {
    let (text, json) = check(s);
    assert_eq!(
        text.code,
        Some(6),
        "check of a broken store: {}{}",
        text.stdout,
        text.stderr
    );
    let problems: Vec<&str> = text
        .stdout
        .lines()
        .filter(|l| l.starts_with("problem: "))
        .collect();
    assert!(
        problems
            .iter()
            .any(|p| parts.iter().all(|part| p.contains(part))),
        "no problem line names {parts:?}: {}",
        text.stdout
    );
    assert!(
        !text.stdout.lines().any(|l| l.starts_with("ok")),
        "{}",
        text.stdout
    );
    assert_eq!(json.code, Some(6));
    let v: Value = json.json();
    assert_eq!(v["ok"], false, "{v}");
    let listed: Vec<&str> = v["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    assert!(
        listed
            .iter()
            .any(|p| parts.iter().all(|part| p.contains(part))),
        "no JSON problem names {parts:?}: {v}"
    );
}

#[test]
fn a_sound_store_is_ok() {
    let fresh = Store::new();
    let (text, _) = check(&fresh);
    assert_eq!(text.code, Some(0), "{}{}", text.stdout, text.stderr);
    assert!(!fresh.dir().exists(), "check created the store");

    let b = built();
    let (text, json) = check(&b.s);
    assert_eq!(text.code, Some(0), "{}{}", text.stdout, text.stderr);
    assert!(text.stdout.starts_with("ok"), "{}", text.stdout);
    assert!(!text.stdout.contains("problem"), "{}", text.stdout);
    assert_eq!(json.code, Some(0));
    let v = json.json();
    assert_eq!(v["ok"], true);
    assert_eq!(v["problems"], json!([]));
    assert_eq!(v["nodes"], 4);
    // Writes after the fold land in the journal again and the store stays sound.
    let g = b.s.node(&b.c)["generation"].to_string();
    b.s.ok(&["complete", &b.c, "--status", "done", "--gen", &g]);
    b.s.upsert("after the fold", &[]);
    assert_eq!(b.s.run(&["check"]).code, Some(0));
}

#[test]
fn a_cycle_in_the_snapshot_is_found() {
    let b = built();
    // b already waits on a; make a wait on b.
    let bb = b.b.clone();
    b.s.edit_snapshot_node(&b.a, |n| {
        n.insert("deps".into(), json!([bb]));
    });
    let (text, _) = check(&b.s);
    assert_eq!(text.code, Some(6), "{}{}", text.stdout, text.stderr);
    let line = text
        .stdout
        .lines()
        .find(|l| l.starts_with("problem: ") && l.contains("cycle"))
        .unwrap_or_else(|| panic!("no cycle problem: {}", text.stdout));
    assert!(
        line.contains(&b.a) || line.contains(&b.b),
        "the cycle problem names neither node on it: {line}"
    );
    found(&b.s, &["cycle"]);
}

#[test]
fn a_holder_on_a_todo_node_is_found() {
    let b = built();
    b.s.edit_snapshot_node(&b.a, |n| {
        n.insert("holder".into(), json!(actor(9)));
    });
    found(&b.s, &[&b.a, "holder"]);
}

#[test]
fn a_prerequisite_that_does_not_exist_is_found() {
    let b = built();
    let ghost = "0123456789abcdef0123456789abcdef";
    let a = b.a.clone();
    b.s.edit_snapshot_node(&b.b, |n| {
        n.insert("deps".into(), json!([a, ghost]));
    });
    found(&b.s, &[&b.b, ghost]);
}

#[test]
fn a_parent_that_does_not_exist_is_found() {
    let b = built();
    let ghost = "fedcba9876543210fedcba9876543210";
    b.s.edit_snapshot_node(&b.d, |n| {
        n.insert("parent".into(), json!(ghost));
    });
    found(&b.s, &[&b.d, ghost]);
}

#[test]
fn a_generation_the_history_does_not_account_for_is_found() {
    let b = built();
    // c was claimed once: generation 2. Claim it a second time on paper only.
    assert_eq!(b.s.node(&b.c)["generation"], 2);
    b.s.edit_snapshot_node(&b.c, |n| {
        n.insert("generation".into(), json!(3));
    });
    found(&b.s, &[&b.c, "generation"]);
    // A node never claimed is at generation 1; 2 is not accounted for.
    let b = built();
    b.s.edit_snapshot_node(&b.a, |n| {
        n.insert("generation".into(), json!(2));
    });
    found(&b.s, &[&b.a, "generation"]);
}

#[test]
fn a_claim_without_its_lease_is_found() {
    let b = built();
    b.s.edit_snapshot_node(&b.c, |n| {
        n.remove("ttl_ms");
    });
    found(&b.s, &[&b.c, "lease"]);
}

#[test]
fn an_archived_node_missing_from_the_archive_is_found() {
    let b = built();
    assert_eq!(b.s.ok(&["archive", &b.d]), "archived 1\n");
    b.s.fold_journal();
    let (text, _) = check(&b.s);
    assert_eq!(text.code, Some(0), "{}{}", text.stdout, text.stderr);
    assert_eq!(b.s.node(&b.d)["archived"], true);
    std::fs::remove_file(b.s.dir().join("archive.jsonl")).expect("remove the archive");
    found(&b.s, &[&b.d, "archive"]);
}

#[test]
fn a_garbled_snapshot_is_corrupt() {
    for garbage in [
        b"{\"format\": 1, \"seq\": 3, \"nodes\": [{\"id\": ".to_vec(),
        b"not json at all\n".to_vec(),
        b"{\"format\": 1, \"seq\": 3, \"nodes\": [{\"id\": \"zz\"}]}\n".to_vec(),
    ] {
        let b = built();
        std::fs::write(b.s.dir().join("snapshot.json"), &garbage).expect("garble");
        let (text, json) = check(&b.s);
        assert_eq!(text.code, Some(6), "{}{}", text.stdout, text.stderr);
        assert!(
            text.stderr.contains("corrupt") && text.stderr.contains("snapshot.json"),
            "{}",
            text.stderr
        );
        assert_eq!(json.code, Some(6));
        assert_eq!(json.error_json()["code"], "corrupt");
    }
}

#[test]
fn two_claims_holding_conflicting_resources_are_found() {
    let s = Store::new();
    let a = s.upsert("the sources", &["--resource", "path:src/**"]);
    let b = s.upsert("the docs", &["--resource", "path:docs/**"]);
    s.claim(&a, &actor(1), &["--ttl", "1h"]);
    s.claim(&b, &actor(2), &["--ttl", "1h"]);
    s.fold_journal();
    assert_eq!(
        s.run(&["check"]).code,
        Some(0),
        "readers and writers apart: sound"
    );
    s.edit_snapshot_node(&b, |n| {
        n.insert("resources".into(), json!(["read:path:src/main.rs"]));
    });
    found(
        &s,
        &[
            "conflicting resources",
            "path:src/**",
            "read:path:src/main.rs",
        ],
    );
}
