//! Links through the real binary: hard links wait for `done`, soft links for any end, a hard
//! prerequisite that failed blocks, and links that would close a cycle are refused.

use crate::common::{self, actor, short, Store};
use serde_json::Value;

/// Claims `id` for a fresh actor and finishes it with `status`.
fn finish(s: &Store, id: &str, status: &str, who: u64) {
    let g = s.claim(id, &actor(who), &[]);
    s.ok(&["complete", id, "--status", status, "--gen", &g.to_string()]);
}

#[test]
fn a_hard_link_waits_for_done_and_a_soft_link_for_any_end() {
    for end in ["done", "failed", "cancelled"] {
        let s = Store::new();
        let p = s.upsert("prerequisite", &[]);
        let hard = s.upsert("waits hard", &[]);
        let soft = s.upsert("waits soft", &[]);
        assert_eq!(s.ok(&["link", &p, &hard]), "");
        assert_eq!(s.ok(&["link", "--soft", &p, &soft]), "");
        for id in [&hard, &soft] {
            let n = s.node(id);
            assert_eq!(n["display"], "todo", "{end}: {n}");
            assert!(n["why"].as_str().unwrap_or_default().contains(&p), "{n}");
        }
        assert_eq!(s.node(&hard)["deps"], serde_json::json!([p]));
        assert_eq!(s.node(&soft)["soft_deps"], serde_json::json!([p]));

        finish(&s, &p, end, 1);

        let soft_n = s.node(&soft);
        assert_eq!(soft_n["display"], "ready", "soft after {end}: {soft_n}");
        assert_eq!(soft_n["ready"], true);
        let hard_n = s.node(&hard);
        if end == "done" {
            assert_eq!(hard_n["display"], "ready", "{hard_n}");
        } else {
            assert_eq!(hard_n["display"], "blocked", "hard after {end}: {hard_n}");
            assert_eq!(hard_n["ready"], false);
            let why = hard_n["why"].as_str().unwrap_or_default();
            assert!(why.contains(&p), "show names the prerequisite: {why}");
            assert!(s.ok(&["show", &hard]).contains(&p));
            s.refused(
                &["claim", &hard, "--assignee", &actor(2)],
                4,
                "not ready",
                "not_ready",
            );
            assert_eq!(
                s.ok(&["list", "--status", "blocked"]),
                format!("{}  blocked  task  gen=1  waits hard\n", short(&hard))
            );
            // Reopening the prerequisite unblocks it (it waits again).
            s.ok(&["reopen", &p]);
            assert_eq!(s.node(&hard)["display"], "todo");
        }
    }
}

#[test]
fn cancelling_a_todo_prerequisite_blocks_hard_dependents() {
    let s = Store::new();
    let p = s.upsert("prerequisite", &[]);
    let c = s.upsert("dependent", &[]);
    s.ok(&["link", &p, &c]);
    assert_eq!(
        s.ok(&["complete", &p, "--status", "cancelled", "--gen", "1"]),
        format!("{}  cancelled\n", short(&p))
    );
    assert_eq!(s.node(&c)["display"], "blocked");
}

#[test]
fn links_that_close_a_cycle_are_refused() {
    let s = Store::new();
    let a = s.upsert("a", &[]);
    let b = s.upsert("b", &[]);
    let c = s.upsert("c", &[]);
    s.refused(&["link", &a, &a], 2, "cycle", "cycle");
    s.refused(&["link", "--soft", &a, &a], 2, "cycle", "cycle");
    s.ok(&["link", &a, &b]);
    s.ok(&["link", &b, &c]);
    s.refused(&["link", &c, &a], 2, "cycle", "cycle");
    s.refused(&["link", "--soft", &c, &a], 2, "cycle", "cycle");
    s.refused(&["link", &b, &a], 2, "cycle", "cycle");
    // Linking twice is a no-op that changes nothing.
    let files = s.files();
    assert_eq!(s.ok(&["link", &a, &b]), "");
    common::assert_files_eq(&files, &s.files(), "linking twice");
    // After unlinking, the former cycle edge is fine.
    s.ok(&["unlink", &b, &c]);
    s.ok(&["link", &c, &a]);
    assert!(s.ok(&["check"]).starts_with("ok"));
    let n = s.node(&a);
    assert_eq!(n["deps"], serde_json::json!([c]));
}

#[test]
fn a_claimed_node_cannot_gain_a_prerequisite() {
    let s = Store::new();
    let a = s.upsert("a", &[]);
    let b = s.upsert("b", &[]);
    s.claim(&b, &actor(1), &[]);
    s.refused(&["link", &a, &b], 4, "already claimed", "already_claimed");
}

#[test]
fn parent_is_hierarchy_only_never_a_dependency() {
    let s = Store::new();
    let a = s.upsert("epic", &[]);
    let b = s.upsert("story", &["--parent", &a]);
    let n = s.node(&b);
    assert_eq!(n["parent"], a.as_str());
    assert_eq!(n["deps"], serde_json::json!([]));
    assert_eq!(n["display"], "ready");
    // The same summary under another parent (or none) is another node.
    let c = s.upsert("story", &[]);
    assert_ne!(b, c);
    // The same fields give the same node.
    assert_eq!(s.upsert("story", &["--parent", &a]), b);
    assert_eq!(s.upsert("  story \n", &["--parent", &a]), b);
    assert_eq!(s.json(&["list"]).as_array().map(Vec::len), Some(3));
    assert_eq!(s.node(&b)["parent"], Value::String(a));
}
