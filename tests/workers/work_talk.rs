//! `claimdag work` and the conversation of a node: the command reads its inputs from
//! `$CLAIMDAG_INPUTS`, leaves checkpoints in `$CLAIMDAG_PROGRESS_FILE` and its result in
//! `$CLAIMDAG_OUTPUT_FILE`, and is stopped when another process asks for a cancel. Real
//! child processes and signals.

use crate::common::Store;
use crate::work::{alive, events, finish, gone, read_pid, start, wait_for, worker};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Waits (at most 20 s) until `show`'s field `key` of `id` is `want`.
fn wait_field(s: &Store, id: &str, key: &str, want: &Value) {
    let t = Instant::now();
    loop {
        let n = s.node(id);
        if &n[key] == want {
            return;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{key} never became {want}: {n}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn read_json(p: std::path::PathBuf) -> Value {
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}: {text}", p.display()))
}

#[test]
fn the_inputs_file_holds_the_outputs_and_the_output_file_becomes_one() {
    let s = Store::new();
    let fetch = s.upsert("fetch", &[]);
    let parse = s.upsert("parse", &[]);
    s.ok(&["link", &fetch, &parse]);
    let script = r#"cp "$CLAIMDAG_INPUTS" "$W/inputs-$CLAIMDAG_SUMMARY.json"
        d=$(dirname "$CLAIMDAG_INPUTS")
        echo "$d" > "$W/dir-$CLAIMDAG_SUMMARY"
        stat -c %a "$d" > "$W/mode-$CLAIMDAG_SUMMARY"
        printf '{"from": "%s",\n "rows": [1, 2]}\n' "$CLAIMDAG_SUMMARY" > "$CLAIMDAG_OUTPUT_FILE""#;
    let (code, _, err) = finish(start(worker(&s, "w", &["--no-wait"], script)));
    assert_eq!(code, Some(0), "{err}");
    let w = s.scratch();
    assert_eq!(read_json(w.join("inputs-fetch.json")), json!({}));
    assert_eq!(
        read_json(w.join("inputs-parse.json")),
        json!({ fetch.clone(): {"from": "fetch", "rows": [1, 2]} })
    );
    assert_eq!(
        s.node(&fetch)["output"],
        json!({"from": "fetch", "rows": [1, 2]})
    );
    assert_eq!(
        s.node(&parse)["output"],
        json!({"from": "parse", "rows": [1, 2]})
    );
    for name in ["fetch", "parse"] {
        let mode = std::fs::read_to_string(w.join(format!("mode-{name}"))).unwrap();
        assert_eq!(mode.trim(), "700", "a directory only this user may enter");
        let dir = std::fs::read_to_string(w.join(format!("dir-{name}"))).unwrap();
        assert!(
            !std::path::Path::new(dir.trim()).exists(),
            "{} is removed once the node is finished",
            dir.trim()
        );
    }
    let done = events(&s, &fetch).pop().unwrap();
    assert_eq!(done["verb"], "complete");
}

#[test]
fn what_the_command_writes_to_the_progress_file_reaches_the_store() {
    let s = Store::new();
    let a = s.upsert("a long job with checkpoints", &[]);
    let script = r#"echo "3 of 10 pages" > "$CLAIMDAG_PROGRESS_FILE"
        while [ ! -e "$W/go" ]; do sleep 0.02; done
        echo "10 of 10 pages" > "$CLAIMDAG_PROGRESS_FILE""#;
    let w = start(worker(&s, "w", &["--ttl", "1s", "--no-wait"], script));
    wait_field(&s, &a, "progress", &json!("3 of 10 pages"));
    assert_eq!(s.node(&a)["status"], "claimed");
    assert!(s.node(&a)["progress_at"].is_u64());
    std::fs::write(s.scratch().join("go"), "").unwrap();
    let (code, _, err) = finish(w);
    assert_eq!(code, Some(0), "{err}");
    let n = s.node(&a);
    assert_eq!(
        (n["status"].as_str(), n["progress"].as_str()),
        (Some("done"), Some("10 of 10 pages")),
        "the last checkpoint is sent before the node is finished: {n}"
    );
}

#[test]
fn a_progress_file_past_64_kib_is_cut_and_a_release_hands_it_on() {
    let s = Store::new();
    s.ok(&["config", "max_attempts", "2"]);
    let a = s.upsert("writes a huge checkpoint, then fails", &[]);
    let script = r#"head -c 70000 /dev/zero | tr '\0' x > "$CLAIMDAG_PROGRESS_FILE"; exit 3"#;
    let opts = ["--no-wait", "--max", "1", "--on-failure", "release"];
    let (code, _, err) = finish(start(worker(&s, "w", &opts, script)));
    assert_eq!(code, Some(8), "{err}");
    let got = s.json(&["claim-next", "--assignee", "name:next"]);
    assert_eq!(got["id"], a.as_str());
    let progress = got["progress"]
        .as_str()
        .expect("the checkpoint is handed on");
    assert_eq!(progress.len(), 65536);
    assert!(progress.bytes().all(|b| b == b'x'));
}

#[test]
fn an_output_file_that_is_not_json_completes_the_node_failed() {
    let s = Store::new();
    let a = s.upsert("writes a broken output", &[]);
    let script = r#"echo '{"rows": ' > "$CLAIMDAG_OUTPUT_FILE""#;
    let (code, _, err) = finish(start(worker(&s, "w", &["--no-wait"], script)));
    assert_eq!(code, Some(8), "a failed node exits 8:\n{err}");
    let n = s.node(&a);
    assert_eq!(n["status"], "failed");
    assert!(n["output"].is_null());
    let note = n["note"].as_str().unwrap();
    assert!(
        note.contains("exited 0")
            && note.contains("output file")
            && note.contains("not valid JSON"),
        "{note}"
    );
    assert!(err.contains("not valid JSON"), "{err}");
}

#[test]
fn an_output_past_64_kib_completes_the_node_failed_with_the_refusal() {
    let s = Store::new();
    let a = s.upsert("writes too much output", &[]);
    let script = r#"printf '"%070000d"' 0 > "$CLAIMDAG_OUTPUT_FILE""#;
    let (code, _, err) = finish(start(worker(&s, "w", &["--no-wait"], script)));
    assert_eq!(code, Some(8), "a failed node exits 8:\n{err}");
    let n = s.node(&a);
    assert_eq!(n["status"], "failed");
    assert!(n["output"].is_null());
    let note = n["note"].as_str().unwrap();
    assert!(
        note.contains("exited 0") && note.contains("was refused") && note.contains("limit"),
        "{note}"
    );
}

#[test]
fn a_cancel_request_from_another_process_stops_the_command() {
    let s = Store::new();
    let a = s.upsert("work nobody needs any more", &[]);
    let script = r#"echo $$ > "$W/pid"
        echo "started" > "$CLAIMDAG_PROGRESS_FILE"
        trap 'echo got-term > "$W/term"; exit 0' TERM
        while :; do sleep 0.05; done"#;
    let opts = ["--ttl", "1s", "--grace", "10s", "--no-wait", "--json"];
    let w = start(worker(&s, "w", &opts, script));
    let pid = read_pid(&s.scratch().join("pid"));
    let began = Instant::now();
    let asked = s.ok(&[
        "cancel",
        &a,
        "--reason",
        "the plan changed",
        "--actor",
        "name:lead",
    ]);
    assert!(asked.contains("cancel requested"), "{asked}");
    let (code, out, err) = finish(w);
    assert_eq!(
        code,
        Some(10),
        "a command stopped on a cancel request exits 10:\n{err}"
    );
    assert!(
        began.elapsed() < Duration::from_secs(8),
        "stopped at the next renewal, not after the grace"
    );
    assert!(gone(pid), "the command is gone");
    wait_for(&s.scratch().join("term"));
    assert!(
        err.contains("cancel requested by") && err.contains("the plan changed"),
        "{err}"
    );
    let line: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(line["outcome"], "cancelled");
    let n = s.node(&a);
    assert_eq!(
        (n["status"].as_str(), n["generation"].as_u64()),
        (Some("cancelled"), Some(2)),
        "completed cancelled at the granted generation: {n}"
    );
    assert!(n["cancel_requested"].is_null());
    assert_eq!(n["progress"], "started");
    let verbs: Vec<Value> = events(&s, &a).iter().map(|e| e["verb"].clone()).collect();
    assert!(verbs.contains(&json!("cancel_request")), "{verbs:?}");
}

#[test]
fn a_command_that_ignores_term_is_killed_after_the_grace_on_a_cancel() {
    let s = Store::new();
    let a = s.upsert("ignores TERM", &[]);
    let script = r#"trap "" TERM; echo $$ > "$W/pid"; while :; do sleep 0.05; done"#;
    let opts = ["--ttl", "1s", "--grace", "500ms", "--no-wait"];
    let w = start(worker(&s, "w", &opts, script));
    let pid = read_pid(&s.scratch().join("pid"));
    s.ok(&["cancel", &a]);
    let (code, _, err) = finish(w);
    assert_eq!(code, Some(10), "{err}");
    assert!(!alive(pid), "process {pid} outlived the worker:\n{err}");
    assert!(err.contains("(signal 9)"), "killed, not exited:\n{err}");
    assert_eq!(s.node(&a)["status"], "cancelled");
}
