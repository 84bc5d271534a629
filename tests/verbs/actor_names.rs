//! Actor names (SPEC 13, "Actor names"): `name:NAME` keeps NAME at its first use by a call
//! that succeeds, `actor add` keeps one with a note, and text and JSON show the name beside
//! the actor; an actor with no name shows as before.

use crate::common::{actor, short, Store};

const CODEX: &str = "552f6ade14af3feeda57b7b50edcc109";

#[test]
fn a_name_used_by_a_claim_is_kept_and_shown_in_list_show_and_log() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    assert_eq!(s.claim(&a, "name:codex-1", &[]), 2);
    assert_eq!(
        s.ok(&["list"]),
        format!(
            "{}  claimed  task  gen=2  holder=name:codex-1  parse the manifest header\n",
            short(&a)
        )
    );
    let shown = s.ok(&["show", &a]);
    assert!(
        shown.contains(&format!("holder       {CODEX} (name:codex-1)\n")),
        "{shown}"
    );
    let log = s.ok(&["log", &a]);
    assert!(
        log.lines()
            .last()
            .unwrap()
            .ends_with("gen=2  actor=name:codex-1  via=cli"),
        "{log}"
    );
    let n = s.json(&["show", &a]);
    assert_eq!(
        (&n["holder"], &n["holder_name"]),
        (&CODEX.into(), &"codex-1".into()),
        "{n}"
    );
    assert_eq!(n["last_holder_name"], serde_json::Value::Null);
    let events = s.json(&["log", &a]);
    let claim = &events.as_array().unwrap()[1];
    assert_eq!(
        (&claim["actor"], &claim["actor_name"]),
        (&CODEX.into(), &"codex-1".into())
    );
    assert!(events[0].get("actor_name").is_none(), "{events}");
    let listed = s.json(&["actor", "list"]);
    assert_eq!(listed[0]["name"], "codex-1", "{listed}");
    assert_eq!(listed[0]["id"], CODEX, "{listed}");
}

#[test]
fn an_actor_with_no_name_shows_as_before() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    let me = actor(7);
    s.claim(&a, &me, &[]);
    assert!(s.ok(&["list"]).contains(&format!("holder={me}  parse")));
    assert!(s
        .ok(&["log", &a])
        .ends_with(&format!("actor={me}  via=cli\n")));
    assert_eq!(
        s.json(&["show", &a])["holder_name"],
        serde_json::Value::Null
    );
    assert_eq!(s.ok(&["actor", "list"]), "");
}

#[test]
fn a_refused_call_keeps_no_name() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    s.claim(&a, &actor(1), &[]);
    s.refused(
        &["claim", &a, "--assignee", "name:latecomer"],
        4,
        "already claimed",
        "already_claimed",
    );
    assert_eq!(s.ok(&["actor", "list"]), "");
}

#[test]
fn actor_add_keeps_a_note_and_a_later_add_replaces_it() {
    let s = Store::new();
    let out = s.ok(&["actor", "add", "lead-ana", "--note", "the lead, pane 1"]);
    let id = s.ok(&["actor", "lead-ana"]).trim().to_string();
    assert_eq!(out, format!("{id}  name:lead-ana  the lead, pane 1\n"));
    s.ok(&["actor", "add", "name:lead-ana", "--note", "the lead"]);
    s.ok(&["actor", "add", "codex-1"]);
    assert_eq!(
        s.ok(&["actor", "list"]),
        format!("{id}  name:lead-ana  the lead\n{CODEX}  name:codex-1\n")
    );
    let j = s.json(&["actor", "list"]);
    assert_eq!(j[0]["note"], "the lead", "{j}");
    assert!(j[0]["added_at"].as_u64().is_some(), "{j}");
}

#[test]
fn bad_names_and_notes_are_refused_naming_what_was_wrong() {
    let s = Store::new();
    s.refused(
        &["actor", "add", "two words"],
        2,
        "1-64 characters",
        "invalid_input",
    );
    s.refused(
        &["actor", "add", &"x".repeat(65)],
        2,
        "1-64 characters",
        "invalid_input",
    );
    s.refused(
        &["actor", "add", "ok", "--note", &"n".repeat(5000)],
        2,
        "note",
        "invalid_input",
    );
    assert_eq!(s.ok(&["actor", "list"]), "");
}

#[test]
fn a_cancel_request_and_a_release_name_who_asked_and_who_acted() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    let g = s.claim(&a, "name:codex-1", &[]).to_string();
    s.ok(&[
        "cancel",
        &a,
        "--actor",
        "name:lead-ana",
        "--reason",
        "wrong approach",
    ]);
    let n = s.json(&["show", &a]);
    assert_eq!(n["cancel_requested"]["by_name"], "lead-ana", "{n}");
    assert!(s
        .ok(&["show", &a])
        .contains("by name:lead-ana: wrong approach"));
    s.ok(&["release", &a, "--actor", "name:codex-1", "--gen", &g]);
    let n = s.json(&["show", &a]);
    assert_eq!(n["last_holder_name"], "codex-1", "{n}");
}

#[test]
fn copy_carries_the_names() {
    let s = Store::new();
    s.ok(&["actor", "add", "lead-ana", "--note", "the lead"]);
    s.upsert("parse the manifest header", &[]);
    assert_eq!(listed_in_a_copy(&s), s.ok(&["actor", "list"]));
}

/// `actor list` of a copy of `s` (made with `copy`).
pub fn listed_in_a_copy(s: &Store) -> String {
    let to = s.scratch().join("copy");
    let dir = s.dir().to_string_lossy().into_owned();
    s.ok(&["copy", "--from", &dir, "--to", &to.to_string_lossy()]);
    let out = crate::common::command()
        .args(["--dir", &to.to_string_lossy(), "actor", "list"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_pane_shows_the_holders_name() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    s.claim(&a, "name:codex-1", &[]);
    let frame = s.ok(&["pane", "--dump", "--width", "120"]);
    // The forest's row of the node (the selected one): its holder column names it.
    let row = frame
        .lines()
        .find(|l| l.starts_with("│>"))
        .unwrap_or_default();
    let forest = row.split("││").next().unwrap_or_default();
    assert!(
        forest.contains(&a[..8]) && forest.contains(" codex-1 "),
        "{frame}"
    );
    assert!(!forest.contains(&CODEX[..8]), "{row}");
}

#[test]
fn an_actor_named_again_writes_nothing() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    s.claim(&a, "name:codex-1", &[]);
    let before = s.files();
    s.ok(&["show", &a]);
    s.ok(&["actor", "add", "codex-1"]);
    assert_eq!(
        s.files(),
        before,
        "a name kept already is not written again"
    );
}

#[test]
fn a_busy_assignee_is_named_in_the_refusal() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    let b = s.upsert("reject a bad header", &[]);
    s.claim(&a, "name:codex-1", &[]);
    let r = s.run(&["claim", &b, "--assignee", "name:codex-1"]);
    assert_eq!(r.code, Some(4), "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("actor {CODEX} (name:codex-1) already holds 1")),
        "{}",
        r.stderr
    );
    let body = s.run(&["--json", "claim", &b, "--assignee", "name:codex-1"]);
    let e = body.error_json();
    assert_eq!(
        (&e["code"], &e["actor"], &e["actor_name"]),
        (
            &serde_json::json!("assignee_busy"),
            &serde_json::json!(CODEX),
            &serde_json::json!("codex-1")
        )
    );
}

#[test]
fn every_write_records_the_command_lines_door() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    s.claim(&a, "name:codex-1", &[]);
    let log = s.json(&["log"]);
    let doors: Vec<_> = log.as_array().unwrap().iter().map(|e| &e["door"]).collect();
    assert_eq!(
        doors,
        [&serde_json::json!("cli"), &serde_json::json!("cli")]
    );
    assert!(s.ok(&["log"]).lines().all(|l| l.ends_with("  via=cli")));
}
