//! What a node's text fields can do to a terminal. Labels, resources and refs refuse control
//! characters (`invalid_input` naming the field), so a newline cannot print as a field of its
//! own; every text form (`list`, `show`, `log`, `ready`, `graph`) writes the control
//! characters of any text (a summary, a note, a field stored before the rule) and the Unicode
//! bidi override and isolate characters as escapes. JSON keeps the text as it is.

use crate::common::{actor, Store};
use serde_json::json;

/// Escape sequences that retitle a terminal, reorder a line, ring its bell.
const OSC_TITLE: &str = "\u{1b}]2;PWNED\u{7}";
const RLO: &str = "\u{202e}";

/// True when `text` holds a character a terminal acts on or reorders a line by (a line end
/// aside).
fn unsafe_chars(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
        })
        .collect()
}

fn assert_safe(what: &str, text: &str) {
    let bad = unsafe_chars(text);
    assert!(bad.is_empty(), "{what} prints {bad:?} raw:\n{text}");
}

#[test]
fn labels_resources_and_refs_refuse_control_characters_naming_the_field() {
    let s = Store::new();
    let a = s.upsert("a node", &["--label", "x"]);
    for (flag, field) in [
        ("--label", "label"),
        ("--resource", "resource"),
        ("--ref", "ref"),
    ] {
        for bad in [
            "x\nstatus       done",
            OSC_TITLE,
            "tab\there",
            "del\u{7f}",
            "c1\u{85}",
        ] {
            let e = s.refused(
                &["upsert", "--summary", "a node", flag, bad],
                2,
                field,
                "invalid_input",
            );
            let msg = e["message"].as_str().unwrap();
            assert!(msg.contains("control character"), "{msg}");
            assert_safe("the error message", msg);
            // A new node is refused the same.
            s.refused(
                &["upsert", "--summary", "a new node", flag, bad],
                2,
                field,
                "invalid_input",
            );
        }
    }
    // A plan is refused whole, naming the field.
    let plan = json!({"nodes": [
        {"key": "ok", "summary": "fine"},
        {"key": "bad", "summary": "bad label", "labels": ["x\nstatus       done"]},
    ]});
    let r = s.import(&plan);
    r.refused(2, "label");
    assert_eq!(s.all().len(), 1, "a refused plan wrote nothing");
    // Summaries and notes keep their line ends (printed as escapes): free text.
    let b = s.upsert("two\nlines", &[]);
    assert_eq!(s.node(&b)["summary"], "two\nlines");
    assert_eq!(s.node(&a)["labels"], json!(["x"]));
    // Bidi characters are not control characters: stored, printed escaped (below).
    s.upsert("a node", &["--label", &format!("{RLO}gnp.exe")]);
}

#[test]
fn show_prints_one_line_a_field_whatever_a_stored_field_holds() {
    let s = Store::new();
    let a = s.upsert("a node", &[]);
    // Fields written before the rule (or by hand) still print one line a field.
    s.fold_journal();
    s.edit_snapshot_node(&a, |n| {
        n.insert("labels".into(), json!(["x\nstatus       done"]));
        n.insert("resources".into(), json!([format!("src/{OSC_TITLE}")]));
        n.insert("ref".into(), json!(OSC_TITLE));
    });
    let out = s.ok(&["show", &a]);
    assert_safe("show", &out);
    let status_lines = out.lines().filter(|l| l.starts_with("status")).count();
    assert_eq!(status_lines, 1, "{out}");
    assert!(
        out.contains("labels       x\\nstatus       done\n"),
        "{out}"
    );
    assert!(
        out.contains("ref          \\u{1b}]2;PWNED\\u{7}\n"),
        "{out}"
    );
    // JSON is as stored (JSON escapes it).
    let j = s.node(&a);
    assert_eq!(j["ref"], OSC_TITLE);
    assert_eq!(j["labels"][0], "x\nstatus       done");
}

#[test]
fn every_text_form_escapes_control_and_bidi_characters() {
    let s = Store::new();
    let summary = format!("retitle {OSC_TITLE} and {RLO}reverse\u{2066}isolate\u{2069}");
    let a = s.upsert(
        &summary,
        &[
            "--label",
            &format!("{RLO}label"),
            "--ref",
            &format!("JIRA-1{RLO}"),
            "--resource",
            &format!("src/{RLO}x"),
        ],
    );
    let b = s.upsert("waits on the first", &[]);
    s.ok(&["link", &a, &b]);
    let shown = s.ok(&["show", &a]);
    for (what, out) in [
        ("list", s.ok(&["list"])),
        ("show", shown.clone()),
        ("ready", s.ok(&["ready"])),
        ("graph", s.ok(&["graph"])),
        (
            "graph --format mermaid",
            s.ok(&["graph", "--format", "mermaid"]),
        ),
    ] {
        assert_safe(what, &out);
        // (dot writes each backslash of a label twice)
        assert!(out.contains("u{1b}]2;PWNED"), "{what}:\n{out}");
        assert!(out.contains("u{202e}reverse"), "{what}:\n{out}");
    }
    for field in ["\\u{202e}label", "JIRA-1\\u{202e}", "src/\\u{202e}x"] {
        assert!(shown.contains(field), "show lacks {field}:\n{shown}");
    }
    // The history's details (a note of a completion is not among them, but its status is).
    let g = s.claim(&a, &actor(1), &[]);
    s.ok(&[
        "complete",
        &a,
        "--status",
        "done",
        "--gen",
        &g.to_string(),
        "--note",
        &format!("done {OSC_TITLE}"),
    ]);
    assert_safe("log", &s.ok(&["log"]));
    let done = s.ok(&["show", &a]);
    assert_safe("show of the note", &done);
    assert!(
        done.contains("note         done \\u{1b}]2;PWNED\\u{7}"),
        "{done}"
    );
    // JSON keeps the text as it is.
    let j = s.node(&a);
    assert_eq!(j["summary"], summary.as_str());
    assert_eq!(j["labels"][0], format!("{RLO}label"));
}
