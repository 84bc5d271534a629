//! `archive [ID...] [--older-than DUR]` and `unarchive ID`: only finished nodes move out of
//! the live state; listing, show and log of archived nodes; nodes waiting on archived ones;
//! the age filter; unarchive; and archived nodes through a compaction.

use crate::common::{self, actor, short, Store};
use serde_json::json;

/// A store with a done, a failed, a cancelled and a todo node.
struct Four {
    s: Store,
    done: String,
    failed: String,
    cancelled: String,
    todo: String,
}

fn four() -> Four {
    let s = Store::new();
    let done = s.upsert("finished well", &[]);
    let failed = s.upsert("finished badly", &[]);
    let cancelled = s.upsert("called off", &[]);
    let todo = s.upsert("still to do", &[]);
    s.finish(&done, "done");
    s.finish(&failed, "failed");
    let g = s.node(&cancelled)["generation"].to_string();
    s.ok(&["complete", &cancelled, "--status", "cancelled", "--gen", &g]);
    Four {
        s,
        done,
        failed,
        cancelled,
        todo,
    }
}

fn listed(out: &str) -> Vec<String> {
    out.lines()
        .map(|l| l.split("...").next().unwrap_or_default().to_string())
        .collect()
}

fn eight(id: &str) -> String {
    id[..8].to_string()
}

#[test]
fn a_todo_or_claimed_node_is_refused_and_nothing_changes() {
    let f = four();
    let s = &f.s;
    let msg = s.refused_text(&["archive", &f.todo], 2, &f.todo, "invalid_input");
    assert!(msg.contains("todo"), "the message says the status: {msg}");
    // Named together with a finished node: refused whole, the finished node stays live.
    s.refused(&["archive", &f.done, &f.todo], 2, &f.todo, "invalid_input");
    assert_eq!(s.node(&f.done)["archived"], false);
    let claimed = s.upsert("being worked on", &[]);
    s.claim(&claimed, &actor(3), &[]);
    let msg = s.refused_text(&["archive", &claimed], 2, &claimed, "invalid_input");
    assert!(
        msg.contains("claimed"),
        "the message says the status: {msg}"
    );
    assert_eq!(s.node(&claimed)["status"], "claimed");
    // An unknown node is not found.
    s.refused(
        &["archive", "0123456789abcdef0123456789abcdef"],
        3,
        "not found",
        "not_found",
    );
}

#[test]
fn archived_nodes_leave_list_but_show_log_and_list_archived_find_them() {
    let f = four();
    let s = &f.s;
    assert_eq!(s.ok(&["archive", &f.done[..8]]), "archived 1\n");
    let live = s.ok(&["list"]);
    assert_eq!(listed(&live), vec![eight(&f.todo)]);
    let terminal = s.ok(&["list", "--terminal"]);
    assert_eq!(
        listed(&terminal),
        vec![eight(&f.failed), eight(&f.cancelled), eight(&f.todo)],
        "list --terminal leaves the archived node out: {terminal}"
    );
    let archived = s.ok(&["list", "--archived"]);
    assert_eq!(
        archived,
        format!("{}  done  task  gen=2  finished well\n", short(&f.done))
    );
    let all = s.ok(&["list", "--all"]);
    let mut got = listed(&all);
    got.sort();
    let mut want = vec![
        eight(&f.done),
        eight(&f.failed),
        eight(&f.cancelled),
        eight(&f.todo),
    ];
    want.sort();
    assert_eq!(got, want, "list --all shows everything: {all}");
    let j = s.json(&["list", "--archived"]);
    assert_eq!(j.as_array().map(|a| a.len()), Some(1));
    assert_eq!(j[0]["archived"], true);

    let shown = s.node(&f.done);
    assert_eq!(shown["archived"], true);
    assert_eq!(shown["status"], "done");
    assert_eq!(shown["generation"], 2);
    assert_eq!(shown["summary"], "finished well");
    let text = s.ok(&["show", &f.done]);
    assert!(
        text.lines()
            .any(|l| l.starts_with("archived") && l.trim_end().ends_with("true")),
        "show prints archived true: {text}"
    );
    let log = s.ok(&["log", &f.done]);
    let verbs: Vec<&str> = log
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(verbs, ["create", "claim", "complete", "archive"], "{log}");

    // Two more at once; the count says how many moved.
    assert_eq!(s.ok(&["archive", &f.failed, &f.cancelled]), "archived 2\n");
    assert_eq!(listed(&s.ok(&["list", "--terminal"])), vec![eight(&f.todo)]);
    assert_eq!(listed(&s.ok(&["list", "--archived"])).len(), 3);
    let check = s.run(&["check"]);
    assert_eq!(check.code, Some(0), "{}{}", check.stdout, check.stderr);
}

#[test]
fn a_node_waiting_on_an_archived_done_node_is_ready_and_claimable() {
    let s = Store::new();
    let p = s.upsert("prerequisite", &[]);
    let c = s.upsert("waits on it", &[]);
    s.ok(&["link", &p, &c]);
    assert_eq!(s.display(&c), "todo");
    s.finish(&p, "done");
    assert_eq!(s.ok(&["archive", &p]), "archived 1\n");
    let node = s.node(&c);
    assert_eq!(node["display"], "ready");
    assert_eq!(node["ready"], true);
    assert_eq!(s.ok(&["next"]).trim(), c);
    assert_eq!(s.claim(&c, &actor(5), &[]), 2);
}

#[test]
fn a_node_waiting_on_an_archived_failed_node_is_blocked() {
    let s = Store::new();
    let p = s.upsert("will fail", &[]);
    let hard = s.upsert("needs it done", &[]);
    let soft = s.upsert("needs it over", &[]);
    s.ok(&["link", &p, &hard]);
    s.ok(&["link", "--soft", &p, &soft]);
    s.finish(&p, "failed");
    assert_eq!(s.display(&hard), "blocked");
    assert_eq!(s.ok(&["archive", &p]), "archived 1\n");
    let node = s.node(&hard);
    assert_eq!(node["display"], "blocked", "{node}");
    assert_eq!(node["ready"], false);
    assert!(
        node["why"].as_str().unwrap_or_default().contains(&p),
        "why names the failed prerequisite: {node}"
    );
    s.refused(
        &["claim", &hard, "--assignee", &actor(5)],
        4,
        "not ready",
        "not_ready",
    );
    // A soft link is satisfied by any end, archived or not.
    assert_eq!(s.display(&soft), "ready");
    assert_eq!(s.ok(&["next"]).trim(), soft);
}

#[test]
fn older_than_picks_by_age_and_no_argument_takes_every_finished_node() {
    let f = four();
    let s = &f.s;
    // Something finished in another workspace is never touched from this one.
    let elsewhere = s.upsert_ws("other", "finished elsewhere", &[]);
    let g = s.claim(&elsewhere, &actor(9), &[]).to_string();
    s.ok(&["complete", &elsewhere, "--status", "done", "--gen", &g]);

    assert_eq!(s.ok(&["archive", "--older-than", "1h"]), "archived 0\n");
    assert_eq!(listed(&s.ok(&["list", "--archived"])), Vec::<String>::new());
    assert_eq!(s.ok(&["archive", "--older-than", "0"]), "archived 3\n");
    assert_eq!(listed(&s.ok(&["list"])), vec![eight(&f.todo)]);
    assert_eq!(listed(&s.ok(&["list", "--terminal"])), vec![eight(&f.todo)]);
    assert_eq!(s.node(&elsewhere)["archived"], false);
    assert_eq!(
        listed(&s.ok_ws("other", &["list", "--terminal"])),
        vec![eight(&elsewhere)]
    );
    // Without arguments: every finished node of the workspace.
    let more = s.upsert("finished later", &[]);
    s.finish(&more, "done");
    assert_eq!(s.ok(&["archive"]), "archived 1\n");
    assert_eq!(s.node(&more)["archived"], true);
    assert_eq!(s.ok(&["archive"]), "archived 0\n");
    // A bad duration is refused.
    s.refused(
        &["archive", "--older-than", "soon"],
        2,
        "duration",
        "invalid_input",
    );
}

#[test]
fn unarchive_brings_a_node_back_unchanged() {
    let f = four();
    let s = &f.s;
    let before = s.node(&f.done);
    s.ok(&["archive", &f.done]);
    assert_eq!(
        s.ok(&["unarchive", &f.done[..10]]),
        format!("{}  done\n", short(&f.done))
    );
    let after = s.node(&f.done);
    assert_eq!(after["archived"], false);
    for k in [
        "generation",
        "status",
        "attempts",
        "summary",
        "completed_by",
        "created_at",
    ] {
        assert_eq!(after[k], before[k], "{k} changed through archive and back");
    }
    assert!(listed(&s.ok(&["list", "--terminal"])).contains(&eight(&f.done)));
    assert_eq!(s.ok(&["list", "--archived"]), "");
    let log = s.ok(&["log", &f.done]);
    assert!(
        log.lines().last().unwrap_or_default().contains("unarchive"),
        "{log}"
    );
    // It can be archived again.
    assert_eq!(s.ok(&["archive", &f.done]), "archived 1\n");
    assert_eq!(
        s.ok(&["unarchive", &f.done]),
        format!("{}  done\n", short(&f.done))
    );
    let check = s.run(&["check"]);
    assert_eq!(check.code, Some(0), "{}{}", check.stdout, check.stderr);
}

#[test]
fn archived_nodes_survive_a_compaction() {
    let s = Store::new();
    let p = s.upsert("archived before the flood", &[]);
    let failed = s.upsert("failed before the flood", &[]);
    let c = s.upsert("waits on the archived node", &[]);
    let b = s.upsert("blocked by the archived failure", &[]);
    s.ok(&["link", &p, &c]);
    s.ok(&["link", &failed, &b]);
    let g = s.finish(&p, "done");
    s.finish(&failed, "failed");
    assert_eq!(s.ok(&["archive", &p, &failed]), "archived 2\n");
    // Enough writes to push the journal past 1 MiB: 400 nodes with ~3 KiB summaries.
    let pad = "x".repeat(3000);
    for i in 0..400 {
        s.upsert(&format!("filler {i} {pad}"), &[]);
    }
    let files = s.files();
    assert!(
        files.contains_key("history.jsonl") && files.contains_key("archive.jsonl"),
        "the writes did not compact the journal: {:?}",
        files.keys().collect::<Vec<_>>()
    );
    let shown = s.node(&p);
    assert_eq!(shown["archived"], true);
    assert_eq!(shown["status"], "done");
    assert_eq!(shown["generation"], g);
    assert_eq!(s.node(&failed)["archived"], true);
    assert_eq!(
        listed(&s.ok(&["list", "--archived"])),
        vec![eight(&p), eight(&failed)]
    );
    assert!(!listed(&s.ok(&["list", "--all"])).is_empty());
    assert!(!s.ok(&["list"]).contains(&eight(&p)));
    assert_eq!(s.display(&c), "ready");
    assert_eq!(s.display(&b), "blocked");
    let check = s.run(&["check"]);
    assert_eq!(check.code, Some(0), "{}{}", check.stdout, check.stderr);
    assert!(check.stdout.starts_with("ok"), "{}", check.stdout);
    let log = s.ok(&["log", &p]);
    assert!(log.contains("archive"), "{log}");
    assert_eq!(s.ok(&["unarchive", &p]), format!("{}  done\n", short(&p)));
    assert_eq!(s.node(&p)["generation"], g);
    assert_eq!(s.node(&p)["archived"], false);
    let check = s.run(&["check"]);
    assert_eq!(check.code, Some(0), "{}{}", check.stdout, check.stderr);
}

#[test]
fn upserting_an_archived_nodes_fields_returns_its_id_and_changes_nothing() {
    let s = Store::new();
    let n = s.upsert("archived soon", &[]);
    s.finish(&n, "done");
    s.ok(&["archive", &n]);
    let before = s.files();
    assert_eq!(s.upsert("archived soon", &["--priority", "5"]), n);
    common::assert_files_eq(&before, &s.files(), "upsert of an archived node");
    let shown = s.node(&n);
    assert_eq!(shown["archived"], true);
    assert_eq!(shown["priority"], 0);
    assert_eq!(s.ok(&["list"]), "");
}

/// A store written by an older claimdag keeps only the status of an archived node in its
/// snapshot: it is read, the node is unarchived exactly as it was archived, and `check`
/// agrees; the next compaction writes the newer format.
#[test]
fn an_older_snapshot_is_migrated_and_unarchive_restores_the_archived_node() {
    let s = Store::new();
    let a = s.upsert("finished long ago", &[]);
    let g = s.finish(&a, "done");
    s.ok(&["archive", &a]);
    s.fold_journal();
    let snap = s.snapshot();
    assert_eq!(snap["format"], 1);
    assert_eq!(snap["archived"][&a], json!({"status": "done"}));
    assert_eq!(s.run(&["check"]).code, Some(0));
    assert_eq!(s.ok(&["unarchive", &a]), format!("{}  done\n", short(&a)));
    let n = s.node(&a);
    assert_eq!(n["generation"], g);
    assert_eq!(n["archived"], false);
    assert_eq!(s.run(&["check"]).code, Some(0));
}

/// A node that waits on another may be archived, and the other then made to wait on it
/// (links do not look inside the archive). Bringing the first back would close a cycle: it
/// is refused, and the store stays as it was.
#[test]
fn unarchive_that_would_close_a_cycle_is_refused() {
    let s = Store::new();
    let a = s.upsert("first", &[]);
    let b = s.upsert("second", &[]);
    s.ok(&["link", &a, &b]);
    s.ok(&["complete", &b, "--status", "cancelled", "--gen", "1"]);
    s.ok(&["archive", &b]);
    s.ok(&["link", &b, &a]);
    s.refused(&["unarchive", &b], 2, "cycle", "cycle");
    assert_eq!(s.run(&["check"]).code, Some(0));
}
