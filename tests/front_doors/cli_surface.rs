//! The command line as a user meets it: node arguments in every accepted form, summaries
//! that stay on one `list` line, `list` filters, `--json` on every verb and `--help` with an
//! example on every verb.

use crate::common::{self, actor, is_id, short, Store};
use serde_json::Value;

/// The verbs `claimdag --help` lists (without clap's own `help`).
fn listed_verbs() -> Vec<String> {
    let out = common::command().arg("--help").output().expect("run");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let start = text
        .find("Commands:")
        .unwrap_or_else(|| panic!("no Commands: in --help:\n{text}"));
    let verbs: Vec<String> = text[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|v| *v != "help")
        .map(str::to_string)
        .collect();
    assert!(
        verbs.len() >= 10,
        "too few verbs parsed from --help: {verbs:?}"
    );
    verbs
}

#[test]
fn help_on_every_verb_exits_0_with_an_example() {
    let mut verbs = listed_verbs();
    verbs.push("get".into());
    let mut bad = Vec::new();
    for v in &verbs {
        let out = common::command()
            .args([v.as_str(), "--help"])
            .output()
            .expect("run");
        let text = String::from_utf8_lossy(&out.stdout);
        if out.status.code() != Some(0) {
            bad.push(format!("{v}: exit {:?}", out.status.code()));
        } else if !text.contains("Example") {
            bad.push(format!("{v}: no example in --help"));
        } else if !text.contains(&format!("claimdag {}", if v == "get" { "show" } else { v })) {
            bad.push(format!("{v}: the example does not run `claimdag {v}`"));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
    let out = common::command().arg("--help").output().expect("run");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Example"));
}

/// A verb's `--help` and `-h` open with the description `claimdag --help` lists for it
/// (each process adds only the arguments of the verb it runs, after the list's
/// descriptions: the arguments' own documentation must not take their place).
#[test]
fn every_verb_help_opens_with_its_listed_description() {
    let out = common::command().arg("--help").output().expect("run");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut bad = Vec::new();
    for v in listed_verbs() {
        // The listed description: the text after the verb on its line and the lines
        // indented under it, joined (clap wraps it to the terminal's width).
        let mut lines = text
            .lines()
            .skip_while(|l| l.split_whitespace().next() != Some(&v));
        let first = lines.next().expect("the verb's line");
        let mut listed = first.trim_start()[v.len()..].trim().to_string();
        for l in lines.take_while(|l| l.starts_with("     ")) {
            listed = format!("{listed} {}", l.trim());
        }
        for flag in ["--help", "-h"] {
            let out = common::command().args([&v, flag]).output().expect("run");
            let help = String::from_utf8_lossy(&out.stdout);
            let about: Vec<&str> = help.lines().take_while(|l| !l.is_empty()).collect();
            if about.join(" ") != listed {
                bad.push(format!("{v} {flag}: {about:?}, listed as {listed:?}"));
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn node_arguments_take_a_full_id_a_prefix_or_the_listed_form() {
    let s = Store::new();
    let a = s.upsert("parse the manifest header", &[]);
    let b = s.upsert("reject a manifest with no header", &[]);
    let forms = |id: &str| {
        vec![
            id.to_string(),
            id.to_ascii_uppercase(),
            id[..8].to_string(),
            id[..13].to_string(),
            short(id),
            id[..8].to_ascii_uppercase() + "...",
        ]
    };
    for form in forms(&a) {
        let n = s.json(&["show", &form]);
        assert_eq!(n["id"], a.as_str(), "show {form}");
        assert!(s.ok(&["get", &form]).contains(&a), "get {form}");
    }
    // Every verb that takes a node resolves the listed form.
    s.ok(&["link", &short(&a), &b[..8]]);
    assert_eq!(s.node(&b)["deps"], serde_json::json!([a]));
    s.ok(&["unlink", &a[..8], &short(&b)]);
    s.ok(&["link", &a.to_ascii_uppercase(), &b]);
    let me = actor(7);
    assert_eq!(
        s.ok(&["claim", &short(&a), "--assignee", &me.to_ascii_uppercase()]),
        "gen=2\n"
    );
    assert_eq!(
        s.node(&a)["holder"],
        me.as_str(),
        "actors are stored lower case"
    );
    s.ok(&["renew", &a[..8], "--actor", &me]);
    assert_eq!(
        s.ok(&["complete", &short(&a), "--status", "done", "--gen", "2"]),
        format!("{}  done\n", short(&a))
    );
    assert_eq!(s.ok(&["reopen", &a[..10]]), "gen=3\n");
    assert!(s.ok(&["log", &short(&a)]).contains("reopen"));

    // Too short, not hex, or unknown.
    s.refused(&["show", &a[..7]], 2, "8", "invalid_input");
    s.refused(&["show", "zzzzzzzz"], 2, "hex", "invalid_input");
    let unknown = if a.starts_with("00000000") {
        "ffffffff..."
    } else {
        "00000000..."
    };
    if !b.starts_with(&unknown[..8]) {
        s.refused(&["show", unknown], 3, "not found", "not_found");
    }
}

#[test]
fn a_summary_with_a_newline_stays_on_one_list_line() {
    let s = Store::new();
    let a = s.upsert("first line\nsecond line", &[]);
    let b = s.upsert("tab\there\r\nand more", &[]);
    let c = s.upsert("plain", &[]);
    let list = s.ok(&["list"]);
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 3, "{list:?}");
    assert!(lines[0].starts_with(&short(&a)), "{list:?}");
    assert!(lines[0].contains("first line") && lines[0].contains("second line"));
    assert!(lines[1].starts_with(&short(&b)) && lines[1].contains("and more"));
    assert!(lines[2].starts_with(&short(&c)));
    // The stored summary keeps its newline (trimmed only at the ends).
    assert_eq!(s.node(&a)["summary"], "first line\nsecond line");
    // show keeps one field a line too.
    let show = s.ok(&["show", &a]);
    let summary_lines: Vec<&str> = show
        .lines()
        .filter(|l| l.contains("first line") || l.contains("second line"))
        .collect();
    assert_eq!(summary_lines.len(), 1, "{show}");
    // ready and log lines stay single lines as well.
    assert_eq!(s.ok(&["ready"]).lines().count(), 3);
}

#[test]
fn list_pads_the_status_column_and_filters() {
    let s = Store::new();
    let a = s.upsert("will be claimed", &[]);
    let b = s.upsert("will be done", &[]);
    let c = s.upsert("waits", &[]);
    s.ok(&["link", &b, &c]);
    let me = actor(7);
    s.claim(&a, &me, &[]);
    let you = actor(8);
    s.claim(&b, &you, &[]);
    s.ok(&["complete", &b, "--status", "done", "--gen", "2"]);
    assert_eq!(
        s.ok(&["list"]),
        format!(
            "{}  claimed  task  gen=2  holder={me}  will be claimed\n\
             {}  ready    task  gen=1  waits\n",
            short(&a),
            short(&c)
        )
    );
    assert_eq!(
        s.ok(&["list", "--terminal"]),
        format!(
            "{}  claimed  task  gen=2  holder={me}  will be claimed\n\
             {}  done     task  gen=2  will be done\n\
             {}  ready    task  gen=1  waits\n",
            short(&a),
            short(&b),
            short(&c)
        )
    );
    assert_eq!(s.ok(&["list", "--all"]), s.ok(&["list", "--terminal"]));
    assert_eq!(
        s.ok(&["list", "--holder", &me]),
        format!(
            "{}  claimed  task  gen=2  holder={me}  will be claimed\n",
            short(&a)
        )
    );
    assert_eq!(
        s.ok(&["list", "--status", "done"]),
        format!("{}  done  task  gen=2  will be done\n", short(&b))
    );
    s.refused(
        &["list", "--status", "nonsense"],
        2,
        "status",
        "invalid_input",
    );
    // Kinds show in their column (only the status column is padded).
    let d = s.upsert("a bug", &["--kind", "bug"]);
    assert!(s
        .ok(&["list"])
        .contains(&format!("{}  ready    bug  gen=1  a bug", short(&d))));
}

/// Runs one verb with `--json`, asserts success and JSON on stdout.
fn json_of(s: &Store, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let r = s.run(&all);
    assert_eq!(r.code, Some(0), "--json {args:?}: {}", r.stderr);
    assert!(
        r.stdout.ends_with('\n') && r.stdout.trim().lines().count() == 1,
        "--json {args:?} should print one JSON document: {:?}",
        r.stdout
    );
    r.json()
}

/// `watch --json --since 0` replays the history as JSON lines, then prints the next write.
fn watch_in_json(s: &Store) {
    use std::io::BufRead;
    let mut child = s
        .command(&["--json", "watch", "--since", "0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start watch");
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(first["seq"], 1, "{first}");
    let fresh = s.upsert("written while watched", &[]);
    let seen = lines.find_map(|l| {
        let v: Value = serde_json::from_str(&l.unwrap()).unwrap();
        (v["node"] == fresh.as_str()).then_some(v)
    });
    assert_eq!(seen.unwrap()["verb"], "create");
    let _ = child.kill();
    let _ = child.wait();
}

/// `cancel` and `complete-many` in JSON.
fn talk_in_json(s: &Store, me: &str, seen: &mut Vec<&str>) {
    let t = s.upsert("talked about", &[]);
    let c = json_of(s, &["cancel", &t, "--reason", "not needed"]);
    assert_eq!(
        (c["status"].as_str(), c["requested"].as_bool()),
        (Some("cancelled"), Some(false)),
        "{c}"
    );
    seen.push("cancel");
    json_of(s, &["config", "max_held", "0"]);
    let u = s.upsert("finished in a batch", &[]);
    let g = json_of(s, &["claim", &u, "--assignee", me])["generation"].clone();
    let file = s.scratch().join("many.json");
    let many = serde_json::json!([{"node": u, "status": "done", "gen": g}]);
    std::fs::write(&file, many.to_string()).expect("write completions");
    let done = json_of(s, &["complete-many", &file.to_string_lossy()]);
    assert_eq!(done, serde_json::json!([{"id": u, "status": "done"}]));
    seen.push("complete-many");
}

#[test]
fn json_works_on_every_verb() {
    let s = Store::new();
    let me = actor(7);
    let mut seen: Vec<&str> = Vec::new();
    let a = edits_in_json(&s, &mut seen);
    reads_in_json(&s, &a, &mut seen);
    leases_in_json(&s, &a, &me, &mut seen);
    let log = json_of(&s, &["log"]);
    assert!(log.as_array().is_some_and(|l| l.len() >= 8), "{log}");
    seen.push("log");
    let cfg = json_of(&s, &["config"]);
    assert_eq!(cfg["max_held"], 1);
    json_of(&s, &["config", "max_held", "2"]);
    seen.push("config");
    assert_eq!(json_of(&s, &["check"])["ok"], true);
    seen.push("check");

    // Verbs of SPEC section 5 this test knows how to call, when the binary has them.
    let listed = listed_verbs();
    let has = |verb: &str| listed.iter().any(|v| v == verb);
    if has("archive") {
        archive_in_json(&s, has("unarchive"), &mut seen);
    }
    if has("import") {
        let plan = s.scratch().join("plan.json");
        std::fs::write(
            &plan,
            r#"{"nodes": [{"key": "x", "summary": "imported"}, {"key": "y", "summary": "after", "deps": ["x"]}]}"#,
        )
        .expect("write plan");
        json_of(&s, &["import", &plan.to_string_lossy()]);
        seen.push("import");
    }
    if has("graph") {
        json_of(&s, &["graph"]);
        seen.push("graph");
    }
    if has("copy") {
        let to = s.scratch().join("copied");
        let dir = s.dir().to_string_lossy().into_owned();
        let j = json_of(&s, &["copy", "--from", &dir, "--to", &to.to_string_lossy()]);
        assert_eq!(j["archived"], 0, "{j}");
        seen.push("copy");
    }
    if has("actor") {
        let a = json_of(&s, &["actor", "codex-1"]);
        assert!(common::is_id(a["actor"].as_str().unwrap()), "{a}");
        seen.push("actor");
    }
    if has("diff-check") {
        diff_check_in_json(&s, &me);
        seen.push("diff-check");
    }
    if has("watch") {
        watch_in_json(&s);
        seen.push("watch");
    }
    if has("cancel") && has("complete-many") {
        talk_in_json(&s, &me, &mut seen);
    }
    if has("fence-check") {
        let f = s.upsert("fenced", &[]);
        let g = s.claim(&f, &me, &[]).to_string();
        let j = json_of(&s, &["fence-check", &f, &g]);
        assert_eq!(
            (&j["id"], &j["generation"]),
            (&f.as_str().into(), &2.into()),
            "{j}"
        );
        seen.push("fence-check");
    }
    if has("pool") && has("rate") {
        let p = json_of(&s, &["pool", "set", "gpu", "2"]);
        assert_eq!(
            (&p[0]["name"], &p[0]["size"]),
            (&"gpu".into(), &2.into()),
            "{p}"
        );
        assert_eq!(json_of(&s, &["pool", "list"]), p);
        let r = json_of(&s, &["rate", "set", "llm", "60", "1m"]);
        assert_eq!(r[0]["per_ms"], 60_000, "{r}");
        assert_eq!(json_of(&s, &["rate", "list"]), r);
        seen.extend(["pool", "rate"]);
    }
    if has("approve") && has("reject") {
        let gate = s.upsert("sign off", &["--kind", "gate"]);
        let j = json_of(&s, &["approve", &gate, "--gen", "1", "--note", "ok"]);
        assert_eq!(
            (&j["id"], &j["status"]),
            (&gate.as_str().into(), &"done".into()),
            "{j}"
        );
        let g = s.ok(&["reopen", &gate]);
        let g = g.trim().trim_start_matches("gen=");
        let j = json_of(&s, &["reject", &gate, "--gen", g]);
        assert_eq!(j["status"], "failed", "{j}");
        seen.extend(["approve", "reject"]);
    }
    if has("retry") {
        json_of(&s, &["config", "max_attempts", "1"]);
        let n = s.upsert("flaky", &[]);
        let g = s.claim(&n, &me, &[]).to_string();
        s.ok(&["release", &n, "--actor", &me, "--gen", &g]);
        let j = json_of(&s, &["retry", &n, "--gen", "3"]);
        assert_eq!(
            (&j["id"], &j["generation"]),
            (&n.as_str().into(), &4.into()),
            "{j}"
        );
        json_of(&s, &["config", "max_attempts", "none"]);
        seen.push("retry");
    }
    if has("hook") {
        let repo = s.scratch().join("hooked");
        std::fs::create_dir_all(&repo).expect("mkdir");
        let init = std::process::Command::new("git")
            .args(["init", "-q"])
            .arg(&repo)
            .status()
            .expect("git init");
        assert!(init.success());
        let j = json_of(&s, &["hook", "install", "--repo", &repo.to_string_lossy()]);
        let hooks: Vec<&str> = (j.as_array().expect("an array").iter())
            .map(|h| h["hook"].as_str().unwrap())
            .collect();
        assert_eq!(hooks, ["pre-commit", "commit-msg", "pre-push"], "{j}");
        seen.push("hook");
    }
    if has("pending") {
        let j = json_of(&s, &["pending"]);
        assert_eq!(
            (&j["ready"], &j["finished"]),
            (&4.into(), &false.into()),
            "{j}"
        );
        assert_eq!(j["pending"][0]["display"], "claimed", "{j}");
        let j = json_of(&s, &["--workspace", "empty", "pending"]);
        assert_eq!(
            (&j["ready"], &j["finished"], &j["pending"]),
            (&0.into(), &true.into(), &serde_json::json!([])),
            "{j}"
        );
        seen.push("pending");
    }
    if has("where") {
        let j = json_of(&s, &["where"]);
        let dir = s.dir().to_string_lossy().to_string();
        assert_eq!(
            (&j["store"], &j["backend"], &j["chosen_by"], &j["exists"]),
            (
                &dir.into(),
                &"directory".into(),
                &"--dir".into(),
                &true.into()
            ),
            "{j}"
        );
        seen.push("where");
    }
    // Front doors that run rather than answer: tested where they live (test_mcp.py,
    // test_serve.py, the work and pane tests).
    let running = ["mcp", "serve", "work", "pane"];
    let missing: Vec<&String> = listed
        .iter()
        .filter(|v| !seen.contains(&v.as_str()) && !running.contains(&v.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "verbs with no --json case in this test: {missing:?}"
    );
}

/// `upsert`, `link` and `unlink` with `--json`, on a new store: two nodes, the second
/// waiting on the first. Returns the first.
fn edits_in_json(s: &Store, seen: &mut Vec<&str>) -> String {
    let a = json_of(s, &["upsert", "--summary", "parse the manifest header"]);
    let a = a["id"].as_str().expect("upsert --json has id").to_string();
    assert!(is_id(&a));
    let b = json_of(s, &["upsert", "--summary", "reject a manifest"])["id"]
        .as_str()
        .expect("id")
        .to_string();
    seen.push("upsert");
    json_of(s, &["link", &a, &b]);
    seen.push("link");
    json_of(s, &["unlink", &a, &b]);
    seen.push("unlink");
    s.ok(&["link", &a, &b]);
    a
}

/// `list`, `show` (every field), `get`, `next` and `ready` with `--json`; `a` is ready and
/// another node waits on it.
fn reads_in_json(s: &Store, a: &str, seen: &mut Vec<&str>) {
    let list = json_of(s, &["list"]);
    let arr = list.as_array().expect("list --json is an array");
    assert_eq!(arr.len(), 2);
    assert_eq!(arr[0]["display"], "ready");
    assert_eq!(arr[0]["ready"], true);
    assert_eq!(arr[1]["display"], "todo");
    assert_eq!(arr[1]["ready"], false);
    seen.push("list");
    let shown = json_of(s, &["show", a]);
    assert_eq!(shown["id"], a);
    assert_eq!(shown["display"], "ready");
    assert_eq!(shown["generation"], 1);
    for field in [
        "workspace",
        "kind",
        "summary",
        "parent",
        "deps",
        "status",
        "generation",
        "holder",
        "attempts",
        "max_attempts",
        "claimed_at",
        "renewed_at",
        "ttl_ms",
        "role",
        "priority",
        "estimate",
        "labels",
        "resources",
        "ref",
        "note",
        "completed_by",
        "created_at",
        "updated_at",
        "archived",
    ] {
        assert!(
            shown.get(field).is_some(),
            "show --json lacks {field}: {shown}"
        );
    }
    seen.push("show");
    assert_eq!(json_of(s, &["get", a])["id"], a);

    assert_eq!(json_of(s, &["next"])["id"], a);
    seen.push("next");
    let ready = json_of(s, &["ready"]);
    assert_eq!(ready[0]["id"], a);
    seen.push("ready");
}

/// `claim`, `renew`, `release`, `claim-next`, `reclaim`, `complete` and `reopen` of `a`
/// with `--json`, as `me`.
fn leases_in_json(s: &Store, a: &str, me: &str, seen: &mut Vec<&str>) {
    let c = json_of(s, &["claim", a, "--assignee", me]);
    assert_eq!(c["generation"], 2);
    seen.push("claim");
    json_of(s, &["renew", a, "--actor", me]);
    seen.push("renew");
    let r = json_of(s, &["release", a, "--actor", me, "--gen", "2"]);
    assert_eq!(r["generation"], 3);
    seen.push("release");
    let cn = json_of(s, &["claim-next", "--assignee", me]);
    assert_eq!(cn["id"], a);
    assert_eq!(cn["generation"], 4);
    seen.push("claim-next");
    let rc = json_of(s, &["reclaim", "--lease", "0"]);
    assert_eq!(rc, serde_json::json!([{"id": a, "generation": 5}]));
    seen.push("reclaim");
    s.claim(a, me, &[]);
    let done = json_of(s, &["complete", a, "--status", "done", "--gen", "6"]);
    assert_eq!(done["status"], "done");
    seen.push("complete");
    assert_eq!(json_of(s, &["reopen", a])["generation"], 7);
    seen.push("reopen");
}

/// `archive` with `--json` of a finished node, then `unarchive` when the binary has it.
fn archive_in_json(s: &Store, unarchive: bool, seen: &mut Vec<&str>) {
    let z = s.upsert("finished, to archive", &[]);
    s.claim(&z, &actor(9), &[]);
    s.ok(&["complete", &z, "--status", "done", "--gen", "2"]);
    json_of(s, &["archive", &z]);
    seen.push("archive");
    if unarchive {
        json_of(s, &["unarchive", &z]);
        seen.push("unarchive");
    }
}

/// `diff-check --json` in a repository with no commit yet and nothing in it: nothing to
/// cover.
fn diff_check_in_json(s: &Store, me: &str) {
    let repo = s.scratch().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .arg(&repo)
        .status()
        .expect("git init");
    assert!(init.success());
    let repo = repo.to_string_lossy().into_owned();
    let j = json_of(s, &["diff-check", "--repo", &repo, "--actor", me]);
    assert_eq!(j["uncovered"], serde_json::json!([]), "{j}");
}

#[test]
fn next_and_claim_next_print_json_null_and_exit_1_when_nothing_is_ready() {
    let s = Store::new();
    for args in [
        vec!["next"],
        vec![
            "claim-next",
            "--assignee",
            "00000000000000000000000000000007",
        ],
    ] {
        let r = s.run(&args);
        assert_eq!((r.code, r.stdout.as_str()), (Some(1), ""), "{args:?}");
        let mut j = vec!["--json"];
        j.extend_from_slice(&args);
        let r = s.run(&j);
        assert_eq!(r.code, Some(1), "{args:?}");
        assert_eq!(r.json(), Value::Null, "{args:?}");
    }
}

/// A reader that stops reading (`claimdag --json ready | head -c 10`) ends the output, it
/// is not an error: with and without `--json` the command exits 0 and says nothing on
/// stderr (its output, over 64 KiB, cannot all sit in the pipe).
#[test]
fn output_into_a_pipe_whose_reader_left_ends_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let s = Store::new();
    s.import_ok(&serde_json::to_value(common::flat_plan(1000, |i| format!("node {i}"))).unwrap());
    for args in [&["ready"][..], &["--json", "ready"], &["--json", "list"]] {
        let mut child = s
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run");
        let mut out = child.stdout.take().expect("stdout");
        let mut first = [0u8; 10];
        out.read_exact(&mut first).expect("the first bytes");
        drop(out);
        let done = child.wait_with_output().expect("wait");
        assert_eq!(
            (
                done.status.code(),
                String::from_utf8_lossy(&done.stderr).as_ref()
            ),
            (Some(0), ""),
            "{args:?}"
        );
    }
}
