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
