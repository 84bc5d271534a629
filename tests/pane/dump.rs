//! `claimdag pane --dump`: one frame as text, for scripts.

use crate::common::Store;

#[test]
fn dump_prints_one_frame_with_every_node_and_the_selected_details() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &["--estimate", "3"]);
    let b = s.upsert("reject a manifest with no header", &[]);
    s.ok(&["link", &a, &b]);
    s.claim(&a, "name:lead", &["--ttl", "10m"]);
    let out = s.ok(&[
        "pane",
        "--dump",
        "--actor",
        "name:lead",
        "--select",
        &b[..8],
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("claimdag pane"), "{out}");
    assert!(
        lines.iter().all(|l| l.chars().count() <= 100),
        "at most 100 columns:\n{out}"
    );
    let row_a = lines
        .iter()
        .find(|l| l.contains(&a[..8]) && l.contains(" g2"))
        .unwrap();
    assert!(
        row_a.contains("claimed") && row_a.contains(" me ") && row_a.contains('*'),
        "{row_a}"
    );
    let row_b = lines
        .iter()
        .find(|l| l.contains(&b[..8]) && l.contains(" g1"))
        .unwrap();
    assert!(row_b.starts_with("│>"), "selected: {row_b}");
    assert!(out.contains(&format!("<- {}:", &a[..8])), "{out}");
    assert!(
        out.contains("prerequisites:") && out.contains("history:"),
        "{out}"
    );
    let wide = s.ok(&["pane", "--dump", "--width", "150"]);
    assert!(wide.lines().any(|l| l.chars().count() > 120), "{wide}");
    // Bad input is refused like everywhere else.
    let r = s.run(&["pane", "--dump", "--select", "zz"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    let r = s.run(&["pane", "--dump", "--role", "Bad Role"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    // Without a terminal and without --dump it says what to do.
    let r = s.run(&["pane"]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("--dump"), "{}", r.stderr);
}

/// The node rows of a dump: lines of the forest box holding a generation column.
fn node_rows(dump: &str) -> usize {
    dump.lines()
        .filter(|l| l.starts_with('│') && l.contains("  g1 "))
        .count()
}

#[test]
fn dump_prints_every_node_of_a_large_forest_in_both_layouts() {
    let s = Store::new();
    let n = 66_000;
    let nodes: Vec<serde_json::Value> = (0..n)
        .map(|i| serde_json::json!({"key": format!("k{i}"), "summary": format!("node {i}")}))
        .collect();
    s.import(&serde_json::json!({ "nodes": nodes })).ok();
    for width in ["100", "150"] {
        let out = s.ok(&["pane", "--dump", "--width", width]);
        assert_eq!(node_rows(&out), n, "width {width}: every node has its row");
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("claimdag pane"), "{}", lines[0]);
        // The counts under the store line wrap at the width: the forest's box follows them.
        let title = lines.iter().find(|l| l.starts_with('┌')).unwrap();
        assert!(
            title.contains(&format!("nodes {n}/{n}")),
            "the forest's title: {title}"
        );
        // Every row once, in order; then the details and the footer.
        let summaries: Vec<&str> = lines
            .iter()
            .filter(|l| l.contains("  g1 "))
            .filter_map(|l| l.split("  node ").nth(1))
            .map(|t| t.split_whitespace().next().unwrap_or(""))
            .collect();
        let want: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        assert_eq!(summaries, want, "width {width}");
        assert!(out.contains("summary      node 0"), "the details");
        assert!(lines.last().unwrap().starts_with("? help"), "the footer");
        assert_eq!(
            lines.iter().filter(|l| l.starts_with('┌')).count(),
            if width == "100" { 2 } else { 1 },
            "one frame, not pieces of several"
        );
    }
}

#[test]
fn dump_details_print_one_line_a_field_and_escape_control_and_bidi_characters() {
    let s = Store::new();
    let a = s.upsert(
        "retitle \u{1b}]2;PWNED\u{7} and \u{202e}reverse",
        &["--label", "\u{202e}label", "--ref", "JIRA-1\u{2066}"],
    );
    // A label with a line end written before the rule (or by hand).
    s.fold_journal();
    s.edit_snapshot_node(&a, |n| {
        n.insert(
            "labels".into(),
            serde_json::json!(["x\nstatus       done", "\u{202e}label"]),
        );
    });
    let out = s.ok(&["pane", "--dump", "--select", &a[..8]]);
    let bad: Vec<char> = out
        .chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
        })
        .collect();
    assert!(bad.is_empty(), "the pane prints {bad:?} raw:\n{out}");
    let status = out.lines().filter(|l| l.starts_with("│status")).count();
    assert_eq!(status, 1, "one status line:\n{out}");
    assert!(out.contains("x\\nstatus       done"), "{out}");
    assert!(out.contains("\\u{202e}reverse"), "{out}");
    assert!(out.contains("JIRA-1\\u{2066}"), "{out}");
}

#[test]
fn dump_shows_a_scheduled_node_with_its_word_and_time_till_ready() {
    let s = Store::new();
    let a = s.upsert("after the freeze", &["--not-before", "+2h"]);
    let out = s.ok(&["pane", "--dump", "--select", &a[..8]]);
    let row = out
        .lines()
        .find(|l| l.contains(&a[..8]) && l.contains(" g1"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        row.contains("scheduled") && (row.contains("2h00m") || row.contains("1h59m")),
        "{row}"
    );
    assert!(out.contains("scheduled 1"), "the header counts it: {out}");
    assert!(out.contains("ready in     "), "the details say when: {out}");
    assert!(out.contains("scheduled: not before"), "and why: {out}");
}

#[test]
fn dump_shows_a_checkpoint_and_a_cancel_request() {
    let s = Store::new();
    let a = s.upsert("fetch the pages", &[]);
    let g = s.claim(&a, "name:w", &[]).to_string();
    s.ok(&[
        "renew",
        &a,
        "--actor",
        "name:w",
        "--gen",
        &g,
        "--progress",
        "3 of 10 pages",
    ]);
    s.ok(&[
        "cancel",
        &a,
        "--reason",
        "the plan changed",
        "--actor",
        "name:lead",
    ]);
    let out = s.ok(&["pane", "--dump", "--select", &a[..8]]);
    let row = out
        .lines()
        .find(|l| l.contains(&a[..8]) && l.contains(" g2"))
        .unwrap();
    assert!(
        row.contains("[cancel?] fetch the pages  ~ 3 of 10 pages"),
        "{row}"
    );
    assert!(
        out.contains("progress:") && out.contains("│  3 of 10 pages"),
        "{out}"
    );
    assert!(
        out.contains("cancel:") && out.contains("the plan changed"),
        "{out}"
    );
}
