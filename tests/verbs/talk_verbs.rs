//! `renew --progress`, `cancel`, `complete --output` and `complete-many` through the real
//! binary: what they print, in text and JSON, and what they refuse.

use crate::common::Store;
use serde_json::{json, Value};

const W1: &str = "name:w1";

fn claim(s: &Store, id: &str, who: &str) -> String {
    let out = s.ok(&["claim", id, "--assignee", who]);
    out.trim().trim_start_matches("gen=").to_string()
}

#[test]
fn a_checkpoint_and_a_cancel_request_through_renew() {
    let s = Store::new();
    let id = s.upsert("port the parser", &[]);
    let g = claim(&s, &id, W1);
    // A plain renew prints nothing; with a checkpoint too.
    let out = s.ok(&[
        "renew",
        &id,
        "--actor",
        W1,
        "--gen",
        &g,
        "--progress",
        "3 of 7 files",
    ]);
    assert_eq!(out, "");
    let n = s.node(&id);
    assert_eq!(n["progress"], "3 of 7 files");
    assert!(n["progress_at"].is_u64());
    let shown = s.ok(&["show", &id]);
    assert!(shown.contains("progress     3 of 7 files"), "{shown}");
    // A lead asks the holder to stop.
    let out = s.ok(&[
        "cancel",
        &id,
        "--reason",
        "wrong approach",
        "--actor",
        "name:lead",
    ]);
    assert_eq!(out, format!("{}...  cancel requested\n", &id[..8]));
    assert_eq!(
        s.node(&id)["generation"].to_string(),
        g,
        "a request moves no generation"
    );
    let out = s.ok(&["renew", &id, "--actor", W1, "--gen", &g]);
    assert!(
        out.starts_with(&format!("cancel requested  {}...", &id[..8])),
        "{out}"
    );
    assert!(out.contains("reason: wrong approach"), "{out}");
    assert!(out.contains("complete the node cancelled"), "{out}");
    let r = s.json(&["renew", &id, "--actor", W1, "--gen", &g]);
    assert_eq!(r["cancel_requested"]["reason"], "wrong approach", "{r}");
    let lead = s.ok(&["actor", "lead"]);
    assert_eq!(r["cancel_requested"]["by"], lead.trim(), "{r}");
    s.ok(&["complete", &id, "--status", "cancelled", "--gen", &g]);
    let n = s.node(&id);
    assert_eq!(
        (n["status"].as_str(), &n["cancel_requested"]),
        (Some("cancelled"), &Value::Null)
    );
    // Cancelling a finished node is refused (terminal, exit 4).
    s.run(&["cancel", &id]).refused(4, "terminal");
    let log = s.ok(&["log", &id]);
    assert!(
        log.contains("cancel_request") && log.contains("wrong approach"),
        "{log}"
    );
}

#[test]
fn cancel_of_a_todo_node_and_its_refusals() {
    let s = Store::new();
    let id = s.upsert("not needed", &[]);
    s.run(&["cancel", &id, "--gen", "5"])
        .refused(5, "stale generation");
    let long = "r".repeat(4097);
    s.run(&["cancel", &id, "--reason", &long])
        .refused(2, "reason");
    assert_eq!(s.node(&id)["status"], "todo", "refusals changed nothing");
    let r = s.json(&["cancel", &id, "--reason", "dropped from the plan"]);
    assert_eq!(
        r,
        json!({"id": id, "status": "cancelled", "requested": false})
    );
    s.run(&["cancel", "00000000"]).refused(3, "not found");
}

#[test]
fn outputs_flow_to_dependents_in_claim_replies() {
    let s = Store::new();
    let fetch = s.upsert("fetch", &[]);
    let parse = s.upsert("parse", &[]);
    s.ok(&["link", &fetch, &parse]);
    let g = claim(&s, &fetch, W1);
    // Not JSON, and too large: refused, nothing changed.
    s.run(&[
        "complete", &fetch, "--status", "done", "--gen", &g, "--output", "{rows: 3",
    ])
    .refused(2, "output is not valid JSON");
    let huge = format!("\"{}\"", "x".repeat(65536));
    s.run(&[
        "complete", &fetch, "--status", "done", "--gen", &g, "--output", &huge,
    ])
    .refused(2, "output is 65538 bytes");
    assert_eq!(s.node(&fetch)["status"], "claimed");
    let out = r#"{"rows": 3, "files": ["a.rs"]}"#;
    s.ok(&[
        "complete", &fetch, "--status", "done", "--gen", &g, "--output", out,
    ]);
    assert_eq!(
        s.node(&fetch)["output"],
        json!({"rows": 3, "files": ["a.rs"]})
    );
    let log = s.ok(&["log", &fetch]);
    assert!(
        log.contains(r#"output={"rows":3,"files":["a.rs"]}"#),
        "{log}"
    );
    let c = s.json(&["claim-next", "--assignee", "name:w2"]);
    assert_eq!(c["id"], parse.as_str());
    assert_eq!(
        c["inputs"],
        json!({ &fetch: {"rows": 3, "files": ["a.rs"]} })
    );
    assert_eq!(c["progress"], Value::Null);
    let text = s.ok(&["show", &fetch]);
    assert!(
        text.contains(r#"output       {"rows":3,"files":["a.rs"]}"#),
        "{text}"
    );
}

#[test]
fn complete_many_from_a_file_or_stdin_all_or_nothing() {
    let s = Store::new();
    s.ok(&["config", "max_held", "0"]);
    let ids: Vec<String> = (0..3).map(|i| s.upsert(&format!("n{i}"), &[])).collect();
    let gens: Vec<String> = ids.iter().map(|id| claim(&s, id, W1)).collect();
    let stale = json!([
        {"node": &ids[0], "status": "done", "gen": gens[0].parse::<u64>().unwrap()},
        {"node": &ids[1], "status": "failed", "gen": 99, "note": "timeout"},
    ]);
    let file = s.scratch().join("stale.json");
    std::fs::write(&file, stale.to_string()).unwrap();
    s.run(&["complete-many", file.to_str().unwrap()])
        .refused(5, "stale generation");
    assert!(ids.iter().all(|id| s.node(id)["status"] == "claimed"));
    let good: Vec<Value> = ids
        .iter()
        .zip(&gens)
        .map(|(id, g)| json!({"node": &id[..8], "status": "done", "gen": g.parse::<u64>().unwrap(), "output": {"id": id}}))
        .collect();
    let r = s.run_full(
        &["complete-many", "-"],
        &[],
        Some(json!({ "completions": good }).to_string().into_bytes()),
        std::time::Duration::from_secs(30),
    );
    let want: String = ids
        .iter()
        .map(|id| format!("{}...  done\n", &id[..8]))
        .collect();
    assert_eq!(r.ok(), want);
    assert_eq!(s.node(&ids[2])["output"], json!({"id": &ids[2]}));
    let bad = s.scratch().join("bad.json");
    std::fs::write(&bad, b"[{\"node\": 1}]").unwrap();
    s.run(&["complete-many", bad.to_str().unwrap()])
        .refused(2, "complete_many");
}

#[test]
fn claim_next_count_claims_a_batch_one_line_each() {
    let s = Store::new();
    s.ok(&["config", "max_held", "0"]);
    let ids: Vec<String> = (1..=3)
        .map(|i| s.upsert(&format!("page {i}"), &["--estimate", &(10 - i).to_string()]))
        .collect();
    s.run(&["claim-next", "--assignee", W1, "--count", "0"])
        .refused(2, "count must be 1 to 1000");
    let out = s.ok(&["claim-next", "--assignee", W1, "--count", "2"]);
    assert_eq!(out, format!("{}  gen=2\n{}  gen=2\n", ids[0], ids[1]));
    let r = s.json(&["claim-next", "--assignee", "name:w2", "--count", "5"]);
    assert_eq!(r.as_array().map(Vec::len), Some(1), "{r}");
    assert_eq!(r[0]["id"], ids[2].as_str());
    assert!(r[0]["inputs"].is_object(), "{r}");
    // Nothing left: exit 1, nothing printed; in JSON an empty list.
    let none = s.run(&["claim-next", "--assignee", W1, "--count", "2"]);
    assert_eq!((none.code, none.stdout.as_str()), (Some(1), ""));
    let none = s.run(&["--json", "claim-next", "--assignee", W1, "--count", "2"]);
    assert_eq!((none.code, none.stdout.trim()), (Some(1), "[]"));
}
